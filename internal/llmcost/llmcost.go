// Package llmcost estimates what a request to a large language model API
// will cost in tokens, from a bounded prefix of its JSON body (and the
// output bound and the attachments skimmed from further on), without a
// tokenizer. The root package paces by the estimate and ratelimittest's
// token servers charge it, so that both count alike.
//
// # Endpoints
//
// The API is told by the suffix of the URL path, whatever precedes it
// (/v1, /openai/v1, /api/v1, /openai/deployments/NAME), so that the same
// shapes served by OpenAI, Azure OpenAI, Groq, OpenRouter, vLLM and
// Ollama's OpenAI-compatible API are all recognised:
//
//   - /chat/completions: OpenAI chat completions, prompt in "messages",
//     output bounded by "max_completion_tokens" or "max_tokens", times "n";
//   - /completions: OpenAI legacy completions, prompt in "prompt" and
//     "suffix", output bounded by "max_tokens" (the API's default: 16)
//     times the larger of "n" and "best_of";
//   - /responses: OpenAI responses, prompt in "input" and "instructions",
//     output bounded by "max_output_tokens";
//   - /embeddings: embeddings, prompt in "input" (a string, strings, or
//     token arrays), no output;
//   - /messages: Anthropic messages, prompt in "system" and "messages",
//     output bounded by "max_tokens".
//
// The prompt of every API also includes its tool definitions ("tools",
// "functions", "tool_choice"; and in a Responses input, the "tools" of an
// item, an mcp_list_tools passed back, counted whole as a tool call's
// input is) and structured-output schemas ("response_format", "text").
//
// # The estimate
//
// Prompt text is counted at about 4 bytes a token, by the class of each
// byte: a quarter token for each ASCII letter or white space, half a token
// for each ASCII digit or punctuation mark (code and JSON split into more
// tokens than prose), half a token for each character of two UTF-8 bytes
// (Latin accents, Greek, Cyrillic, Hebrew, Arabic) and a whole token for
// each character of three or four (Chinese, Japanese, Korean, emoji),
// rounded up; \u escapes count as the character they stand for (a lone
// half of a surrogate pair as U+FFFD, as a JSON decoder reads it). Text is
// the string values inside the prompt fields, except message roles and
// block types; inside tool definitions and schemas, object keys count as
// text too, and inside a tool call's input in a message (Anthropic's
// tool_use "input") keys, numbers (half a token a byte) and literals, and
// every string whatever its key. Each
// message (an object in "messages", or in an "input" array)
// adds [MessageTokens], and each request [RequestTokens]; an Anthropic
// request whose "tools" defines one or more, [ToolPromptTokens]. An attachment (an
// image or a file, inline or by reference) counts [AttachmentTokens]
// whatever its size: a string under "image_url", "video_url", "audio_url",
// "input_audio", "file_data", "file_id" or "file_url"; a "url" in an
// attachment's object (the value of one of the first four, or of
// "source", "file" or "inline_data"); the "data" of an attachment's
// object or of a typed one, and the "result" of a typed one (the image of
// a Responses image_generation_call passed back). Each number in a token array counts one
// token. The "data" of an object whose "type" is "text" (the source of an
// Anthropic document of plain text, which holds the text itself) is text,
// whether the type comes before or after it (but for a "data" in an object
// nested in another whose own "data" came first, still unsettled: that one
// is what its object said before it, text or else an attachment; no API's
// body has the shape), and so are a "url" or a
// "data" elsewhere (a tool's input, a citation). Inside tool definitions
// nothing is an attachment. A body of the API's shape names its prompt ("messages",
// "input", "prompt"); one longer than the bound whose prompt's key comes
// past it is the API's when its "model" and a member of the APIs' own
// ("system", "instructions", tools, an output bound) came before, and is
// estimated from what was read.
//
// Where the body sets no output bound the estimate reserves
// [DefaultMaxTokens] (16 for legacy completions, the API's own default).
// A member given twice counts as its last value, as the server's decoder
// reads it; an output bound or "n" that is not a whole number (null, 1e3)
// counts as not set.
//
// # Accuracy
//
// On the sample bodies of testdata (prose, code, a JSON document, tool
// calls, Chinese, Japanese, Russian, Spanish), the prompt estimate is
// within -6% to +98% of OpenAI's o200k_base tokenizer and -8% to +35% of
// cl100k_base: English prose is over-counted by about a third (it runs 5
// bytes a token), code and JSON are within 6%, and Cyrillic is counted
// twice over by o200k_base, which holds whole Russian words. Other
// vendors' tokenizers differ by as much again. The estimate leans to
// over-counting: an over-count only holds back some pacing slack, since the
// server's own remaining-tokens field corrects the picture on every
// response, while an under-count can cost a refusal.
package llmcost

