package control

import (
	"fmt"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// imagesAndEight is an answer stating an images quota (10 a minute, none
// left until t0+50s) and then eight loose quotas of tokens.
func imagesAndEight(at time.Duration) []parse.Quota {
	qs := []parse.Quota{{Policy: "img", Unit: "images", Limit: 10, Window: time.Minute, Remaining: 0, Reset: 50*time.Second - at, Dialect: "ietf"}}
	for i := range 8 {
		qs = append(qs, parse.Quota{Policy: fmt.Sprint("t", i), Unit: "tokens", Limit: 1 << 40, Window: time.Minute, Remaining: 1 << 40, Reset: time.Minute, Dialect: "ietf"})
	}
	return qs
}

// The ninth quota (tokens, declared by the request answered) does not
// take the place of the images quota, live and spent, though no request
// has declared images yet: a request of an image waits (through idle, it
// did, and the image request was sent into none left).
func TestSpentQuotaOfUndeclaredUnitKept(t *testing.T) {
	tok := Cost{Tokens: 100}
	img := Cost{Unit: "images", Amount: 1}
	s1 := time.Second
	var s State
	runFSteps(t, &s, &Config{}, []fstep{
		{0, 'a', "A", tok, nil, ReasonNone},
		{s1, 'r', "A", tok, imagesAndEight(s1), ReasonNone},
		// images has 0 left until +50s: B must wait.
		{2 * s1, 'a', "B", img, nil, ReasonQuota},
	})
}

// With tokens declared too, every answer stating the images quota, spent,
// and eight loose tokens quotas: no image request is granted before the
// images quota renews (evicted, the images quota never got its slot back,
// and every image request went).
func TestSpentQuotaOfUndeclaredUnitStays(t *testing.T) {
	tok := Cost{Tokens: 100}
	img := Cost{Unit: "images", Amount: 1}
	s1 := time.Second
	var s State
	leases := map[string]*Lease{}
	acq := func(name string, at time.Duration, c Cost) bool {
		l := new(Lease)
		l.SetCost(c)
		_, ok := s.Acquire(t0.Add(at), &Config{}, Ask{}, l)
		if ok {
			leases[name] = l
		}
		return ok
	}
	rel := func(name string, at time.Duration) {
		s.Release(t0.Add(at), &Config{}, leases[name], &Outcome{First: true, Served: true, Bytes: -1, Quotas: imagesAndEight(at)})
	}
	acq("A", 0, tok)
	rel("A", s1)
	acq("B", 2*s1, tok)
	rel("B", 3*s1)
	granted := 0
	for i := range 5 {
		at := time.Duration(4+2*i) * s1
		name := fmt.Sprint("I", i)
		if acq(name, at, img) {
			granted++
			rel(name, at+s1)
		}
	}
	var names []string
	for _, q := range s.costs.quotas {
		names = append(names, s.costs.units[q.unit].name+"/"+q.name)
	}
	if granted != 0 {
		t.Errorf("%d of 5 image requests granted (by +13s) while every answer stated the images quota with 0 left until +50s; quotas kept: %v", granted, names)
	}
}

// The only unit the requests cost in: a tight daily tokens quota (50000 a
// day, none left for 20 hours) stated first, then eight loose tokens
// quotas. The request answered declared tokens, so the tight quota stays,
// and the next request waits (its unit read as undeclared on the first
// answer, the tight quota gave way to the ninth, and the next request was
// granted against a spent day).
func TestTightQuotaOfDeclaredUnitKept(t *testing.T) {
	ans := func() []parse.Quota {
		qs := []parse.Quota{{Policy: "day", Unit: "tokens", Limit: 50000, Window: 24 * time.Hour, Remaining: 0, Reset: 20 * time.Hour, Dialect: "ietf"}}
		for i := range 8 {
			qs = append(qs, parse.Quota{Policy: fmt.Sprint("t", i), Unit: "tokens", Limit: 1 << 40, Window: time.Minute, Remaining: 1 << 40, Reset: time.Minute, Dialect: "ietf"})
		}
		return qs
	}
	tok := Cost{Tokens: 20000}
	s1 := time.Second
	var s State
	runFSteps(t, &s, &Config{}, []fstep{
		{0, 'a', "A", tok, nil, ReasonNone},
		{s1, 'r', "A", tok, ans(), ReasonNone},
		// the day is spent for 20 hours: B must wait.
		{2 * s1, 'a', "B", tok, nil, ReasonQuota},
	})
}
