package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// When an origin asked for a longer wait than get allows, the URL's error
// told the user to "raise Transport.MaxWait" (or to "extend the context's
// deadline"): advice for a program using the library. A user of the
// command has neither; what it controls is -max-wait (or -timeout), which
// the error names now.
func TestGetWaitErrorNamesTheFlags(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	for _, tt := range []struct {
		flags []string
		flag  string
	}{
		{nil, "-max-wait"},
		{[]string{"-timeout", "5s"}, "-timeout"},
	} {
		var stdout, stderr bytes.Buffer
		args := append(append([]string{"-c", "1"}, tt.flags...), srv.URL+"/a", srv.URL+"/b")
		runGet(t.Context(), args, &stdout, &stderr)
		recs := getRecords(t, stderr.String())
		rec, ok := recs[srv.URL+"/b"]
		if !ok || rec.Error == "" {
			t.Fatalf("get %q: /b logged %+v, want a wait error; log:\n%s", args, rec, stderr.String())
		}
		if strings.Contains(rec.Error, "MaxWait") || strings.Contains(rec.Error, "context") || !strings.Contains(rec.Error, tt.flag) {
			t.Errorf("get %q: error %q; want advice that names %s, not the library's fields", args, rec.Error, tt.flag)
		}
	}
}
