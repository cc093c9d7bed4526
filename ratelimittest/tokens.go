package ratelimittest

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/politehttp/polite/internal/llmcost"
)

// API is the shape of the API of a large language model that a
// [TokenHandler] serves: its endpoints, bodies, errors and rate-limit
// fields.
type API string

// The APIs a TokenHandler serves.
const (
	// OpenAIAPI serves OpenAI's chat completions, responses, embeddings and
	// legacy completions, at any path ending in /chat/completions,
	// /responses, /embeddings or /completions, as OpenAI, Azure OpenAI,
	// Groq, OpenRouter, vLLM and Ollama do. Its quotas of requests and
	// tokens are stated on every response with the reset as the time until
	// the quota is whole again, in the format of [time.Duration.String],
	// rounded up to the millisecond:
	//	x-ratelimit-limit-requests: 500
	//	x-ratelimit-remaining-requests: 499
	//	x-ratelimit-reset-requests: 120ms
	//	x-ratelimit-limit-tokens: 30000
	//	x-ratelimit-remaining-tokens: 25870
	//	x-ratelimit-reset-tokens: 8.26s
	// A refusal carries the same fields and an error body of type
	// "requests" or "tokens" with code "rate_limit_exceeded"; it carries
	// retry-after and retry-after-ms only if TokenConfig.RetryAfter is set.
	OpenAIAPI API = "openai"

	// AnthropicAPI serves Anthropic's messages, at any path ending in
	// /messages. Its quotas of requests, input tokens and output tokens are
	// stated on every response with the reset as the RFC 3339 instant the
	// quota is whole again, rounded up to the second; "tokens" states the
	// sum of the input and output quotas (or TokenConfig.Tokens, if set):
	//	anthropic-ratelimit-requests-limit: 50
	//	anthropic-ratelimit-requests-remaining: 49
	//	anthropic-ratelimit-requests-reset: 2025-08-21T12:41:01Z
	//	anthropic-ratelimit-input-tokens-limit: 30000
	//	anthropic-ratelimit-input-tokens-remaining: 29000
	//	anthropic-ratelimit-input-tokens-reset: 2025-08-21T12:41:03Z
	//	anthropic-ratelimit-output-tokens-limit: 8000
	//	anthropic-ratelimit-output-tokens-remaining: 7488
	//	anthropic-ratelimit-output-tokens-reset: 2025-08-21T12:41:04Z
	//	anthropic-ratelimit-tokens-limit: 38000
	//	anthropic-ratelimit-tokens-remaining: 36488
	//	anthropic-ratelimit-tokens-reset: 2025-08-21T12:41:04Z
	// A refusal carries the same fields, retry-after in seconds (none for a
	// request that can never fit) and an error body of type
	// "rate_limit_error".
	AnthropicAPI API = "anthropic"
)

