package polite

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// State is what a budget knows of one key at an instant: why its requests
// wait, and until when. It is a snapshot; it does not change afterwards.
type State struct {
	Key         string    // the budget key: an origin, or what Transport.Key returned
	InFlight    int       // requests sent and not yet answered
	PauseUntil  time.Time // no request starts before this; zero or past when not paused
	PauseReason Reason    // why, while paused
	Probing     bool      // the next request goes alone, and the others wait for its answer

	// Policies are the quotas the server stated, one per policy name,
	// partition and unit.
	Policies []PolicyState

	// Learned is the quota inferred from refusals the headers did not
	// foresee; nil when none was.
	Learned *PolicyState
	// HintsDistrustedUntil is when the origin's rate-limit fields are
	// trusted again, after a refusal while they said quota was left.
	HintsDistrustedUntil time.Time
	// RetriesLeft is the number of retries the origin's retry budget
	// allows now.
	RetriesLeft int
}

// PolicyState is one quota of a [State].
type PolicyState struct {
	Name string // policy name; "" when the dialect names none
	// Partition identifies the partition key (pk) without revealing it:
	// "sha256:" and the first 16 hex digits of its hash; "" when none.
	Partition string
	Unit      string        // "requests", "content-bytes" or "concurrent-requests"
	Quota     int64         // q, or the learned quota; -1 when unknown
	Window    time.Duration // w, or the learned window; 0 when unknown
	Remaining int64         // starts (or bytes) the live observation still allows; -1 when none is live
	ResetAt   time.Time     // end of the live observation's effective window; zero when unknown
	Source    string        // "server", or "refusals" for a learned quota
}

// Inspect reports what b knows of key at now: an origin such as
// "https://api.example" (scheme and host, with the port when the URL had
// one), or what Transport.Key returned. It reports false when b holds no
// state for key, either because no request used it or because it was
// forgotten when idle. Partition keys are reported hashed, never verbatim.
func (b *Budget) Inspect(key string, now time.Time) (State, bool) {
	ms, ok := b.store().(*memStore)
	if !ok {
		return State{}, false
	}
	return ms.inspect(key, now)
}

// Inspect is [Budget.Inspect] on the Transport's budget.
func (t *Transport) Inspect(key string, now time.Time) (State, bool) {
	if t.Budget != nil {
		return t.Budget.Inspect(key, now)
	}
	return t.budget.Inspect(key, now)
}

func (s *memStore) inspect(key string, now time.Time) (State, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.m[originKey{host: key}]
	if scheme, host, found := strings.Cut(key, "://"); found && !ok {
		o, ok = s.m[originKey{scheme: scheme, host: host}]
	}
	if !ok {
		return State{}, false
	}
	st := State{
		Key:                  o.key.String(),
		InFlight:             o.inflight,
		Probing:              o.probing,
		HintsDistrustedUntil: o.learn.distrustUntil,
	}
	if now.Before(o.pauseUntil) {
		st.PauseUntil, st.PauseReason = o.pauseUntil, o.pauseReason
	}
	for _, p := range o.policies {
		st.Policies = append(st.Policies, p.state(o, now, "server"))
	}
	if o.learn.quota != nil {
		ls := o.learn.quota.state(o, now, "refusals")
		st.Learned = &ls
	}
	l := o.learn
	l.refill(now)
	if now.Before(l.noRetryUntil) {
		l.retryTokens = 0
	}
	st.RetriesLeft = int(l.retryTokens)
	return st, true
}

func (p *policy) state(o *origin, now time.Time, source string) PolicyState {
	ps := PolicyState{Name: p.name, Unit: p.unit, Quota: -1, Remaining: -1, Source: source}
	if p.pk != "" {
		sum := sha256.Sum256([]byte(p.pk))
		ps.Partition = "sha256:" + hex.EncodeToString(sum[:8])
	}
	if p.q > 0 {
		ps.Quota, ps.Window = p.q, p.w
	}
	if p.live && (p.deadline.IsZero() || now.Before(p.deadline)) {
		need := int64(1)
		if p.unit == unitBytes {
			need = p.need()
		}
		ps.Remaining = max(0, p.minR-int64(o.inflight)*need)
		ps.ResetAt = p.deadline
	}
	return ps
}
