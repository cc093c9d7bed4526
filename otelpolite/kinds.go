package otelpolite

import "github.com/politehttp/polite"

// counters selects the counters an event adds one to.
type counters uint8

const (
	countRefusal counters = 1 << iota
	countRetry
	countGiveUp
	countStop
	countLocalRefusal
)

// attrBits selects the attributes an event's measurement carries, beyond
// server.address, server.port and http.request.method, which every
// measurement of an event with a request carries.
type attrBits uint8

const (
	attrKind   attrBits = 1 << iota // polite.event.kind
	attrStatus                      // http.response.status_code, when the event has one
	attrReason                      // polite.reason, when the event has one
)

// rule says what one kind of event records.
type rule struct {
	counters counters // added one to, with attrs
	attrs    attrBits
	wait     bool // Event.Wait goes in the wait histogram, by reason
}

// rules maps each kind of event to what it records; the package
// documentation shows the same table. A kind missing here is still counted
// in polite.client.events under its own name, so that a kind added to
// polite shows up before it gets a row.
var rules = map[polite.EventKind]rule{
	polite.EventWait:    {wait: true},
	polite.EventObserve: {},
	polite.EventRetry:   {counters: countRefusal | countRetry, attrs: attrStatus | attrReason},
	polite.EventGiveUp:  {counters: countRefusal | countGiveUp, attrs: attrStatus | attrReason},
	polite.EventStop:    {counters: countRefusal | countStop, attrs: attrStatus | attrReason},
	kindLocalRefusal:    {counters: countLocalRefusal, attrs: attrReason},
}

// kindLocalRefusal is the kind of the event polite emits when a request is
// not sent because of a *polite.WaitError.
const kindLocalRefusal = polite.EventWaitError