// TokenConfig describes a server shaped like the API of a large language
// model, which limits requests and tokens per minute with token buckets, as
// OpenAI and Anthropic do. The zero TokenConfig is an OpenAI-shaped server
// without limits.
//
// Each request is charged when it arrives: one request, its prompt as
// estimated from its body (or as Prompt counts that estimate), and its
// output bound (max_tokens times the number of choices, or the estimator's
// default when the body sets none). The estimate is the one
// polite.EstimateCost makes, so that a client that estimates alike can pace
// exactly, unless Prompt counts otherwise, as a real tokenizer does. A request is admitted only if every
// quota has room for its charge at once; otherwise it is refused with 429
// and charged nothing. A quota starts full and refills continuously, its
// whole size once per Window.
//
// [NewTokenHandler] copies the TokenConfig: changing it afterwards has no
// effect.
type TokenConfig struct {
	// API is the shape of the server. If empty, it is OpenAIAPI.
	API API

	// Window is the span every quota refills in. If zero, one minute.
	Window time.Duration

	// Requests is the quota of requests per Window. If zero, requests are
	// not limited, and not stated.
	Requests int64

	// Tokens is the quota of tokens (prompt plus output) per Window. If
	// zero, there is none: with OpenAIAPI tokens are then not limited;
	// with AnthropicAPI the tokens fields state the sum of InputTokens and
	// OutputTokens.
	Tokens int64

	// InputTokens and OutputTokens are Anthropic's separate quotas of
	// prompt and output tokens per Window; each is unlimited if zero.
	// NewTokenHandler panics if they are set with OpenAIAPI, which cannot
	// state them.
	InputTokens, OutputTokens int64

	// Latency is how long serving an admitted request takes before its
	// first output token, and TokenLatency how much longer each output
	// token takes. Both pass with the time package's timers, so inside a
	// testing/synctest bubble they are virtual. Refusals answer at once.
	Latency, TokenLatency time.Duration

	// Output, if not nil, gives the output tokens a request produces from
	// its output bound; the result is clamped between 0 and the bound. It
	// must be deterministic and safe for concurrent use. If nil, a request
	// produces half its bound, rounded up.
	Output func(bound int64) int64

	// Refund, if true, gives the output tokens a request did not produce
	// back to the quotas that counted them, when the response is written.
	// Anthropic documents this adjustment for its output quota. If false,
	// a request is charged its whole bound, which a client can foresee.
	Refund bool

	// Prompt, if not nil, gives the prompt tokens the server counts for a
	// prompt that polite.EstimateCost estimates at estimate tokens: a real
	// tokenizer counts otherwise than any estimate made from bytes. It
	// must be deterministic and safe for concurrent use; a negative result
	// counts as zero. If nil, the server counts the estimate.
	Prompt func(estimate int64) int64

	// RetryAfter, if true, adds retry-after (seconds, rounded up) and
	// retry-after-ms to OpenAIAPI refusals, as Azure OpenAI sends them;
	// OpenAI itself often sends neither. AnthropicAPI refusals carry
	// retry-after, unless the request can never fit (it costs more than a
	// whole quota), as Handler sends none when no policy ever will.
	RetryAfter bool

	// RoundRemaining, if positive, states the tokens remaining of every
	// quota of tokens rounded to the nearest multiple of it, halves up, as
	// Anthropic states them to the nearest 1000, and never above the
	// quota's limit. The requests remaining are stated exactly. If zero,
	// every count is stated exactly.
	RoundRemaining int64

	// NoArrivals leaves Stats.Arrivals empty, as Config.NoArrivals does
	// for a Handler: a TokenHandler that serves for long otherwise keeps
	// the arrival time of every request it receives (24 bytes each, and
	// the spare room of the slice that holds them), until Reset.
	NoArrivals bool
}

// TokenStats counts what a [TokenHandler] has seen since it was created or
// last reset. Requests whose body is not one of the API's requests are
// answered 400 (404 for an unknown path) and count in Requests and Status
// only.
type TokenStats struct {
	Stats

	// InputTokens and OutputTokens are the usage of the admitted requests:
	// the prompt tokens charged, and the output tokens produced.
	InputTokens, OutputTokens int64

	// Charged is the tokens charged at admission (prompt plus output
	// bound), before any refund.
	Charged int64
}

// TokenHandler is an [http.Handler] that serves the API of a large language
// model described by a [TokenConfig]: it charges every request its tokens,
// refuses those that do not fit, and answers the others after the
// configured latency with a body of the API's shape whose usage reports
// the tokens charged. It measures time with time.Now, so inside a
// testing/synctest bubble its quotas refill in virtual time.
//
// Create TokenHandlers with [NewTokenHandler]. A TokenHandler is safe for
// concurrent use by multiple goroutines.
type TokenHandler struct {
	cfg    TokenConfig
	quotas []tokenQuota

	mu       sync.Mutex
	gen      int // incremented by Reset
	buckets  []*tokenBucket
	stats    TokenStats
	inflight int
	ids      int64
}