import (
	"errors"
	"io"
	"math"
	"strings"
	"sync"
)

// Limit is how many bytes of a body are counted at most by default: 1 MiB,
// the text of about 260,000 tokens, more than the context window of most
// models. A longer body is estimated from the text of its first Limit
// bytes; what follows (usually attachments) is skimmed for its output
// bound and its attachments, which count, AttachmentTokens each (see
// [SkimLimit]); its text does not.
const Limit = 1 << 20

// SkimLimit is how many bytes of a body are read at most in all: 64 MiB,
// above the largest requests OpenAI (50 MB of images) and Anthropic (32
// MB) accept. Past the bound of what is counted, the body is skimmed
// (string contents are searched for their end, not read a byte at a
// time) for its top-level output bound, "n" and "best_of" alone: the
// OpenAI SDKs write them after the messages, which one data-URL image
// pushes past the first MiB, and the estimate took the default bound
// and one choice. What it finds there counts, as a member given twice
// counts its last value. The prompt's attachments past the bound count
// too (ten images of 600 KB in one request were estimated as the two that
// began in the first MiB), its text does not; a syntax error or a failed
// read past it leaves the estimate as it was there.
const SkimLimit = 64 << 20

// The constants of the estimate.
const (
	// BytesPerToken is the number of ASCII bytes of prompt text counted as
	// one token.
	BytesPerToken = 4

	// MessageTokens is the overhead of each message: its role and the
	// delimiters a chat template wraps it in. OpenAI documents 3 or 4.
	MessageTokens = 4

	// RequestTokens is the overhead of each request that produces output
	// (the assistant turn the reply is primed with).
	RequestTokens = 3

	// ToolPromptTokens is the system prompt Anthropic adds to a messages
	// request that defines tools, counted as its input: 346 tokens for
	// the Claude 4 models with tool_choice auto or none, 313 with any or
	// tool (Anthropic's tool use pricing; 159 to 530 for the retired
	// Claude 3 models). 346 is added whatever the tool_choice: 33 over
	// with any or tool, as the estimate leans to over-counting.
	ToolPromptTokens = 346

	// AttachmentTokens is what an image or a file counts, whatever its
	// size: what a large image costs Anthropic (width times height over
	// 750, the image scaled to about 1.15 megapixels: about 1,600), and
	// more than OpenAI's tiled models count one in high detail (85 and
	// 170 a 512-pixel tile: 765 to 1,105 for gpt-4o and gpt-4.1). Some
	// models count more: OpenAI's patch-based ones up to 1,536 patches
	// times a multiplier (2,488 for gpt-4.1-mini, 3,779 for
	// gpt-4.1-nano), and gpt-4o-mini 2,833 and 5,667 a tile. A PDF counts
	// the text of each page and an image of it, to Anthropic and OpenAI
	// alike: 1,500 to 3,000 tokens a page, Anthropic says.
	//
	// None of this follows the bytes: an image's cost follows its pixels
	// and the model, and a page of a PDF is a few KB of text or a MB of
	// scan. A rate by the byte that covered a 20-page PDF of text (61
	// KB, 30,000 tokens) would count a scanned one of 10 MB at 5 million
	// tokens, above any quota, and a cost above a quota's limit fails at
	// once, unsent (DESIGN.md §10, "A request that never fits"), while an
	// under-count costs refusals, from which a key learns that the server
	// counts more, up to four times ("A server that counts more"). A
	// caller who knows a PDF's pages declares its cost.
	AttachmentTokens = 1600

	// DefaultMaxTokens is the output reserved when a request states no
	// bound, in tokens: 4096, the output limit of most models until 2024
	// and a common default of SDKs and proxies. Reserving a recent model's
	// true maximum (16,384 to 128,000) would stall a small quota; reserving
	// nothing would let a burst of requests overdraw it.
	DefaultMaxTokens = 4096

	// CompletionsMaxTokens is the default max_tokens of legacy completions.
	CompletionsMaxTokens = 16

	// maxChoices bounds n and best_of (OpenAI allows up to 128).
	maxChoices = 128

	// maxPrompts bounds the prompts of a legacy completion's batch
	// counted, each with its choices (OpenAI allows up to 2048): Choices
	// is at most maxChoices times it.
	maxPrompts = 2048
)

// Kind is the API a request is for.
type Kind uint8

// The APIs recognised.
const (
	None        Kind = iota // not a recognised endpoint
	Chat                    // OpenAI chat completions
	Completions             // OpenAI legacy completions
	Responses               // OpenAI responses
	Embeddings              // embeddings
	Messages                // Anthropic messages
)

