package polite

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/politehttp/polite/internal/llmcost"
)

// estimateLimit is how many bytes of a request body EstimateCost counts at
// most: 1 MiB. It skims on to llmcost.SkimLimit, 64 MiB, for the output
// bound.
const estimateLimit = llmcost.Limit

// EstimateCost estimates what req will cost in tokens, if it is a request to
// the API of a large language model; otherwise it returns the zero Cost. It
// is the Transport's default when neither [WithCost] nor Transport.Cost
// gives a cost, and is exported for a Transport.Cost that adjusts it, for
// example to add a margin.
//
// The API is told by the end of the URL path, whatever precedes it, so that
// OpenAI, Azure OpenAI, Groq, OpenRouter, vLLM and Ollama's
// OpenAI-compatible API are all recognised:
//
//   - /chat/completions: prompt in "messages"; output bounded by
//     "max_completion_tokens" or "max_tokens", times "n";
//   - /completions (legacy): prompt in "prompt" and "suffix"; output bounded
//     by "max_tokens" (16 if absent, the API's default), times the larger of
//     "n" and "best_of";
//   - /responses: prompt in "input" and "instructions"; output bounded by
//     "max_output_tokens";
//   - /embeddings: prompt in "input"; no output;
//   - /messages (Anthropic): prompt in "system" and "messages"; output
//     bounded by "max_tokens".
//
// Tool definitions and structured-output schemas count as prompt too, and
// so does a tool call's input in a message (Anthropic's tool_use), keys,
// numbers and literals included, every string as text. An Anthropic
// request that defines tools adds 346 tokens, whatever its tool_choice:
// the system prompt Anthropic adds for them (for the Claude 4 models with
// tool_choice auto or none; with any or tool it is 313, counted 33 over,
// as the estimate leans).
// Prompt text counts about 4 bytes a token: a quarter token for each ASCII
// letter or space, half a token for each ASCII digit or punctuation mark
// and for each 2-byte UTF-8 character, a whole token for each character of
// 3 or 4 bytes (Chinese, Japanese, Korean, emoji). Each message adds 4
// tokens and each request but an embeddings request 3. An image or a file
// counts 1,600 tokens whatever its size: what a large image costs
// Anthropic, while some of OpenAI's models count more (3,779 tokens for
// gpt-4.1-nano), and a PDF counts 1,500 to 3,000 tokens a page, which its
// bytes do not tell; a caller who knows its pages declares them (see the
// example). An attachment is a "url" in an attachment's object (the
// value of an image_url, video_url, audio_url, input_audio, source, file
// or inline_data), a string under one of the first four, or under
// "file_id", "file_url" or "file_data", anywhere in the prompt but tool
// definitions, or the "data" of an attachment's object or of a typed one
// (and the "result" of a typed one: a Responses image_generation_call's);
// a "url" or "data" elsewhere (a tool's input, a citation) counts as
// text. An Anthropic document of plain text counts as its text. Where a
// request sets no output bound the estimate reserves 4096 tokens: the
// output limit of most models until 2024; a recent model's true maximum
// (16,384 to 128,000) would stall a small quota, and nothing would let a
// burst overdraw it. The result's Tokens is InputTokens plus OutputTokens.
//
// EstimateCost reads the body only through req.GetBody, never req.Body
// itself (the Transport then sends the request with a body of its own from
// GetBody: see DESIGN.md §10), and counts at most its first 1 MiB (the text of about 260,000
// tokens). What follows is skimmed, up to 64 MiB in all (above the largest
// bodies OpenAI and Anthropic accept), for the top-level output bound, "n"
// and "best_of" (the OpenAI SDKs write them after the messages, which
// one image sent as a data URL pushes past the first MiB) and for the
// prompt's attachments, which count as before the bound; its text does
// not count. It closes what
// GetBody returns. It reads while the request's context lasts: the
// context's end closes the body, and the request costs the zero Cost (a
// body whose Close does not interrupt its Read, such as io.NopCloser over a
// pipe, is read until its Read returns; one whose Read returns no byte and
// no error 100 times in a row costs the zero Cost, or past the first MiB
// what was read before). A body sent with Content-Encoding gzip (or
// x-gzip) or deflate (zlib, as RFC 9110 defines it) is read decoded, the
// bounds above counting decoded bytes, and no more than 64 MiB of it
// compressed, nor more than twice the bytes it has decoded to, plus 64
// KiB, which no real body's compressed form runs to (a compressor
// flushing every few bytes does: the body is cut there, and one cut
// before its first MiB costs the zero Cost); one whose first bytes are
// not of that coding is read as sent, as a server that ignores the label
// reads it. A request without GetBody, whose body has another content
// coding (br, zstd, several), or whose body is not a JSON object of the
// API's shape, costs the zero Cost. The estimate takes time linear in the
// bytes read, whatever they are.
//
// # Accuracy
//
// Against OpenAI's tokenizers, the prompt estimate of sample bodies (prose,
// code, JSON, tool calls, Chinese, Japanese, Russian, Spanish) is within
// -6% to +98% of o200k_base and -8% to +35% of cl100k_base: English prose
// is over-counted by about a third, code and JSON are within 6%, and
// Russian is counted twice over by o200k_base. Other vendors' tokenizers
// differ as much again, and the output bound is an upper bound of what the
// server will charge in the end. The estimate leans to over-counting: while
// requests are in flight an over-count holds back some of the quota, while
// an under-count could cost a refusal. It matters only for requests in
// flight: every response's remaining-tokens field says what the server
// actually has left, and corrects the picture. What the body does not hold
// is not counted: the context a Responses request names by
// "previous_response_id" or "conversation", which the server adds to its
// prompt; a caller continuing a long conversation so declares its cost
// with [WithCost].
func EstimateCost(req *http.Request) Cost {
	c, _ := estimateCost(req, estimateLimit)
	return c
}