// tokenQuota is one quota of a TokenHandler.
type tokenQuota struct {
	unit  string // "requests", "tokens", "input-tokens", "output-tokens"
	quota int64
	// enforced is false for Anthropic's "tokens" without TokenConfig.Tokens:
	// the sum of the input and output quotas, stated but not a quota of its
	// own.
	enforced bool
}

// The units of the quotas of a TokenHandler, as parse reports them.
const (
	unitTokens       = "tokens"
	unitInputTokens  = "input-tokens"
	unitOutputTokens = "output-tokens"
)

// charge reports what a request costs quota q: requests, then tokens.
func (q *tokenQuota) charge(in, out int64) int64 {
	switch q.unit {
	case unitRequests:
		return 1
	case unitTokens:
		return saturatingAdd(in, out)
	case unitInputTokens:
		return in
	}
	return out
}

// refunded reports whether q gets unproduced output tokens back.
func (q *tokenQuota) refunded() bool {
	return q.unit == unitTokens || q.unit == unitOutputTokens
}

// NewTokenHandler returns a TokenHandler for cfg whose quotas start full
// now. It copies cfg.
//
// NewTokenHandler panics if cfg is invalid: an unknown API, a negative
// quota or Window, or InputTokens or OutputTokens with OpenAIAPI.
func NewTokenHandler(cfg TokenConfig) *TokenHandler {
	if cfg.API == "" {
		cfg.API = OpenAIAPI
	}
	if cfg.Window == 0 {
		cfg.Window = time.Minute
	}
	switch {
	case cfg.API != OpenAIAPI && cfg.API != AnthropicAPI:
		panic(fmt.Sprintf("ratelimittest: unknown API %q", cfg.API))
	case cfg.Window < 0:
		panic(fmt.Sprintf("ratelimittest: negative Window %v", cfg.Window))
	case cfg.Requests < 0 || cfg.Tokens < 0 || cfg.InputTokens < 0 || cfg.OutputTokens < 0:
		panic("ratelimittest: negative quota in TokenConfig")
	case cfg.API == OpenAIAPI && (cfg.InputTokens > 0 || cfg.OutputTokens > 0):
		panic("ratelimittest: OpenAIAPI has no input-tokens or output-tokens quotas")
	}
	h := &TokenHandler{cfg: cfg, quotas: tokenQuotas(cfg)}
	h.Reset()
	return h
}

// tokenQuotas lists the quotas of cfg, in the order they are stated.
func tokenQuotas(cfg TokenConfig) []tokenQuota {
	var qs []tokenQuota
	add := func(unit string, quota int64, enforced bool) {
		if quota > 0 {
			qs = append(qs, tokenQuota{unit: unit, quota: quota, enforced: enforced})
		}
	}
	add(unitRequests, cfg.Requests, true)
	if cfg.API == AnthropicAPI {
		add(unitInputTokens, cfg.InputTokens, true)
		add(unitOutputTokens, cfg.OutputTokens, true)
		if cfg.Tokens == 0 && cfg.InputTokens > 0 && cfg.OutputTokens > 0 {
			add(unitTokens, saturatingAdd(cfg.InputTokens, cfg.OutputTokens), false)
		}
	}
	add(unitTokens, cfg.Tokens, true)
	return qs
}

// Reset makes h forget every request, as if it had just been created: its
// quotas are full again and its TokenStats zero. Requests in flight finish
// without being counted.
func (h *TokenHandler) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	h.gen++
	h.buckets = make([]*tokenBucket, len(h.quotas))
	for i, q := range h.quotas {
		h.buckets[i] = &tokenBucket{quota: q.quota, window: h.cfg.Window, last: now, tokens: q.quota}
	}
	h.stats = TokenStats{Stats: Stats{Status: make(map[int]int)}}
	h.inflight = 0
}

// Stats returns a copy of h's counts.
func (h *TokenHandler) Stats() TokenStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.stats
	s.Status = maps.Clone(s.Status)
	s.Arrivals = slices.Clone(s.Arrivals)
	return s
}

