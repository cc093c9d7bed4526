package polite

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// EventKind says what an [Event] reports.
type EventKind string

// The kinds of [Event].
const (
	// EventWait: a request waited for its budget before being sent. Wait is
	// how long it waited and Reason why (what it waited longest for).
	EventWait EventKind = "wait"
	// EventRetry: a refused response will be retried after Wait, for Reason.
	EventRetry EventKind = "retry"
	// EventGiveUp: a refused response goes back to the caller: attempts are
	// spent, the wait is too long, or the request cannot be replayed. Wait
	// is the wait the server asked for, when known.
	EventGiveUp EventKind = "give-up"
	// EventObserve: a response carried rate-limit fields that the budget
	// read. Quotas says how many.
	EventObserve EventKind = "observe"
	// EventStop: the server reported abnormal usage (RFC 9457 problem type
	// abnormal-usage-detected); the response goes back to the caller and
	// the batch that sent it should stop, not retry harder.
	EventStop EventKind = "stop"
	// EventStoreDown: the Budget's Store failed (Err says how); requests go
	// on with a private in-memory state per key, pacing by what this
	// process sees, until the Store answers again. Reported once per
	// failure, not once per request.
	EventStoreDown EventKind = "store-down"
	// EventStoreUp: the Budget's Store answers again after EventStoreDown.
	EventStoreUp EventKind = "store-up"
)

// Event reports one thing a Transport did or learned, to [Transport.OnEvent]
// and [Transport.Logger]. It never carries a partition key, and never a
// key from a custom Transport.Key, which may hold a credential, other than
// as its fingerprint.
type Event struct {
	Kind EventKind
	Time time.Time
	// Key is the budget key: the origin, or, for a key from a custom
	// Transport.Key, its fingerprint ("key-" and 8 hex digits; the same
	// for the same key within one Budget, as in State.Key).
	Key     string
	Request *http.Request // the caller's request; it must not be modified
	Attempt int           // 1 for the first send of a request
	Status  int           // status of the response, when there is one
	Wait    time.Duration // EventWait: time waited; EventRetry, EventGiveUp: time asked for
	Reason  Reason        // why it waits, or waited
	Quotas  int           // EventObserve: how many quotas the response described
	Err     error         // EventStoreDown: the Store's error
}

// emit reports e to OnEvent and Logger, if set.
func (t *Transport) emit(e Event) {
	if t.OnEvent != nil {
		t.OnEvent(e)
	}
	if t.Logger == nil {
		return
	}
	level := slog.LevelDebug
	switch e.Kind {
	case EventGiveUp, EventStop, EventStoreDown, EventAbandoned:
		level = slog.LevelWarn
	case EventRetry, EventStoreUp:
		level = slog.LevelInfo
	}
	ctx := context.Background()
	if e.Request != nil {
		ctx = e.Request.Context()
	}
	if !t.Logger.Enabled(ctx, level) {
		return
	}
	if e.Kind == EventStoreDown || e.Kind == EventStoreUp {
		attrs := []slog.Attr{slog.String("key", e.Key)}
		if e.Err != nil {
			attrs = append(attrs, slog.String("error", e.Err.Error()))
		}
		t.Logger.LogAttrs(ctx, level, "polite: "+string(e.Kind), attrs...)
		return
	}
	t.Logger.LogAttrs(ctx, level, "polite: "+string(e.Kind),
		slog.String("key", e.Key),
		slog.Int("attempt", e.Attempt),
		slog.Int("status", e.Status),
		slog.Duration("wait", e.Wait),
		slog.String("reason", string(e.Reason)),
	)
}
