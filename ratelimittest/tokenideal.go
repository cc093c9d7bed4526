package ratelimittest

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/politehttp/polite/internal/llmcost"
)

// TokenTask is one request of a workload for a [TokenHandler], as the
// handler charges it.
type TokenTask struct {
	// Input is the request's prompt, in tokens, as estimated from its body.
	Input int64

	// MaxOutput is the request's output bound, in tokens: its max_tokens
	// times its number of choices.
	MaxOutput int64
}

// EstimateTask reports the TokenTask of a request to path with body, as a
// TokenHandler charges it, and whether body is a request of a known API.
func EstimateTask(path, body string) (TokenTask, bool) {
	e, ok := llmcost.String(body, path, llmcost.Limit)
	return TokenTask{Input: e.Input, MaxOutput: e.Output}, ok
}

// The overhead of the single-message bodies of [TokenTask.Body]: a message
// and a request.
const taskOverhead = llmcost.MessageTokens + llmcost.RequestTokens

// Body returns the body of a request for api that a TokenHandler charges
// t: an OpenAI chat completion (for the path /v1/chat/completions) or an
// Anthropic message (/v1/messages) with one user message of plain text and
// max_tokens set to t.MaxOutput. A body's prompt is at least 7 tokens (the
// overhead of a message and a request); a smaller t.Input gives 7. A
// TokenHandler counts no more than the first MiB of a body, so that a
// t.Input above about 262,000 tokens is charged as that MiB: Body writes
// a MiB of text for any such t.Input.
func (t TokenTask) Body(api API) string {
	n := min(max(t.Input-taskOverhead, 0), llmcost.Limit/llmcost.BytesPerToken) * llmcost.BytesPerToken
	var b strings.Builder
	b.Grow(int(n) + 128)
	if api == AnthropicAPI {
		b.WriteString(`{"model":"claude-test","max_tokens":`)
	} else {
		b.WriteString(`{"model":"gpt-test","max_tokens":`)
	}
	b.WriteString(strconv.FormatInt(max(t.MaxOutput, 0), 10))
	b.WriteString(`,"messages":[{"role":"user","content":"`)
	for range n / 4 {
		b.WriteString("abc ")
	}
	b.WriteString(`"}]}`)
	return b.String()
}

// IdealTokens reports how long a perfect client needs to complete tasks, in
// order, against a fresh TokenHandler with cfg, using workers concurrent
// workers.
//
// The perfect client knows the quotas exactly: each worker sends its next
// task the instant every quota has room for it, so it is never refused, and
// the request then takes the configured latency, after which its unproduced
// output tokens are refunded if cfg.Refund says so. The result runs from
// the first send to the end of the last request. IdealTokens simulates the
// handler's token buckets with an explicit clock; it does not sleep. The
// best token throughput is the tokens the tasks use (prompt plus output
// produced) divided by this duration. It is the best time for the tasks
// started in order: a client that starts a smaller task while a larger
// one waits for room may finish slightly sooner.
//
// If workers is less than 1, it is 1. If a task can never be admitted (it
// needs more than a whole quota), IdealTokens returns the largest
// Duration. It panics if cfg is invalid, as [NewTokenHandler] does.
func IdealTokens(cfg TokenConfig, tasks []TokenTask, workers int) time.Duration {
	if len(tasks) == 0 {
		return 0
	}
	h := NewTokenHandler(cfg) // validates and fills in defaults
	cfg = h.cfg
	workers = max(workers, 1)

	origin := time.Unix(0, 0)
	buckets := make([]*tokenBucket, len(h.quotas))
	for i, q := range h.quotas {
		buckets[i] = &tokenBucket{quota: q.quota, window: cfg.Window, last: origin, tokens: q.quota}
	}
	type end struct {
		at     time.Time
		refund int64
	}
	var ends []end // of the requests in flight, by time
	now, last := origin, origin
	free := workers
	for next := 0; next < len(tasks); {
		for len(ends) > 0 && !ends[0].at.After(now) {
			free++
			if cfg.Refund && ends[0].refund > 0 {
				for i, q := range h.quotas {
					if q.enforced && q.refunded() {
						buckets[i].refund(ends[0].at, ends[0].refund)
					}
				}
			}
			ends = ends[1:]
		}
		at, found := time.Time{}, false
		if free > 0 {
			t := tasks[next]
			in, bound := cfg.prompt(max(t.Input, 0)), max(t.MaxOutput, 0)
			wait, ok := time.Duration(0), true
			for i, q := range h.quotas {
				if q.enforced {
					d, k := buckets[i].wait(now, q.charge(in, bound))
					wait, ok = max(wait, d), ok && k
				}
			}
			if ok && wait == 0 {
				for i, q := range h.quotas {
					if q.enforced {
						buckets[i].take(now, q.charge(in, bound))
					}
				}
				out := cfg.produced(bound)
				e := end{at: addTime(now, cfg.latency(out)), refund: bound - out}
				i, _ := slices.BinarySearchFunc(ends, e.at, func(x end, t time.Time) int {
					if x.at.After(t) {
						return 1
					}
					return -1 // after equal instants: first come, first served
				})
				ends = slices.Insert(ends, i, e)
				if e.at.After(last) {
					last = e.at
				}
				next++
				free--
				continue
			}
			if ok {
				at, found = addTime(now, wait), true
			}
		}
		if len(ends) > 0 && (!found || ends[0].at.Before(at)) {
			at, found = ends[0].at, true
		}
		if !found {
			return math.MaxInt64
		}
		now = at
	}
	return last.Sub(origin)
}

// addTime adds d to t, saturating far in the future.
func addTime(t time.Time, d time.Duration) time.Time {
	const far = 1 << 62
	return t.Add(min(d, far))
}