var kindNames = [...]string{"none", "chat", "completions", "responses", "embeddings", "messages"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "none"
}

// KindOf reports the API of a URL path, by its suffix. A trailing slash is
// ignored. Anthropic's /messages/count_tokens costs no tokens and is None.
func KindOf(path string) Kind {
	path = strings.TrimSuffix(path, "/")
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		return Chat
	case strings.HasSuffix(path, "/completions"):
		return Completions
	case strings.HasSuffix(path, "/responses"):
		return Responses
	case strings.HasSuffix(path, "/embeddings"):
		return Embeddings
	case strings.HasSuffix(path, "/messages"):
		return Messages
	}
	return None
}

// Estimate is what a request will cost, in tokens.
type Estimate struct {
	Kind Kind

	// Input is the prompt, in tokens.
	Input int64

	// Output is the most output the request may produce, in tokens: its
	// bound (or the default) times the number of choices.
	Output int64

	// Max is the output bound of one choice, in tokens, and Choices the
	// number of choices (of a legacy completion with a batch of prompts,
	// those of every prompt); Output is their product, saturated.
	Max     int64
	Choices int64

	// Inputs is the number of inputs of an embeddings request (the
	// elements of an "input" array; 1 for a string).
	Inputs int

	// Truncated reports whether the body was longer than the bytes
	// counted (it may have been skimmed further).
	Truncated bool
}

// Total reports Input plus Output, saturated.
func (e Estimate) Total() int64 { return addSat(e.Input, e.Output) }

// Read estimates the body read from r, counting at most limit bytes of it
// (Limit if limit is not positive) and skimming the rest up to
// [SkimLimit] bytes in all, for a request to path. It reports false when
// path is not a recognised endpoint, when the body is not a JSON object of
// the endpoint's shape, or when reading fails before the bound (an error,
// or 100 reads in a row that return nothing). It reads r only; closing it
// is the caller's duty.
//
// Read never asks r for a byte past the larger of limit and SkimLimit: a
// body that reaches it unfinished is taken as cut there, whether or not
// more would follow, and one longer than limit is [Estimate].Truncated.
// It reads through r's Read method alone, so that an [io.WriterTo] such
// as an [os.File], which would copy on past the bound a buffer at a time,
// cannot be made to.
//
// Read takes time linear in the bytes read, whatever they are. It
// allocates nothing of its own: its 4 KiB buffer is reused from one call
// to the next.
func Read(r io.Reader, path string, limit int64) (Estimate, bool) {
	k := KindOf(path)
	if k == None || r == nil {
		return Estimate{}, false
	}
	if limit <= 0 {
		limit = Limit
	}
	s := newScanner(k, limit)
	buf := buffers.Get().(*[4 << 10]byte)
	defer buffers.Put(buf)
	empty := 0 // reads in a row that returned nothing and no error
	for s.wants() > 0 {
		n, err := r.Read(buf[:min(int64(len(buf)), s.wants())])
		if n == 0 && err == nil {
			// A reader that makes no progress is read no longer, as
			// bufio gives up on one (io.ErrNoProgress): read for ever, a
			// body closed at its context's end and answering (0, nil)
			// held RoundTrip for good.
			if empty++; empty >= MaxEmptyReads {
				err = io.ErrNoProgress
			} else {
				continue
			}
		}
		empty = 0
		s.Write(buf[:n])
		if err == io.EOF {
			return s.result()
		}
		if err != nil && s.skimming {
			return s.result() // past the bound: cut there
		}
		if err != nil {
			return Estimate{}, false
		}
	}
	// The bound was reached: what is left unread is taken as more.
	s.more = s.more || !s.failed
	return s.result()
}

// MaxEmptyReads is how many reads in a row may return no byte and no
// error before Read fails, as bufio's readers allow.
const MaxEmptyReads = 100

// buffers holds Read's buffers.
var buffers = sync.Pool{New: func() any { return new([4 << 10]byte) }}

// String estimates body, at most limit bytes of it, for a request to path,
// as [Read] does.
func String(body, path string, limit int64) (Estimate, bool) {
	k := KindOf(path)
	if k == None {
		return Estimate{}, false
	}
	if limit <= 0 {
		limit = Limit
	}
	s := newScanner(k, limit)
	s.WriteString(body)
	s.more = s.more || s.wants() == 0 && !s.failed // as Read takes it
	return s.result()
}

// errStop is what the scanner's writes return at the bound or at a
// syntax error.
var errStop = errors.New("llmcost: stop")

func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func mulSat(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}
