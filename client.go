package polite

import "net/http"

// Wrap returns a copy of c whose Transport is a polite [Transport] over c's
// own transport (http.DefaultTransport when c's is nil). If c is nil, it
// wraps a copy of [http.DefaultClient]. c itself is not modified. A client
// whose Transport is a polite *Transport already is copied as it is: two
// polite Transports, one over the other, would keep two budgets and send
// a request up to MaxAttempts² times.
//
// Each call makes a new Transport with budgets of its own; clients that must
// pace together should share one Transport, or one [Budget].
func Wrap(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	cc := *c
	if _, ok := c.Transport.(*Transport); !ok {
		cc.Transport = &Transport{Base: c.Transport}
	}
	return &cc
}

// NewClient returns an [http.Client] that sends its requests through t;
// a nil t is a new Transport with every field zero (http.Client would
// otherwise hold a nil *Transport, which panics on the first request).
func NewClient(t *Transport) *http.Client {
	if t == nil {
		t = &Transport{}
	}
	return &http.Client{Transport: t}
}
