// Package redisstore keeps polite budgets in Redis, so that several
// processes (pods, workers, machines) that talk to the same APIs pace
// together, as one client: a quota one of them reads, a Retry-After one of
// them is told, a slot one of them holds count for all.
//
// Plug a [Store] into every process's [polite.Budget]:
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", ContextTimeoutEnabled: true})
//	store := redisstore.New(rdb, "myapp:polite:")
//	defer store.Close()
//	client := &http.Client{Transport: &polite.Transport{
//		Budget: &polite.Budget{Store: store},
//	}}
//
// Processes that use the same Redis and the same prefix share budgets. A
// single Redis (or a Redis-compatible server such as Valkey), a failover
// client or Redis Cluster works, through any [redis.UniversalClient] but a
// [redis.Ring].
//
// # One algorithm
//
// Every pacing rule runs in Go, in the Budget's controller, the same code
// as with budgets in memory. Redis keeps each budget key's state as bytes
// ([polite.KeyState]'s binary form) with a version, and a Lua script swaps
// it only if the version is the one read (compare-and-swap): the script
// compares versions, and knows nothing of pacing. A swap that finds a newer
// version returns it, so that the retry needs no read of its own.
//
// # Round trips
//
// A request costs two Redis round trips: one update to start it, one to end
// it. The Store remembers the last state it saw of each key (at most
// MaxKeys), and every write is published with its state to the other
// processes using the key, so an update normally swaps at once; when
// another process wrote in between and its notification has not arrived
// yet, the failed swap costs one more round trip. Updates of one key made
// at the same time in one process go to Redis together, in one swap, so
// under load a request costs less than two. A request held back (by a
// pause, a pace or a concurrency limit) costs one more update each time it
// wakes to look again, and one when it leaves the line it waited in: under
// steady pacing, with many workers held, that comes to about 40 updates a
// request, most of them batched into fewer swaps (11,576 to 12,939 updates
// in 3,537 to 4,045 swaps, 12.6 to 14.4 Redis commands a request, over five
// runs of 300 requests in the paced run of cmd/politedemo, `go -C
// redisstore run ./cmd/politedemo pace`: 3 processes of 16 workers).
//
// # Waiting across processes
//
// A request held until another one ends waits for a notification: the
// swap that makes the key's generation grow publishes it on the prefix's
// channel (in the same round trip), and every Store listens there on one
// connection, so a waiter in another process wakes within a millisecond
// or two on a local network. Nothing polls while Redis answers. A key
// that starts over (past its expiry, or lost in Redis: flushed, evicted,
// a restart with no data) wakes its waiters when it is made again, even
// at the generation they wait on: a state carries the identity of its
// incarnation, which a notification's state shows (one past 4 KiB, sent
// without it, shows it to the next swap or read of the key). The first
// swap of this process to find the key so moves its generation one past
// the one it started over at, so that a Wait that got that number from
// the state before, called after the swap, still finds it changed.
//
// # Leases
//
// A request in flight holds a lease in the shared state, which ends when
// the request does, or at the latest Budget.Lease after it started (or at
// its context's deadline, if sooner), plus up to a sixteenth of
// Budget.Lease. So a process killed with requests in flight holds their
// slots that long at most; set Budget.Lease to a little more than your
// slowest request.
//
// # Expiry and size
//
// A key is kept in Redis until its state's expiry (the Budget's IdleTTL
// after its last request, not before its last lease ends, nor before a
// stated window holds its starts) plus ExpiryMargin, so Redis does not
// grow without bound. A state is about 150 to 250 bytes for an origin that
// states one quota, with requests in flight; the controller bounds every
// state (8 policies with names and partition keys of 128 bytes, start logs
// of 194 entries, 34 lease slots, cost quotas): such a state at its
// largest is about 30 KB, 37 KB with cost quotas (TestBinaryBounded and
// TestBinaryBoundedCosts in internal/control), and none above 64 KiB is
// ever read. Beside the state, a key keeps the tokens of its last 32 writes
// and the numbers of its releases (below: about 300 bytes for each of up to
// 13 Stores, 8 KiB at most). A state above 4 KiB is not sent with
// notifications; the processes that need it read it. Redis key names are a hash of the budget key: a key
// made from a credential never appears in Redis.
//
// # When Redis fails
//
// Each Redis call a request makes is bounded by Timeout (250 ms by default;
// create the client with ContextTimeoutEnabled for this to hold). When an
// update fails, the Budget goes on with a budget in this process's memory
// (for every key, a second at a time: see DESIGN.md §3), pacing by what
// this process sees, reports EventStoreDown once, and tries the Store
// again a second later, reporting EventStoreUp when it answers: no request
// fails because Redis is down, nor waits past its context by more than one
// Timeout (an update whose swap was sent waits for its outcome, so that a
// lease it took is never kept in Redis without its request knowing; see
// Store.Update), but a release Redis does not answer, which is sent again
// for up to 10 seconds (below). Updates of a key queued behind a swap Redis did not
// answer go in one swap, but those that take a lease, which fail at once,
// as long as the last swap of the key went unanswered less than a Timeout
// before. A swap that takes a lease and that Redis runs after its
// Timeout, or after the client's ReadTimeout if sooner, busy with
// something else until then, changes nothing: it is
// sent with the instant its caller gives up, on the server's clock as the
// swaps of the key measured it, which the script compares with that clock.
// Each swap bounds how far the server's clock is ahead by its clock (the
// script returns it) less the instant the swap was sent, a bound that
// includes the time the swap waited behind a busy Redis, and so does each
// read of the key (a Wait's, when this process does not hold the key):
// the least of the bounds of the key's recent swaps and reads (over the
// last one to two minutes of its use) is kept, so that a swap slowed by a
// busy Redis, within its Timeout, does not make the next swaps' limits
// late by as much. A swap whose reply shows the server's clock further
// ahead than that (it moved, or this process's did) starts the measure
// over, as does one refused as late though answered in time. This needs
// a client created with ContextTimeoutEnabled (otherwise the Store waits
// for the reply, and the swap goes through), and a swap or read of the key
// made before by this process. A key that fell out of the Store (more
// than MaxKeys others used since) is measured again by its next read, or
// by its next swap, which expects no key and, Redis holding one, takes no
// lease. The first swap of a key Redis does not hold (new, or lost) that
// this process has not measured since it last held it may still take its
// lease late, which then ends with Budget.Lease. So may a swap Redis runs
// within a millisecond after its caller gave up (the limit's margin), or
// in time but whose reply comes back late (a slow network on the way
// back): its caller is told the update failed while Redis keeps its
// lease, until Budget.Lease. A release is never refused so: late, it
// still frees its slot (or, for a response whose body streams, applies
// what its headers said), and it is never swapped with an update that
// takes a lease (such a batch is split). A release whose swap Redis does
// not answer within Timeout (paused, busy or unreachable), or answers that
// it is busy with a script or loading its data, or refuses the connection
// (it ran nothing), is sent again,
// apart, under its number (below), until Redis answers, 10 seconds pass or
// the Store closes, and runs once, late or not. Its caller waits for the
// outcome as its context allows (10 seconds for a Budget's); the updates
// batched with it that release nothing fail as the swap did, and the other
// updates of its key go on. Told the key changed since, or that another
// Store has its turn, it runs again on the key as Redis holds it, under
// the same number, which a late run of its first send would find: only
// the updates that release a request run again, those whose callers still
// wait, and should they take a lease (only a swap with a limit may), it
// gives up. Failed at its Timeout, a release left its lease in Redis until
// Budget.Lease: after a pause of 2 s, four such leases held a key whose
// quota was far from spent to a request every 3 s in every process (six
// requests took 15 s); two processes of 8 workers each, after a pause of
// 3 s, sent 0 to 15 requests in the 2 s from a second after it, 16
// leases held (now 1,401 to 1,490, none held).
//
// Every swap sent with no limit carries a number of its Store's, the same
// however often it is sent. The key keeps, beside its state, the last 32
// numbers of each Store that wrote it within the last minute and the
// largest it dropped to keep no more (13 Stores at most; the instant one
// was dropped for room is kept too): a swap sent again whose number is
// there ran already, and changes nothing; one whose number is at or below
// the largest dropped, or sent again within a minute of a Store's numbers
// being dropped, cannot be told, changes nothing, and its release fails
// as before (its lease, if it never ran, stays until it ends: only after
// 32 later swaps of its own Store to the key, or with more than 13 Stores
// writing it in a minute). A key deleted (its state back to zero) or lost
// in Redis loses its numbers with its leases: a release sent again then
// runs on the key as made since, another incarnation, and frees none of
// its requests' slots.
//
// A client may send a command again when its connection fails after the
// command was written (go-redis does, up to MaxRetries): a swap whose
// reply was lost so runs twice. Each write leaves a token of its own in
// the key, which keeps the last 32: a swap that finds its token there
// ran already, changes nothing, and its update is done, applied once (sent
// again after 32 other writes of the key, it is applied again).
//
// # Data no store wrote
//
// Redis may hold what no Store wrote: a hostile or broken process shares
// it, or a Redis went back to older data. A key of another type, a state
// above 64 KiB, a version that is not a canonical integer below 2^53 or
// that is more than an hour past the server's clock, a turn queue that is
// malformed (past 4 KiB, or of names other than a store's 16 hex digits
// one space apart) or whose turn ends in the far future: each makes the key start
// over, as a state that does not decode does; a turn end that is not a
// whole number of microseconds ("nan", say) reads as lapsed. A notification naming a
// version more than an hour past the server's clock (as the key's swaps
// measured it; with no measure, taken to be at most a day ahead of this
// process's) is ignored, and so
// are a state sent with one past 4 KiB (no store sends one) and the
// version of one that names the generation already known, of a state of
// the same identity (it would make waiters deaf to the real changes
// before it); one within the hour that changes the generation, or names
// it for a state of another identity, wakes waiters, and is undone by the
// next swap or read of the key, which sets what Redis holds. A state sent
// with a notification is kept, for the next swap to start from, only if
// it is of the generation the notification names and was not written
// before the one this process holds (of the same identity, a lower
// generation, or the same and fewer grants): a replay of a notification
// older than what this process holds is not taken for the key's state.
// Notifications carry no proof of who sent them, and a state that passes
// (a replay of the state this process holds, sent with a later version,
// or one a publisher made to pass) is written back by that swap, as one
// set in Redis would be: whoever may publish on the channel is trusted as
// one who may write the keys. After Redis went back to older data, a
// process may hold a state written after what Redis holds; the states
// notified are then not kept until its next swap, which fails once and
// reads the key. A Redis whose clock steps back by more than an hour
// loses its states so, as after a restart with no data.
//
// # Redis Cluster
//
// All of a budget key's data is one Redis key, named with a hash tag
// (prefix{hash}), so every script touches one slot. Notifications use
// classic pub/sub, which a cluster delivers to subscribers on every node.
package redisstore