// prompt reports the prompt tokens the server counts for a prompt
// estimated at estimate tokens.
func (c *TokenConfig) prompt(estimate int64) int64 {
	if c.Prompt == nil {
		return estimate
	}
	return max(c.Prompt(estimate), 0)
}

// produced reports the output tokens of a request whose output bound is
// bound.
func (c *TokenConfig) produced(bound int64) int64 {
	if c.Output == nil {
		return bound/2 + bound%2
	}
	return min(max(c.Output(bound), 0), bound)
}

// latency reports how long serving a request that produces out tokens
// takes.
func (c *TokenConfig) latency(out int64) time.Duration {
	d := max(c.Latency, 0)
	if c.TokenLatency > 0 {
		if out > 0 && int64(c.TokenLatency) > (math.MaxInt64-int64(d))/out {
			return math.MaxInt64
		}
		d += time.Duration(out) * c.TokenLatency
	}
	return d
}

// serves reports whether the API serves endpoint kind k.
func (h *TokenHandler) serves(k llmcost.Kind) bool {
	if h.cfg.API == AnthropicAPI {
		return k == llmcost.Messages
	}
	return k == llmcost.Chat || k == llmcost.Completions || k == llmcost.Responses || k == llmcost.Embeddings
}

// ServeHTTP answers r: 404 for a path the API does not serve, 405 for a
// method other than POST, 400 for a body that is not a request of the API,
// 429 when a quota has no room for the request's charge, and otherwise,
// after the latency, 200 with a response body of the API's shape. Every
// response carries a Date header and the rate-limit fields as they stand
// when it is written.
func (h *TokenHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k := llmcost.KindOf(r.URL.Path)
	h.mu.Lock()
	now := time.Now()
	h.stats.Requests++
	if !h.cfg.NoArrivals {
		h.stats.Arrivals = append(h.stats.Arrivals, now)
	}
	h.mu.Unlock()
	var e llmcost.Estimate
	status, msg := 0, ""
	switch ok := false; {
	case !h.serves(k):
		status, msg = http.StatusNotFound, "Unknown request URL: "+r.Method+" "+r.URL.Path
	case r.Method != http.MethodPost:
		status, msg = http.StatusMethodNotAllowed, "Method not allowed: "+r.Method
	default:
		if e, ok = llmcost.Read(r.Body, r.URL.Path, llmcost.Limit); !ok {
			status, msg = http.StatusBadRequest, "The request body is not a valid "+k.String()+" request"
		}
		e.Input = h.cfg.prompt(e.Input)
	}
	if status != 0 {
		h.mu.Lock()
		now = time.Now() // the body was read since: the fields as they stand now
		h.stats.Status[status]++
		states := h.tokenStates(now)
		h.mu.Unlock()
		h.writeFields(w.Header(), now, states)
		h.writeError(w, status, msg)
		return
	}

	// Admission: every enforced quota must have room for the charge.
	h.mu.Lock()
	now = time.Now()
	var wait time.Duration
	short, never := -1, false
	for i, q := range h.quotas {
		if !q.enforced {
			continue
		}
		d, ok := h.buckets[i].wait(now, q.charge(e.Input, e.Output))
		if !ok || d > 0 {
			if short < 0 || !ok && !never {
				short = i
			}
			never = never || !ok
			wait = max(wait, d)
		}
	}
	if short >= 0 {
		h.stats.Refused++
		h.stats.Status[http.StatusTooManyRequests]++
		states := h.tokenStates(now)
		q, used := h.quotas[short], h.quotas[short].quota-h.buckets[short].available(now)
		h.mu.Unlock()
		h.writeFields(w.Header(), now, states)
		h.refuse(w, q, used, q.charge(e.Input, e.Output), wait, never)
		return
	}
	for i, q := range h.quotas {
		if q.enforced {
			h.buckets[i].take(now, q.charge(e.Input, e.Output))
		}
	}
	h.stats.Admitted++
	h.stats.Charged = saturatingAdd(h.stats.Charged, e.Total())
	h.inflight++
	h.stats.PeakInFlight = max(h.stats.PeakInFlight, h.inflight)
	h.ids++
	id, gen := h.ids, h.gen
	h.mu.Unlock()

	out := h.cfg.produced(e.Output)
	served, written := false, 0
	defer func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if gen != h.gen {
			return
		}
		h.inflight--
		if !served {
			return
		}
		h.stats.Status[http.StatusOK]++
		h.stats.Bytes += int64(written)
		h.stats.InputTokens = saturatingAdd(h.stats.InputTokens, e.Input)
		h.stats.OutputTokens = saturatingAdd(h.stats.OutputTokens, out)
	}()

	if d := h.cfg.latency(out); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			h.refund(gen, e.Output)
			return
		}
	}
	h.refund(gen, e.Output-out)
	h.mu.Lock()
	now = time.Now()
	states := h.tokenStates(now)
	h.mu.Unlock()
	h.writeFields(w.Header(), now, states)
	body := h.responseBody(k, e, out, id, now)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	written, _ = w.Write(body)
	served = true
}