// estimateCost estimates req from at most limit bytes of its body, read
// through GetBody, and reports whether it is a request of a known LLM API.
func estimateCost(req *http.Request, limit int64) (Cost, bool) {
	c, ok, _ := estimateBody(req, limit, nil)
	return c, ok
}

// estimateBody is estimateCost, and reports besides whether it read a
// body GetBody returned. It sets *cutOwn, when not nil, once it closed
// req.Body, which GetBody returned, as the context ended (a panic of the
// read going on too): the caller, which closes req.Body on its every
// other path, closes it no more.
func estimateBody(req *http.Request, limit int64, cutOwn *bool) (_ Cost, _ bool, read bool) {
	if req == nil || req.URL == nil || req.GetBody == nil || req.Body == nil || req.Body == http.NoBody {
		return Cost{}, false, read
	}
	if llmcost.KindOf(req.URL.Path) == llmcost.None {
		return Cost{}, false, read // not worth a GetBody
	}
	coding, ok := contentCoding(req.Header)
	if !ok {
		return Cost{}, false, read
	}
	ctx := req.Context()
	if ctx.Err() != nil {
		return Cost{}, false, read
	}
	body, err := req.GetBody()
	read = body != nil
	if err != nil || body == nil {
		return Cost{}, false, read
	}
	// Read while ctx lasts: its end closes the body, which interrupts a
	// read that does not answer (a pipe, a stalled file). A GetBody that
	// hands out the request's own Body (seeked back to its start) has it
	// left open: it is the body the first attempt sends (see rewind).
	c := &cutter{body: body}
	own := sameBody(body, req.Body)
	if !own {
		defer c.cut()
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, c.cut)
		defer func() {
			// Not stopped: the cut ran, or runs. (Closed again by
			// RoundTrip, a file answered its second Close with an
			// error.)
			if !stop() && own && cutOwn != nil {
				*cutOwn = true
			}
		}()
	}
	r, err := decoder(body, coding)
	if err != nil {
		return Cost{}, false, read
	}
	e, ok := llmcost.Read(r, req.URL.Path, limit)
	if ctx.Err() != nil {
		return Cost{}, false, read
	}
	if !ok {
		return Cost{}, false, read
	}
	return Cost{Tokens: e.Total(), InputTokens: e.Input, OutputTokens: e.Output}, true, read
}

// contentCoding reports the content coding of a request body from its
// Content-Encoding: "" for none, "gzip" or "deflate"; false for any other,
// and for more than one.
func contentCoding(h http.Header) (string, bool) {
	v := h["Content-Encoding"]
	switch {
	case len(v) == 0:
		return "", true
	case len(v) > 1:
		return "", false
	}
	switch c := strings.ToLower(strings.TrimSpace(v[0])); c {
	case "", "identity":
		return "", true
	case "gzip", "x-gzip": // RFC 9110 §8.4.1.3: x-gzip is gzip
		return "gzip", true
	case "deflate": // RFC 9110 §8.4.1.2: a zlib stream, not raw deflate
		return "deflate", true
	}
	return "", false
}

