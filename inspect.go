package polite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// State is what a budget knows of one key at an instant: why its requests
// wait, and until when. It is a snapshot; it does not change afterwards.
type State struct {
	// Key is the budget key: the origin, normalised ("https://api.example",
	// with the port when it is not the scheme's default), or, for a key
	// from a custom Transport.Key, its fingerprint ("key-" and 8 hex
	// digits, the same for the same key within one Budget), never the key
	// itself.
	Key         string
	At          time.Time // the instant the State describes
	InFlight    int       // requests sent and not yet answered (or whose lease has not expired)
	PauseUntil  time.Time // no request starts before this; zero or past when not paused
	PauseReason Reason    // why, while paused
	Probing     bool      // the next request goes alone, and the others wait for its answer

	// Policies are the quotas the server stated, one per policy name,
	// partition and unit: quotas of requests first, then those of what
	// requests cost (tokens and other units; see [State.WaitFor]).
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
	Unit      string        // "requests", "content-bytes", "concurrent-requests", or a unit of what requests cost, such as "tokens"
	Quota     int64         // q, or the learned quota; -1 when unknown
	Window    time.Duration // w, or the learned window; 0 when unknown
	Remaining int64         // starts (or bytes, or tokens) the live observation still allows, less what is reserved; -1 when none is live
	ResetAt   time.Time     // end of the live observation's effective window, or when a quota refilled continuously is whole again; zero when unknown
	Source    string        // "server", or "refusals" for a learned quota

	// Reserved is, for a quota of what requests cost, what the requests
	// granted since its latest observation reserve, in Unit: they may not
	// be counted in it yet.
	Reserved int64
	// Refill is, for a quota of what requests cost that the server
	// replenishes continuously (OpenAI's and Anthropic's), its estimated
	// refill rate in Unit per second; 0 for a quota restored whole at
	// ResetAt, or while the rate is unknown.
	Refill float64
}

// Inspect reports what b knows of key at now. The key is a URL or an
// origin ("https://API.example:443/items" and "https://api.example" name
// the same budget, normalised as a request's key is), or what
// Transport.Key returned. It reports false when b holds no state for key,
// either because no request used it or because it was forgotten when
// idle. Partition keys are reported hashed, and custom keys as their
// fingerprint, never verbatim.
//
// With a Store, Inspect reads the stored state (an Update that changes
// nothing); while the Store fails, it reports what this process saw.
func (b *Budget) Inspect(key string, now time.Time) (State, bool) {
	b.init()
	origin, raw, isOrigin := lookupKey(key)
	if isOrigin {
		if st, ok := b.inspect(origin, now); ok {
			return st, true
		}
		if raw == origin {
			return State{}, false
		}
	}
	return b.inspect(raw, now)
}

func (b *Budget) inspect(k memKey, now time.Time) (State, bool) {
	var (
		v  control.View
		ok bool
	)
	switch {
	case b.mem != nil:
		v, ok = b.mem.view(k, now)
	default:
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		err := b.ext.Update(ctx, k.String(), func(s *KeyState) {
			ok = !s.c.IsZero()
			if ok {
				v = s.c.View(now)
			}
		})
		cancel()
		if err != nil {
			v, ok = b.fallback.view(k, now)
		}
	}
	if !ok {
		return State{}, false
	}
	st := State{
		Key:                  b.display(budgetKey{m: k, custom: v.Custom}),
		At:                   now,
		InFlight:             v.InFlight,
		PauseUntil:           v.PauseUntil,
		PauseReason:          reasonOf(v.PauseReason),
		Probing:              v.Probing,
		HintsDistrustedUntil: v.DistrustUntil,
		RetriesLeft:          v.RetriesLeft,
	}
	for _, p := range v.Policies {
		st.Policies = append(st.Policies, policyState(p))
	}
	if v.Learned != nil {
		ls := policyState(*v.Learned)
		st.Learned = &ls
	}
	return st, true
}

func policyState(p control.PolicyView) PolicyState {
	ps := PolicyState{Name: p.Name, Unit: p.Unit, Quota: p.Quota, Window: p.Window, Remaining: p.Remaining, ResetAt: p.ResetAt, Source: "server",
		Reserved: p.Reserved, Refill: p.Refill}
	if p.Learned {
		ps.Source = "refusals"
	}
	if len(p.Partition) > 0 {
		sum := sha256.Sum256(p.Partition)
		ps.Partition = "sha256:" + hex.EncodeToString(sum[:8])
	}
	return ps
}

// Inspect is [Budget.Inspect] on the Transport's budget.
func (t *Transport) Inspect(key string, now time.Time) (State, bool) {
	return t.budgetOf().Inspect(key, now)
}