// refund gives n unproduced output tokens back, if the TokenConfig says so.
func (h *TokenHandler) refund(gen int, n int64) {
	if !h.cfg.Refund || n <= 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if gen != h.gen {
		return
	}
	now := time.Now()
	for i, q := range h.quotas {
		if q.enforced && q.refunded() {
			h.buckets[i].refund(now, n)
		}
	}
}

// refund gives n tokens back to l, never beyond its quota.
func (l *tokenBucket) refund(now time.Time, n int64) {
	l.advance(now)
	if l.tokens = saturatingAdd(l.tokens, n); l.tokens >= l.quota {
		l.tokens, l.frac = l.quota, 0
	}
}

// tokenState is what a response states about one quota.
type tokenState struct {
	unit             string
	limit, remaining int64
	full             time.Duration // until the quota is whole again
}

// tokenStates reports the state of every quota at now. h.mu is held.
func (h *TokenHandler) tokenStates(now time.Time) []tokenState {
	states := make([]tokenState, 0, len(h.quotas))
	var sum tokenState // of input-tokens and output-tokens
	for i, q := range h.quotas {
		s := tokenState{unit: q.unit, limit: q.quota}
		if q.enforced {
			s.remaining, s.full = h.buckets[i].available(now), h.buckets[i].full(now)
			if q.unit == unitInputTokens || q.unit == unitOutputTokens {
				sum.remaining = saturatingAdd(sum.remaining, s.remaining)
				sum.full = max(sum.full, s.full)
			}
		} else {
			s.remaining, s.full = sum.remaining, sum.full
		}
		states = append(states, s)
	}
	return states
}

// writeFields adds the rate-limit fields of the API describing states at now.
func (h *TokenHandler) writeFields(hdr http.Header, now time.Time, states []tokenState) {
	hdr.Set("Date", httpDate(now))
	for _, s := range states {
		if n := h.cfg.RoundRemaining; n > 0 && s.unit != unitRequests {
			s.remaining = min(roundNearest(s.remaining, n), s.limit)
		}
		limit, remaining := strconv.FormatInt(s.limit, 10), strconv.FormatInt(s.remaining, 10)
		if h.cfg.API == AnthropicAPI {
			reset := time.Unix(ceilUnix(now.Add(s.full)), 0) // now, rounded up, when whole
			prefix := "anthropic-ratelimit-" + s.unit + "-"
			hdr.Set(prefix+"limit", limit)
			hdr.Set(prefix+"remaining", remaining)
			hdr.Set(prefix+"reset", reset.UTC().Format(time.RFC3339))
			continue
		}
		hdr.Set("x-ratelimit-limit-"+s.unit, limit)
		hdr.Set("x-ratelimit-remaining-"+s.unit, remaining)
		hdr.Set("x-ratelimit-reset-"+s.unit, ceilMillis(s.full).String())
	}
}