// decoder returns a reader of body decoded from coding. The compressed
// body is read no further than llmcost.SkimLimit, as the decoded one is,
// and no further than twice what it decoded to, and maxLead more: a bomb
// is cut by the decoded bound, and a run of blocks that decode to nothing
// by the second. (Read to the first alone, 64 MiB of empty blocks took
// 7.2 s to decode to nothing, 20 times a plain body of that length.)
func decoder(body io.Reader, coding string) (io.Reader, error) {
	if coding == "" {
		return body, nil
	}
	// A body labelled with a coding it does not have is read as sent: a
	// server that ignores the label (many do, for request bodies) charges
	// for it so, and one that honours it refuses it and charges nothing.
	// Reading it costs no more than over-counting what was never sent.
	// The decoders, and ReadFull, read a body that returns no byte and no
	// error for ever; llmcost's own bound sees only what they give.
	body = &progress{r: body}
	var lead [2]byte
	n, err := io.ReadFull(body, lead[:])
	switch {
	case err != nil && err != io.ErrUnexpectedEOF && err != io.EOF:
		return nil, err
	case n < len(lead) || !coded(coding, lead):
		return io.MultiReader(bytes.NewReader(lead[:n]), body), nil
	}
	b := new(balance)
	in := &balanceIn{r: io.LimitReader(io.MultiReader(bytes.NewReader(lead[:]), body), llmcost.SkimLimit), b: b}
	var r io.Reader
	if coding == "gzip" {
		r, err = gzip.NewReader(in)
	} else { // "deflate": contentCoding gives no other
		r, err = zlib.NewReader(in)
	}
	if err != nil {
		return nil, err
	}
	return &balanceOut{r: r, b: b}, nil
}

// coded reports whether a body that begins with lead is of coding: the
// magic number of a gzip member (RFC 1952 §2.3.1), or a zlib header
// (RFC 1950 §2.2: method 8, and a check that makes the first two bytes a
// multiple of 31).
func coded(coding string, lead [2]byte) bool {
	if coding == "gzip" {
		return lead == [2]byte{0x1f, 0x8b}
	}
	return lead[0]&0x0f == 8 && (uint(lead[0])<<8|uint(lead[1]))%31 == 0
}

// progress reads r, and ends it with io.ErrNoProgress once
// llmcost.MaxEmptyReads reads in a row return no byte and no error.
type progress struct {
	r     io.Reader
	empty int
}

func (p *progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 || err != nil || len(b) == 0 {
		p.empty = 0
		return n, err
	}
	if p.empty++; p.empty >= llmcost.MaxEmptyReads {
		return 0, io.ErrNoProgress
	}
	return 0, nil
}

// balance counts the bytes a decoder read and those it gave.
type balance struct{ in, out int64 }

// maxLead is how far the compressed bytes read may run ahead of twice
// those decoded: past a header, and a block of incompressible data,
// no real body's are.
const maxLead = 64 << 10

// balanceIn reads the compressed body, counting it, and ends it once it
// runs ahead of what was decoded.
type balanceIn struct {
	r io.Reader
	b *balance
}

func (r *balanceIn) Read(p []byte) (int, error) {
	if r.b.in > 2*r.b.out+maxLead {
		return 0, errDecodesToLittle
	}
	n, err := r.r.Read(p)
	r.b.in += int64(n)
	return n, err
}

// balanceOut reads the decoded body, counting it.
type balanceOut struct {
	r io.Reader
	b *balance
}

func (r *balanceOut) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.b.out += int64(n)
	return n, err
}

// errDecodesToLittle ends a compressed body that decodes to far less than
// its length.
var errDecodesToLittle = errors.New("polite: compressed body decodes to little")

// sameBody reports whether a and b are the same body: the same pointer.
// Bodies of other kinds are never the same: comparing them with == may
// panic (a struct holding a slice, or an interface holding one).
func sameBody(a, b io.ReadCloser) bool {
	if a == nil || b == nil {
		return false
	}
	ta := reflect.TypeOf(a)
	return ta.Kind() == reflect.Pointer && ta == reflect.TypeOf(b) && a == b
}
