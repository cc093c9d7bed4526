package polite

import "fmt"

// This file keeps fmt from printing what a Transport, a Budget or a
// MemoryStore holds: their maps are keyed by the keys they pace, and a key
// from a custom Transport.Key may hold a credential, which polite shows
// only as its fingerprint; a Budget holds the secret of its fingerprints,
// and a Transport the field values its servers sent lately. Each prints
// its settings instead, for every verb, as KeyState does. A value of one
// (in a struct of the caller's) has no Format method, and fmt prints its
// fields: what they hold sits behind pointers, which fmt prints as
// addresses.

// Format writes t as its settings, for every verb (%v, %+v, %#v, ...): t
// keeps the keys it paced, and a key from a custom Key may hold a
// credential (see Transport.Key). Base and Budget are shown by their type
// alone, Key and Cost by whether they are set, and OnEvent and Logger not
// at all.
func (t *Transport) Format(f fmt.State, verb rune) {
	if t == nil {
		fmt.Fprint(f, "(*polite.Transport)(nil)")
		return
	}
	fmt.Fprintf(f, "&polite.Transport{Base: %s, Budget: %s, Key: %t, MaxWait: %s, MaxAttempts: %d, MaxRate: %g, MaxConcurrency: %d, Robots: %t, Restraint: %t, RetryTransient: %t, Cost: %t}",
		typeName(t.Base), budgetName(t.Budget), t.Key != nil, t.MaxWait, t.MaxAttempts, t.MaxRate, t.MaxConcurrency,
		t.Robots != nil, t.Restraint != nil, t.RetryTransient, t.Cost != nil)
}

// Format writes b as its settings, for every verb (%v, %+v, %#v, ...): b
// keeps the keys it paced, and the secret of their fingerprints (see
// Transport.Key). Store is shown by its type alone.
func (b *Budget) Format(f fmt.State, verb rune) {
	if b == nil {
		fmt.Fprint(f, "(*polite.Budget)(nil)")
		return
	}
	fmt.Fprintf(f, "&polite.Budget{MaxKeys: %d, IdleTTL: %s, Store: %s, MaxRate: %g, MaxConcurrency: %d, Lease: %s}",
		b.MaxKeys, b.IdleTTL, typeName(b.Store), b.MaxRate, b.MaxConcurrency, b.Lease)
}

// Format writes s as its MaxKeys and the number of keys it keeps, for
// every verb (%v, %+v, %#v, ...): its states are keyed by the keys they
// pace, and a key from a custom Transport.Key may hold a credential.
func (s *MemoryStore) Format(f fmt.State, verb rune) {
	if s == nil {
		fmt.Fprint(f, "(*polite.MemoryStore)(nil)")
		return
	}
	fmt.Fprintf(f, "&polite.MemoryStore{MaxKeys: %d, Keys: %d}", s.MaxKeys, s.count.Load())
}

// typeName returns the type of v, or "nil".
func typeName(v any) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprintf("%T", v)
}

// budgetName is typeName of b, which is nil when it is a nil *Budget:
// the Transport then has one of its own.
func budgetName(b *Budget) string {
	if b == nil {
		return "nil"
	}
	return "*polite.Budget"
}

// formatError writes an error whose text hides what its fields hold (a
// custom key, Base's error whole: see storeError, baseError), for every
// verb: as its GoString for %#v, as its text otherwise, with the verb's
// flags and width. Without it, a verb no string takes (%d, %t) made fmt
// print the error's fields.
func formatError(f fmt.State, verb rune, text string, gostring func() string) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, gostring())
		return
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), text)
}
