package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/politehttp/polite/ratelimittest"
)

// TestInspectCost checks inspect -cost against an OpenAI-shaped server
// whose token quota is mostly spent: it shows the token quota, its refill,
// and how long a request of the given cost would wait.
func TestInspectCost(t *testing.T) {
	// 6000 tokens a minute: 100 a second.
	srv := ratelimittest.NewTokenServer(ratelimittest.TokenConfig{Requests: 500, Tokens: 6000})
	defer srv.Close()
	body := ratelimittest.TokenTask{Input: 4000, MaxOutput: 1000}.Body(ratelimittest.OpenAIAPI)
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	url := srv.URL + "/v1/chat/completions"
	rep := inspectJSON(t, url, "-cost", "input-tokens=1500,output-tokens=500")
	c := rep.Cost
	if c == nil || c.Cost != "tokens=2000 input-tokens=1500 output-tokens=500" || len(c.Quotas) != 1 {
		t.Fatalf("cost = %+v", c)
	}
	q := c.Quotas[0]
	if q.Unit != "tokens" || q.Limit == nil || *q.Limit != 6000 || q.RefillPS == nil || *q.RefillPS > 100 || *q.RefillPS < 90 {
		t.Errorf("quota = %+v, want 6000 tokens refilling about 100 a second", q)
	}
	// About 1000 tokens left: the request lacks about 1000, 10 s.
	if c.WaitS == nil || *c.WaitS < 9 || *c.WaitS > 11.5 {
		t.Errorf("wait_s = %v, want about 10", c.WaitS)
	}

	rep = inspectJSON(t, url, "-cost", "tokens=7000")
	if rep.Cost == nil || rep.Cost.WaitS != nil || !strings.Contains(rep.Cost.Error, "never start") {
		t.Errorf("cost = %+v, want it never to start", rep.Cost)
	}

	var stdout, stderr bytes.Buffer
	if err := runInspect(t.Context(), []string{"-cost", "tokens=2000", url}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if out := stdout.String(); !strings.Contains(out, "a request costing tokens=2000:") || !strings.Contains(out, "waits ") {
		t.Errorf("text output lacks the cost:\n%s", out)
	}
	if err := runInspect(t.Context(), []string{"-cost", "tokens", url}, &stdout, &stderr); err == nil {
		t.Error("-cost tokens accepted")
	}
}