// roundNearest rounds v, at least 0, to the nearest multiple of n, halves
// up, saturating.
func roundNearest(v, n int64) int64 {
	r := v % n
	if r < n-r {
		return v - r
	}
	return saturatingAdd(v-r, n)
}

// ceilMillis rounds d up to a whole millisecond, or down within a
// millisecond of the largest Duration.
func ceilMillis(d time.Duration) time.Duration {
	if r := d % time.Millisecond; r != 0 {
		if d > math.MaxInt64-time.Millisecond {
			return d - r // the largest whole millisecond: no wrap below 0
		}
		d += time.Millisecond - r
	}
	return d
}

// per names the window of the quotas in an error message.
func (h *TokenHandler) per() string {
	if h.cfg.Window == time.Minute {
		return "per minute"
	}
	return "per " + h.cfg.Window.String()
}

// refuse writes a 429 for a request that quota q, used units of whose
// quota are spent, has no room for. wait is how long until every quota
// would admit it; never reports that one never will.
func (h *TokenHandler) refuse(w http.ResponseWriter, q tokenQuota, used, requested int64, wait time.Duration, never bool) {
	hdr := w.Header()
	unit := strings.ReplaceAll(q.unit, "-", " ")
	var msg string
	if never {
		msg = fmt.Sprintf("Request too large for %s %s: Limit %d, Requested %d.", unit, h.per(), q.quota, requested)
	} else {
		msg = fmt.Sprintf("Rate limit reached for %s %s: Limit %d, Used %d, Requested %d. Please try again in %v.",
			unit, h.per(), q.quota, used, requested, ceilMillis(wait))
	}
	var body []byte
	if h.cfg.API == AnthropicAPI {
		if !never {
			hdr.Set("retry-after", delaySeconds(wait))
		}
		body, _ = json.Marshal(anthropicError{Type: "error", Error: apiError{Type: "rate_limit_error", Message: msg}})
	} else {
		if h.cfg.RetryAfter && !never {
			hdr.Set("retry-after", delaySeconds(wait))
			hdr.Set("retry-after-ms", strconv.FormatInt(int64(ceilMillis(wait)/time.Millisecond), 10))
		}
		typ := unitRequests
		if q.unit != unitRequests {
			typ = unitTokens
		}
		body, _ = json.Marshal(openAIError{Error: apiError{Message: msg, Type: typ, Code: "rate_limit_exceeded"}})
	}
	writeJSON(w, http.StatusTooManyRequests, body)
}

