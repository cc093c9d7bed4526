package polite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// State is what a budget knows of one key at an instant: why its requests
// wait, and until when. It is a snapshot; it does not change afterwards.
//
// It marshals to JSON with snake_case names, durations in seconds (a
// number, in a name ending in "_s"; "refill_per_s" is a rate, units a
// second), instants in RFC 3339 in UTC, and unset values (a zero time, an
// unknown quota, "") left out. A policy of a cost unit adds "reserved",
// "refill_per_s", "stated_at" and "accepted" (PolicyState's Reserved,
// Refill, Stated and Accepted):
//
//	{"key":"https://api.example","at":"2026-01-02T15:04:00Z","in_flight":1,"pause_until":"2026-01-02T15:04:05.5Z",
//	 "pause_reason":"retry-after","probing":true,"policies":[{"name":"default",
//	 "unit":"requests","quota":100,"window_s":60,"remaining":0,
//	 "reset_at":"2026-01-02T15:04:30Z","source":"server"}],"retries_left":2}
type State struct {
	// Key is the budget key: the origin, normalised ("https://api.example",
	// with the port when it is not the scheme's default), or, for a key
	// from a custom Transport.Key, its fingerprint ("key-" and 8 hex
	// digits, the same for the same key within one Budget), never the key
	// itself.
	Key         string
	At          time.Time // the instant the State describes
	InFlight    int       // requests sent and not yet answered, or whose body still streams (until their lease expires)
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

	nextStart time.Time // the earliest start the key's paces allow; zero when none holds one back (see acceptsAt)
}

// PolicyState is one quota of a [State].
type PolicyState struct {
	// Name is the policy's name; "" when the dialect names none. One
	// longer than 128 bytes is kept as its first 111, "~" and 16 hex
	// digits of its SHA-256 hash, so that two long names stay apart.
	Name string
	// Partition identifies the partition key (pk) without revealing it:
	// "sha256:" and the first 16 hex digits of its hash (for a pk longer
	// than 128 bytes, which a key keeps as its SHA-256 digest, of that
	// digest's hash); "" when none. The
	// hash is not keyed (the same in every process): a pk drawn from a
	// small set, such as an IP address, is found by hashing each one
	// (SECURITY.md).
	Partition string
	Unit      string        // "requests", "content-bytes", "concurrent-requests", or a unit of what requests cost, such as "tokens"
	Quota     int64         // q (or a dialect's limit; one beyond 2^52 is read as 2^52), or the learned quota; -1 when unknown, or stated as 0, which paces nothing (the server's refusals pause the key)
	Window    time.Duration // w, or the learned window, with Quota; 0 when unknown, as for dialects that state a limit without its window
	Remaining int64         // starts (or bytes, or tokens) the live observation still allows, less what is reserved; -1 when none is live
	// ResetAt is the end of the live observation's effective window, or
	// when a quota of what requests cost, refilled continuously, is whole
	// again; zero when unknown, and for a quota of requests refilled
	// continuously (OpenAI's, Anthropic's) while requests are left: its
	// stated time until whole is not kept, since what is left only grows
	// until the next answer (spent, it is: the key pauses until then).
	// For a quota of what requests cost whose refill rate is not known
	// (its limit not stated), once that instant has passed and a request
	// probes it, it is when the next may probe, should the first not
	// have answered (DESIGN.md §10, "Two kinds of reset").
	ResetAt time.Time
	Source  string // "server", or "refusals" for a learned quota

	// Reserved is, for a quota of what requests cost, what the requests
	// granted since its latest observation reserve, in Unit: they may not
	// be counted in it yet.
	Reserved int64
	// Refill is, for a quota of what requests cost that the server
	// replenishes continuously (OpenAI's and Anthropic's), its estimated
	// refill rate in Unit per second; 0 for a quota restored whole at
	// ResetAt, or while the rate is unknown.
	Refill float64
	// Stated is, for a quota of what requests cost, when an answer last
	// stated it. Its Quota fails a request that costs more (with a
	// [*CostError]) only for a minute after, or its Window when longer:
	// the server may have raised it since, and only a request that goes
	// can tell.
	Stated time.Time
	// Accepted is, for a quota of what requests cost, the largest cost in
	// Unit above the limit an answer stated that the server did (a 2xx),
	// since a limit of the unit last changed to one below it, and before a
	// refusal of one so large;
	// 0 when none. A cost above Quota and no larger than Accepted fails no
	// request: it waits for the whole quota, since the server took one so
	// large (a cost estimated from a body may run over what it counts).
	Accepted int64

	scale int64 // what WaitFor adds to a cost in Unit (see control.Need)
	short int64 // what Reserved holds beyond the level, with Remaining 0: WaitFor waits for it too, as the Transport does
}

