package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A GitHub-style 429 from a server whose clock is truly 15 minutes late:
// its Date 15 minutes behind, its X-RateLimit-Reset 14m30s after that Date
// by its own clock, 30 s before now by the caller's. polite's Transport,
// which knows when it sent the request, reads that reset from the Date
// and pauses the key for the quota, 14m30s. inspect read the header
// without the send time, its reset 0, and said "polite backs off".
func TestInspectLateClockReadsResetFromDate(t *testing.T) {
	now := time.Now()
	h := http.Header{}
	h.Set("Date", now.Add(-15*time.Minute).UTC().Format(http.TimeFormat))
	h.Set("X-RateLimit-Limit", "20")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset", fmt.Sprint(now.Add(-30*time.Second).Unix()))
	srv, st := refusing(t, h)
	if st.PauseReason != polite.ReasonQuota || st.PauseUntil.Sub(st.At) < 14*time.Minute {
		t.Fatalf("polite paused for %q for %v; want the quota's reset read from the Date", st.PauseReason, st.PauseUntil.Sub(st.At))
	}

	rep := inspectJSON(t, srv.URL)
	for _, f := range rep.Findings {
		if strings.Contains(f, "polite backs off") {
			t.Errorf("inspect finding %q, but polite paused the key for the quota's reset for %v (inspect's quotas %s)",
				f, st.PauseUntil.Sub(st.At).Round(time.Second), fmtQuotas(rep.Quotas))
		}
	}
	if len(rep.Quotas) != 1 || rep.Quotas[0].ResetS == nil || *rep.Quotas[0].ResetS < 14*60 {
		t.Errorf("quotas %s; want one whose reset is 14m30s away, read from the Date", fmtQuotas(rep.Quotas))
	}
}

// A server whose clock is right but whose Date lies five hours behind,
// behind a limiter that states its fields as it admits a request, in
// front of a handler of 30 s (an LLM's answer): the request that spends
// the token bucket states its reset 2 s after admission, 28 s past by the
// caller's clock when the answer comes. The Transport that sent it reads
// the reset as due. inspect -cost replayed the answer through a fresh
// Transport after it came, to which the request went 28 s after the
// reset: read from the lying Date, it reported a wait of 5h15m20s. It
// now reads the Transport that sent the request.
func TestInspectCostSlowAnswerLyingDate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))
		var n atomic.Int64
		srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			admitted := time.Now()
			n.Add(1)
			time.Sleep(30 * time.Second)
			h := w.Header()
			h.Set("Date", time.Now().Add(-5*time.Hour).UTC().Format(http.TimeFormat))
			h.Set("Anthropic-Ratelimit-Tokens-Limit", "10000")
			h.Set("Anthropic-Ratelimit-Tokens-Remaining", "0")
			h.Set("Anthropic-Ratelimit-Tokens-Reset", admitted.Add(2*time.Second).UTC().Format(time.RFC3339))
		})
		cost := polite.Cost{Tokens: 10000} // the whole bucket: the wait is the reset
		tr := &polite.Transport{MaxAttempts: 1, Base: &ratelimittest.Transport{Handler: srv}}
		c := &http.Client{Transport: tr}
		resp, err := c.Get("http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		rep := examineCost(tr, "http://api.test/", time.Now(), cost)
		if rep.WaitS == nil {
			t.Fatalf("inspect -cost: no wait (%s)", rep.Error)
		}
		if got := time.Duration(*rep.WaitS * float64(time.Second)); got > time.Second {
			t.Errorf("inspect -cost reports a wait of %v for %v; want none (the reset, stated after the request was sent, is due)", got.Round(time.Second), cost)
		}
	})
}

// The same server refusing with a Retry-After HTTP-date 2 s after it
// admitted the request, the handler taking 90 s: the Transport that sent
// the request reads the date as due, however long the answer took.
// inspect read it without the send time, more than a minute past by now
// and so from the lying Date: a Retry-After of 4h58m32s.
func TestInspectSlowRetryAfterLyingDate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))
		srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			admitted := time.Now()
			time.Sleep(90 * time.Second)
			w.Header().Set("Date", time.Now().Add(-5*time.Hour).UTC().Format(http.TimeFormat))
			w.Header().Set("Retry-After", admitted.Add(2*time.Second).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusTooManyRequests)
		})
		resp, sent, transportWait := giveUpWait(t, srv)
		if transportWait != 0 {
			t.Fatalf("the Transport read the Retry-After as %v; want it due", transportWait)
		}
		rep := examine(resp.StatusCode, resp.Header, nil, nil, sent, time.Now())
		if rep.RetryAfterS == nil || *rep.RetryAfterS != 0 {
			t.Errorf("inspect reads retry_after_s %v; want 0, as the Transport that sent the same request reads it", optSeconds(rep.RetryAfterS))
		}
	})
}

