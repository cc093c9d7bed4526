package polite

import (
	"net/url"
	"testing"
)

// A log record shows the path a request sends: an Opaque's, not "/".
func TestLogPathOfOpaque(t *testing.T) {
	for _, c := range []struct {
		u    url.URL
		want string
	}{
		{url.URL{Scheme: "http", Host: "a.test", Opaque: "//a.test/x%2Fy/z"}, "/x%2Fy/z"},
		{url.URL{Scheme: "http", Host: "a.test", Opaque: "http://a.test/x"}, "/x"},
		{url.URL{Scheme: "http", Host: "a.test", Opaque: "//a.test"}, "/"},
		{url.URL{Scheme: "http", Host: "a.test", Path: "/p q"}, "/p%20q"},
	} {
		if got := logPath(&c.u); got != c.want {
			t.Errorf("logPath(%+v) = %q, want %q", c.u, got, c.want)
		}
	}
}
