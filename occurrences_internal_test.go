package polite

import (
	"slices"
	"strings"
	"testing"
)

// TestOccurrences checks that occurrences finds every occurrence of a
// string, those that overlap included, and in linear time: a text that
// repeats the first byte of a string with a border, searched from each
// match's next byte, took the string's length in steps a byte.
func TestOccurrences(t *testing.T) {
	for _, tt := range []struct {
		s, x string
		want []int
	}{
		{"/v1/x//v1/x/", "/v1/x/", []int{0, 6}},
		{"/v1/x/v1/x/", "/v1/x/", []int{0, 5}}, // sharing a '/'
		{"https://a/t/t/", "/t/", []int{9, 11}},
		{"aaaa", "aa", []int{0, 1, 2}},
		{"abcabc", "abc", []int{0, 3}},
		{"abc", "abcd", nil},
		{"abc", "", nil},
	} {
		var got []int
		occurrences(tt.s, tt.x, func(i int) { got = append(got, i) })
		if !slices.Equal(got, tt.want) {
			t.Errorf("occurrences(%q, %q) = %v, want %v", tt.s, tt.x, got, tt.want)
		}
	}
	// 1 MB of 'a' and a string of 10,000 'a's then 'b': linear, about
	// a million steps, where one per byte and per byte of the string
	// would be ten billion.
	s, x := strings.Repeat("a", 1<<20), strings.Repeat("a", 10000)+"b"+strings.Repeat("a", 10000)
	n := 0
	occurrences(s, x, func(int) { n++ })
	if n != 0 {
		t.Errorf("%d occurrences of a string with a 'b' in a text of 'a's", n)
	}
}
