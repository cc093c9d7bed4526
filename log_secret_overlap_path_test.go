package polite_test

import (
	"net/http"
	"path"
	"strconv"
	"strings"
	"testing"
)

// The secrets of Base's text were found one non-overlapping occurrence
// after another: a path that ends in '/' overlaps itself where the text
// holds it twice sharing that '/' (a Base that joins the path to an
// upstream base URL that already holds it: "https://api.example/v1/x/" +
// "v1/x/"), and its second occurrence, skipped as overlapping the first,
// was logged with Transport.Key set.
func TestLogHidesSelfOverlappingPath(t *testing.T) {
	for _, tc := range []struct {
		name, url, rest string
		key             func(*http.Request) string
	}{
		{
			// A budget per endpoint: host and cleaned path.
			name: "endpoint key",
			url:  "https://api.example/v1/patients/mrn-4411/",
			rest: "patients/mrn-4411",
			key:  func(r *http.Request) string { return r.URL.Host + path.Clean(r.URL.Path) },
		},
		{
			// The shape Budget.Inspect documents: origin and first segment.
			name: "origin and tenant key",
			url:  "https://api.example/tenant-acme/",
			rest: "tenant-acme",
			key: func(r *http.Request) string {
				return r.URL.Scheme + "://" + r.URL.Host + "/" + strings.Split(r.URL.Path, "/")[1]
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs, errs := loggedWithKey(t, tc.url, nil, tc.key,
				func(r *http.Request) string {
					// Joined against a base that already holds the path.
					return "Get " + strconv.Quote("https://api.example"+r.URL.Path+r.URL.Path[1:])
				})
			shows(t, logs, errs, tc.rest, "the request's path (Transport.Key is set)")
		})
	}
}