// stateJSON is the JSON form of a State.
type stateJSON struct {
	Key                  string            `json:"key"`
	At                   time.Time         `json:"at,omitzero"`
	InFlight             int               `json:"in_flight"`
	PauseUntil           time.Time         `json:"pause_until,omitzero"`
	PauseReason          Reason            `json:"pause_reason,omitempty"`
	Probing              bool              `json:"probing"`
	Policies             []json.RawMessage `json:"policies,omitempty"`
	Learned              json.RawMessage   `json:"learned,omitempty"`
	HintsDistrustedUntil time.Time         `json:"hints_distrusted_until,omitzero"`
	RetriesLeft          int               `json:"retries_left"`
}

// MarshalJSON encodes s as the State documentation shows.
func (s State) MarshalJSON() ([]byte, error) {
	out := stateJSON{
		Key:                  s.Key,
		At:                   utc(s.At),
		InFlight:             s.InFlight,
		PauseUntil:           utc(s.PauseUntil),
		PauseReason:          s.PauseReason,
		Probing:              s.Probing,
		HintsDistrustedUntil: utc(s.HintsDistrustedUntil),
		RetriesLeft:          s.RetriesLeft,
	}
	for _, p := range s.Policies {
		b, err := p.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out.Policies = append(out.Policies, b)
	}
	if s.Learned != nil {
		b, err := s.Learned.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out.Learned = b
	}
	return json.Marshal(out)
}

// policyJSON is the JSON form of a PolicyState.
type policyJSON struct {
	Name      string    `json:"name,omitempty"`
	Partition string    `json:"partition,omitempty"`
	Unit      string    `json:"unit,omitempty"`
	Quota     *int64    `json:"quota,omitempty"`
	WindowS   float64   `json:"window_s,omitempty"`
	Remaining *int64    `json:"remaining,omitempty"`
	ResetAt   time.Time `json:"reset_at,omitzero"`
	Source    string    `json:"source,omitempty"`
	Reserved  int64     `json:"reserved,omitempty"`
	Refill    float64   `json:"refill_per_s,omitempty"`
	Stated    time.Time `json:"stated_at,omitzero"`
	Accepted  int64     `json:"accepted,omitempty"`
}

// MarshalJSON encodes p as in the State documentation: Window in seconds
// as window_s, and the values unknown (a Quota or Remaining of -1, a zero
// Window or ResetAt, an empty string) left out.
func (p PolicyState) MarshalJSON() ([]byte, error) {
	out := policyJSON{
		Name:      p.Name,
		Partition: p.Partition,
		Unit:      p.Unit,
		WindowS:   p.Window.Seconds(),
		ResetAt:   utc(p.ResetAt),
		Source:    p.Source,
		Reserved:  p.Reserved,
		Refill:    p.Refill,
		Stated:    utc(p.Stated),
		Accepted:  p.Accepted,
	}
	if p.Quota >= 0 {
		out.Quota = &p.Quota
	}
	if p.Remaining >= 0 {
		out.Remaining = &p.Remaining
	}
	return json.Marshal(out)
}

// utc returns t in UTC, without its monotonic reading; zero stays zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

// acceptsAt returns when the key accepts a request again at the earliest,
// as s says at now: the end of its pause, or of the window of a spent
// quota that paces requests, or the next start its paces allow (a stated
// q per w, Budget.MaxRate); now when none holds it.
func (s State) acceptsAt(now time.Time) time.Time {
	at := now
	if s.PauseUntil.After(at) {
		at = s.PauseUntil
	}
	if s.nextStart.After(at) {
		at = s.nextStart
	}
	for _, p := range s.Policies {
		if (p.Unit == "requests" || p.Unit == "content-bytes") && p.Remaining == 0 && p.ResetAt.After(at) {
			at = p.ResetAt
		}
	}
	return at
}

// heldAt returns when b accepts a request under key again at the earliest,
// as its MemoryStore knows at now (what State.acceptsAt reads), and why;
// zero when nothing holds it, or when a Store keeps b's state: asking it
// would cost a round trip for each hold of a local ceiling.
func (b *Budget) heldAt(key budgetKey, now time.Time) (time.Time, Reason) {
	if b.mem == nil {
		return time.Time{}, ""
	}
	at, why := b.mem.acceptsAt(key.m, now, b.MaxRate > 0, &b.cfg)
	return at, reasonOf(why)
}