// writeError writes an error of the API's shape that is not a refusal.
func (h *TokenHandler) writeError(w http.ResponseWriter, status int, msg string) {
	var body []byte
	if h.cfg.API == AnthropicAPI {
		typ := "invalid_request_error"
		if status == http.StatusNotFound {
			typ = "not_found_error"
		}
		body, _ = json.Marshal(anthropicError{Type: "error", Error: apiError{Type: typ, Message: msg}})
	} else {
		body, _ = json.Marshal(openAIError{Error: apiError{Message: msg, Type: "invalid_request_error"}})
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	body = append(body, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// apiError is the error object of both APIs. OpenAI's has param and code,
// Anthropic's neither.
type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param,omitempty"`
	Code    string  `json:"code,omitempty"`
}

type openAIError struct {
	Error apiError `json:"error"`
}

type anthropicError struct {
	Type  string   `json:"type"`
	Error apiError `json:"error"`
}

// model is the model named in responses.
const model = "ratelimittest"

// maxText bounds the text of a response, in bytes; usage states the true
// count.
const maxText = 64 << 10

// text returns the generated text of n output tokens: "tok" n times,
// separated by spaces, which the estimator counts as n tokens; at most
// maxText bytes.
func text(n int64) string {
	return strings.TrimSuffix(strings.Repeat("tok ", int(min(n, maxText/4))), " ")
}

// responseBody returns the body of a successful response to a request of
// kind k estimated e, which produced out tokens.
func (h *TokenHandler) responseBody(k llmcost.Kind, e llmcost.Estimate, out, id int64, now time.Time) []byte {
	stop := out < e.Output
	var v any
	switch k {
	case llmcost.Messages:
		reason := "max_tokens"
		if stop {
			reason = "end_turn"
		}
		v = map[string]any{
			"id": fmt.Sprintf("msg_%d", id), "type": "message", "role": "assistant", "model": model,
			"content":     []any{map[string]any{"type": "text", "text": text(out)}},
			"stop_reason": reason, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": e.Input, "output_tokens": out},
		}
	case llmcost.Responses:
		status := "incomplete"
		if stop {
			status = "completed"
		}
		v = map[string]any{
			"id": fmt.Sprintf("resp_%d", id), "object": "response", "created_at": now.Unix(), "status": status, "model": model,
			"output": []any{map[string]any{
				"type": "message", "id": fmt.Sprintf("msg_%d", id), "status": "completed", "role": "assistant",
				"content": []any{map[string]any{"type": "output_text", "text": text(out), "annotations": []any{}}},
			}},
			"usage": map[string]any{
				"input_tokens": e.Input, "output_tokens": out, "total_tokens": saturatingAdd(e.Input, out),
				"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			},
		}
	case llmcost.Embeddings:
		data := make([]any, max(e.Inputs, 1))
		for i := range data {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": []float64{0, 0, 0, 0}}
		}
		v = map[string]any{
			"object": "list", "data": data, "model": model,
			"usage": map[string]any{"prompt_tokens": e.Input, "total_tokens": e.Input},
		}
	default: // chat and legacy completions
		reason := "length"
		if stop {
			reason = "stop"
		}
		// At most maxChoices, whatever a batch of prompts times n asks:
		// the output is shared among them.
		choices := make([]any, min(e.Choices, maxChoices))
		per := out / int64(len(choices))
		for i := range choices {
			if k == llmcost.Completions {
				choices[i] = map[string]any{"index": i, "text": text(per), "logprobs": nil, "finish_reason": reason}
			} else {
				choices[i] = map[string]any{"index": i, "message": map[string]any{"role": "assistant", "content": text(per), "refusal": nil},
					"logprobs": nil, "finish_reason": reason}
			}
		}
		object, prefix := "chat.completion", "chatcmpl"
		if k == llmcost.Completions {
			object, prefix = "text_completion", "cmpl"
		}
		v = map[string]any{
			"id": fmt.Sprintf("%s-%d", prefix, id), "object": object, "created": now.Unix(), "model": model, "choices": choices,
			"usage": map[string]any{"prompt_tokens": e.Input, "completion_tokens": out, "total_tokens": saturatingAdd(e.Input, out)},
		}
	}
	body, _ := json.Marshal(v)
	return append(body, '\n')
}

// TokenServer is a [TokenHandler] listening on a loopback address, like
// [httptest.Server], which it embeds: use its URL and Client, and its
// Close. As the
// base URL of openai-go, use URL + "/v1"; of anthropic-sdk-go, URL.
//
// It runs in real time. Inside testing/synctest bubbles, use a TokenHandler
// through a [Transport] instead.
type TokenServer struct {
	*httptest.Server

	// Handler serves the requests; use it for Stats and Reset.
	Handler *TokenHandler

	closing *closing
}

// NewTokenServer starts and returns a TokenServer for cfg, listening on
// 127.0.0.1 (or ::1). The caller should call Close when finished, to shut
// it down. It panics if cfg is invalid, as [NewTokenHandler] does.
func NewTokenServer(cfg TokenConfig) *TokenServer {
	h := NewTokenHandler(cfg)
	c := newClosing()
	return &TokenServer{Server: httptest.NewServer(c.wrap(h)), Handler: h, closing: c}
}

// Close shuts the server down as [Server.Close] does: the requests it is
// serving end first.
func (s *TokenServer) Close() { closeServer(s.Server, s.closing) }

// maxChoices bounds the choices of a completion the TokenHandler writes.
const maxChoices = 1024
