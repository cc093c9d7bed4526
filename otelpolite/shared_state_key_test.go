package otelpolite

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// Two instrumented Transports share a Budget: one keyed by origin (the
// default), one whose Key returns the origin too ("http://api.test"), so
// that both use one state, which the custom key marked as custom. Inspect
// of "http://api.test" shows that state by its fingerprint, not by the
// origin the default Transport's events carry. The gauge, once it
// reported a key only from a state shown as its events showed it, dropped
// the default Transport's series while its budget held a quota for it.
func TestGaugeSharedStateKeepsDefaultKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, reader := manualMetrics(t)
		b := &polite.Budget{}
		h := ratelimittest.NewHandler(ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 5, Window: time.Minute}}})
		plain := &polite.Transport{Budget: b, Base: &ratelimittest.Transport{Handler: h}}
		byOrigin := &polite.Transport{Budget: b, Base: &ratelimittest.Transport{Handler: h},
			Key: func(r *http.Request) string { return r.URL.Scheme + "://" + r.URL.Host }}
		m.Instrument(plain)
		m.Instrument(byOrigin)
		for _, tr := range []*polite.Transport{plain, byOrigin} {
			resp, err := (&http.Client{Transport: tr}).Get("http://api.test/x")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		got := ints(t, collect(t, reader)["polite.client.quota.remaining"])
		found := false
		for set := range got {
			found = found || strings.Contains(set, "polite.key=http://api.test,")
		}
		if !found {
			t.Errorf("quota.remaining = %v; want a series for the default Transport's key http://api.test, whose budget holds a quota", got)
		}
	})
}