// Inspect reports what b knows of key at now. The key is a URL or an
// origin ("https://API.example:443/items" and "https://api.example" name
// the same budget, normalised as a request's key is), or what
// Transport.Key returned; a custom key shaped like a URL
// ("https://api.example/a") is itself when b holds a state for it, and
// only then the origin it names. It reports false when b holds no state for key,
// either because no request used it or because it was forgotten when
// idle. Partition keys are reported hashed, and custom keys as their
// fingerprint, never verbatim. An IPv6 zone is shown unescaped, as in
// "http://[fe80::1%en0]:8080", and read back so; a zone shown beginning
// "25" and longer than it ("%250") reads as a URL writes it (zone 0).
//
// With a Store, Inspect reads the stored state (an Update that changes
// nothing) as the key's next request would find it: bounded as that
// request bounds a state another process wrote (a pause of at most 24
// hours), and paused by what this process learned while the Store failed,
// which that request carries over; while the Store fails, it reports
// what this process saw, and for a second after a call of the Store
// failed (a request's or an Inspect's) it does not ask the Store again,
// as a request would not: a dead Store costs one timeout a second, not
// one each call.
func (b *Budget) Inspect(key string, now time.Time) (State, bool) {
	b.init()
	origin, raw, isOrigin := lookupKey(key)
	if isOrigin {
		if raw != origin {
			if st, ok := b.inspect(raw, now, true, true); ok {
				return st, true // a custom key, verbatim
			}
		}
		return b.inspect(origin, now, false, false)
	}
	// A key that is not an origin in its normal form is no key of a
	// request but a custom one, shown by its fingerprint whether or not
	// its state says so: a state created without the request's mark (in
	// the fallback while a Store fails, or after its entry was dropped
	// while a request was in flight) lacks it.
	return b.inspect(raw, now, true, false)
}

// inspect is Inspect for the state of k, a custom key when custom or when
// its state says so. guess reports that k may be no request's key (a URL
// read as a custom key before its origin is).
func (b *Budget) inspect(k memKey, now time.Time, custom, guess bool) (State, bool) {
	var (
		v  control.View
		ok bool
	)
	switch {
	case b.mem != nil:
		v, ok = b.mem.view(k, now, &b.cfg)
	case !b.useExt(time.Now()):
		// The Store failed a moment ago: what this process saw, as
		// the key's next request would find it.
		v, ok = b.fallback.view(k, now, &b.cfg)
	default:
		// What the key's next request finds: the stored state bounded
		// as it bounds it (another process may have written it), with
		// a pause this process learned while the Store failed, which
		// that request carries over to the Store.
		pu, why, fallbackCustom := b.fallback.learnedAt(k, now)
		custom = custom || fallbackCustom // shown so, whatever the Store holds
		asked := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		err := b.ext.Update(ctx, k.String(), func(s *KeyState) {
			// Judged at now, as MemoryStore judges it: a state a
			// Store would have forgotten by then is none.
			c := &s.c
			// So is one Forget left (see control.State.Blank), which
			// MemoryStore drops.
			if c.Blank() || forgettable(s, control.Instant(now)) {
				c = new(control.State)
			}
			if ok = !c.IsZero() || !pu.IsZero(); ok {
				v = c.BoundView(now, &b.cfg, pu, why)
			}
		})
		if err == nil || !guess || time.Since(asked) >= storeRetry {
			// An answer, or a failure; but for a key no request
			// may use, only a Store slow to fail: an error it
			// answers with at once may be the key's (one too long
			// for it), and says nothing of its health, nor costs
			// the next call anything.
			b.inspected(err)
		}
		cancel()
		if err != nil {
			v, ok = b.fallback.view(k, now, &b.cfg)
		}
	}
	if !ok {
		return State{}, false
	}
	st := State{
		Key:                  b.display(budgetKey{m: k, custom: custom || v.Custom}),
		At:                   now,
		InFlight:             v.InFlight,
		PauseUntil:           v.PauseUntil,
		PauseReason:          reasonOf(v.PauseReason),
		Probing:              v.Probing,
		HintsDistrustedUntil: v.DistrustUntil,
		RetriesLeft:          v.RetriesLeft,
		nextStart:            v.NextStart,
	}
	if b.MaxRate > 0 && v.RateNext.After(st.nextStart) {
		st.nextStart = v.RateNext // Budget.MaxRate's next start: a Budget without one does not wait for it
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
		Reserved: p.Reserved, Refill: p.Refill, Stated: p.Stated, Accepted: p.Accepted, scale: p.Scale, short: p.Short}
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

// Forget is [Budget.Forget] on the Transport's budget: the way to clear a
// key of a Transport whose Budget is nil. It leaves MaxRate and
// MaxConcurrency, which are the Transport's own, as they are.
func (t *Transport) Forget(key string) {
	t.budgetOf().Forget(key)
}