// A server whose clock is truly 15 minutes late answers /new with a 429,
// its Date 15 minutes behind and a Retry-After HTTP-date 14m57s after that
// Date by its own clock: 3 s before the request for /new was sent, by
// ours. A Transport that sends GET /new reads the date from the Date,
// 14m57s. /old redirects to /new after 5 s. inspect /old read the final
// answer by when it sent the first request of the chain, 5 s before the
// one that drew it: no more than 2 s before that, the instant was read
// from now, past: retry_after_s 0. It reads it by when the last went.
// (The test swaps http.DefaultTransport, which inspect sends through, for
// an in-memory one: it must not run in parallel.)
func TestInspectRedirectReadsLastHopSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/old" {
				time.Sleep(5 * time.Second) // a slow hop
				http.Redirect(w, r, "/new", http.StatusFound)
				return
			}
			date := time.Now().Add(-15 * time.Minute).Truncate(time.Second)
			w.Header().Set("Date", date.UTC().Format(http.TimeFormat))
			w.Header().Set("Retry-After", date.Add(14*time.Minute+57*time.Second).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusTooManyRequests)
		})
		saved := http.DefaultTransport
		http.DefaultTransport = &ratelimittest.Transport{Handler: h}
		defer func() { http.DefaultTransport = saved }()

		// What the Transport that sends the final request reads.
		var trWait time.Duration = -1
		tr := &polite.Transport{MaxAttempts: 1, OnEvent: func(e polite.Event) {
			if e.Kind == polite.EventGiveUp {
				trWait = e.Wait
			}
		}}
		req, _ := http.NewRequest("GET", "http://api.test/new", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()

		run := func(args ...string) inspectReport {
			var stdout, stderr bytes.Buffer
			if err := runInspect(t.Context(), append([]string{"-json", "-timeout", "1m"}, args...), &stdout, &stderr); err != nil {
				t.Fatalf("runInspect(%q) = %v\n%s", args, err, stderr.String())
			}
			var rep inspectReport
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			return rep
		}
		direct := run("http://api.test/new")
		redirected := run("http://api.test/old")
		t.Logf("Transport (GET /new) reads %v; inspect /new retry_after_s %v; inspect /old retry_after_s %v",
			trWait, optSeconds(direct.RetryAfterS), optSeconds(redirected.RetryAfterS))
		if redirected.RetryAfterS == nil || time.Duration(*redirected.RetryAfterS*float64(time.Second)) != trWait {
			t.Errorf("inspect /old (redirected to /new after 5 s) retry_after_s %v; want %v, as the Transport that sent GET /new reads it (inspect /new: %v)",
				optSeconds(redirected.RetryAfterS), trWait, optSeconds(direct.RetryAfterS))
		}
	})
}

// A server whose clock is 10m0.5s late (its Date, whole seconds, 600 s
// behind by Unix seconds, 600.5 s exactly) refuses with a Retry-After
// HTTP-date 9m30s after its Date: 30.5 s before the request was sent by
// ours. The Transport holds a Retry-After date to the exact line (offWait)
// and reads it by the send time, from the Date: 9m30s. inspect held it to
// whole seconds, as parse's resets are: 600 > 600 is false, and the date,
// read without the send time, was due: 0.
func TestInspectRetryAfterExactLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 10, 0, 500_000_000, time.UTC)))
		srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			date := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			w.Header().Set("Date", date.Format(http.TimeFormat))
			w.Header().Set("Retry-After", date.Add(9*time.Minute+30*time.Second).Format(http.TimeFormat))
			w.WriteHeader(http.StatusTooManyRequests)
		})
		resp, sent, trWait := giveUpWait(t, srv)
		rep := examine(resp.StatusCode, resp.Header, nil, nil, sent, time.Now())
		if rep.RetryAfterS == nil || time.Duration(*rep.RetryAfterS*float64(time.Second)) != trWait {
			t.Errorf("inspect retry_after_s %v; want %v, as the Transport that sent the same request reads it", optSeconds(rep.RetryAfterS), trWait)
		}
	})
}

// giveUpWait sends one request to srv through a polite Transport of one
// attempt, and returns its answer (its body closed), when it was sent,
// and the wait the Transport read in it: its EventGiveUp's, -1 if none.
func giveUpWait(t *testing.T, srv http.Handler) (*http.Response, time.Time, time.Duration) {
	t.Helper()
	wait := time.Duration(-1)
	tr := &polite.Transport{MaxAttempts: 1, Base: &ratelimittest.Transport{Handler: srv},
		OnEvent: func(e polite.Event) {
			if e.Kind == polite.EventGiveUp {
				wait = e.Wait
			}
		}}
	req, _ := http.NewRequest("GET", "http://api.test/", nil)
	sent := time.Now()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp, sent, wait
}
