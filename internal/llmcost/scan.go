package llmcost

import (
	"bytes"
	"math"
	"strings"
)

// This file holds the scanner: a JSON tokenizer that reads a body once,
// byte by byte, in constant memory, and tallies what the estimate needs as
// it goes. It checks the grammar loosely (numbers are not fully checked)
// and gives up on the first error, so that any input, valid or not, costs
// time linear in its length.

// maxDepth is the deepest nesting read; deeper bodies are not estimated.
const maxDepth = 256

// state is what the scanner expects next.
type state uint8

const (
	stValue      state = iota // a value
	stValueOrEnd              // after '[': a value or ']'
	stKeyOrEnd                // after '{': a key or '}'
	stKey                     // after ',' in an object: a key
	stColon                   // after a key
	stAfter                   // after a value: ',' or the end of its container
	stString                  // inside a string (key or value)
	stNumber                  // inside a number
	stLiteral                 // inside true, false or null
	stDone                    // after the root value: whitespace only
)

// field is a top-level member of a body.
type field uint8

const (
	fOther         field = iota
	fMessages            // messages
	fSystem              // system
	fInput               // input
	fInstructions        // instructions
	fPrompt              // prompt, suffix
	fTools               // tools, functions, tool_choice, response_format, text
	fMaxTokens           // max_tokens
	fMaxCompletion       // max_completion_tokens
	fMaxOutput           // max_output_tokens
	fN                   // n
	fBestOf              // best_of
	nFields
)

// prompt reports whether the text inside f counts.
func (f field) prompt() bool { return f >= fMessages && f <= fTools }

func fieldOf(k []byte) field {
	switch string(k) {
	case "messages":
		return fMessages
	case "system":
		return fSystem
	case "input":
		return fInput
	case "instructions":
		return fInstructions
	case "prompt", "suffix":
		return fPrompt
	case "tools", "functions", "tool_choice", "response_format", "text":
		return fTools
	case "max_tokens":
		return fMaxTokens
	case "max_completion_tokens":
		return fMaxCompletion
	case "max_output_tokens":
		return fMaxOutput
	case "n":
		return fN
	case "best_of":
		return fBestOf
	}
	return fOther
}

// member is what the key of a value inside the prompt says about it.
type member uint8

const (
	mText       member = iota // text: counted
	mSkip                     // a role or a media type: not counted
	mType                     // a block's or a source's type: not counted, kept
	mAttachment               // an image or a file: AttachmentTokens
	mData                     // data: an attachment in a typed object or an attachment's, unless its type is "text"; else text
	mURL                      // url: an attachment in an attachment's object, else text
	mHolder                   // an attachment's object: its url or untyped data is the attachment
	mInput                    // input: in a message, a tool call's input (see markJSON); else text
	mTools                    // tools: in an item of a Responses input, tool definitions (see markJSON); else text
)

func memberOf(k []byte) member {
	switch string(k) {
	case "role", "media_type", "detail":
		return mSkip
	case "type":
		return mType
	case "image_url", "video_url", "audio_url", "input_audio", "file_data", "file_id", "file_url":
		return mAttachment // a string; an object is an attachment's
	case "data", "result":
		// "result": an image a Responses image_generation_call made,
		// base64, passed back in a later request's input.
		return mData
	case "url":
		return mURL
	case "source", "file", "inline_data":
		return mHolder
	case "input":
		return mInput
	case "tools":
		return mTools
	}
	return mText
}

// An attachment's object is the value of an "image_url" (OpenAI's
// {"image_url":{"url":...}}), a "video_url" or an "audio_url" (vLLM's), an
// "input_audio", a "source" (Anthropic's images and documents), a "file"
// or an "inline_data": a "url" in it is the attachment, and so is a "data"
// of an object with no "type". Anywhere else a "url" is text (a tool's
// input, a citation, an annotation), and so is the "data" of an object
// with no type: counted as 1,600 tokens each, 20 fetches of an agent's
// tool were estimated at 32,591 tokens for a body of 5.5 KB.

// scanner reads one body. Its zero value is not ready: use newScanner.
type scanner struct {
	kind   Kind
	left   int64 // bytes still to read before the bound
	more   bool  // bytes were offered past the bound
	failed bool  // a syntax error, or too deep

	// Past the bound the body is skimmed, up to skim bytes more: no text
	// is counted; the top-level members that bound the output
	// (max_tokens, max_completion_tokens, max_output_tokens, n, best_of)
	// are read, and the prompt's attachments, with the types that settle
	// a pending "data".
	skimming bool
	skim     int64 // bytes still to skim

	st    state
	depth int                   // open containers
	objs  [maxDepth / 64]uint64 // bit d-1: the container at depth d is an object

	// The string in progress.
	key    bool  // it is a key
	typ    bool  // it is the value of a "type"
	keep   bool  // it is either: its bytes go to keyBuf
	count  bool  // its text counts
	esc    uint8 // 0; 1 after '\'; 2 to 5 before the 1st to 4th hex digit of \u
	hex    rune
	hi     bool // the last thing read was the escape of a high surrogate
	keyBuf [24]byte
	keyLen int  // may exceed len(keyBuf): then no known key
	keyEsc bool // the key has a character past ASCII, escaped: no known key

	// An Anthropic document whose source is plain text holds the text
	// itself under "data" ({"type":"text","media_type":"text/plain",
	// "data":"..."}); any other source's data is an image or a file. The
	// source's "type" may come after its "data", so the strings under
	// "data" of an object are counted both ways, as text (pendUnits) and
	// as attachments (pendData), and settled at the object's end.
	marks     [maxDepth]uint8 // at d-1: what the container at depth d says of its data (markText...)
	pendDepth int             // depth of the object whose data is pending, or 0
	pendUnits int64           // quarter tokens of its data, as text
	pendData  int64           // strings under its "data"
	inData    bool            // the string in progress is one: its text counts from mark
	mark      int64           // units when it began

	lit string // the literal in progress: the bytes still expected

	// The number in progress.
	num    int64
	numInt bool  // digits only so far
	numTxt bool  // its bytes count as text (see markJSON)
	numTo  field // the field it sets, or fOther

	top     field  // the top-level field being read (depth >= 1)
	member  member // verdict of the last key, for the value that follows
	inTools bool   // the top-level field being read is "tools"
	tools   bool   // "tools" holds a definition (an object in its array)

	// Tallies.
	units       int64 // quarter tokens of text
	numbers     int64 // token ids
	attachments int64
	items       int64 // messages
	inputs      int   // elements of a top-level input or prompt array
	prompts     int64 // texts and token arrays of a top-level prompt: a completion each
	batch       bool  // the top-level field being read is "prompt" (not "suffix")
	seen        uint32
	model, api  bool           // top-level members seen: "model", and one of the APIs' own (see result)
	ints        [nFields]int64 // values of the integer fields; -1 unknown
}

// What an object says of the data in it (scanner.marks).
const (
	markText   uint8 = 1 << iota // "type":"text"
	markTyped                    // a "type", whatever it says
	markHolder                   // it is an attachment's object (see mHolder)
	// markJSON: the container is a tool call's input in a message
	// (Anthropic's tool_use {"input":{...}}), the tools of an item of a
	// Responses input (mcp_list_tools), or inside one: JSON the
	// server tokenizes whole, whose keys, numbers and literals count as
	// text, as a tool definition's keys do, and whose strings are text
	// whatever their key ("type", "data", "url"...). Counted as its
	// strings alone, a plot's 20,000 numbers (180 KB) were 25 tokens.
	markJSON
)

func newScanner(k Kind, limit int64) *scanner {
	s := &scanner{kind: k, left: limit, skim: max(SkimLimit-limit, 0)}
	for i := range s.ints {
		s.ints[i] = -1
	}
	return s
}

// Write feeds p to the scanner. It stops with errStop at the bound or at a
// syntax error.
func (s *scanner) Write(p []byte) (int, error) { return write(s, p) }

// WriteString is Write for strings, so that String does not copy its
// string.
func (s *scanner) WriteString(p string) (int, error) { return write(s, p) }

func write[T string | []byte](s *scanner, p T) (int, error) {
	n := 0
	if s.left > 0 && !s.failed {
		n = int(min(int64(len(p)), s.left))
		feed(s, p[:n])
		s.left -= int64(n)
	}
	if n < len(p) && !s.failed {
		if !s.skimming {
			s.more = true
			s.startSkim()
		}
		m := int(min(int64(len(p)-n), s.skim))
		feed(s, p[n:n+m])
		s.skim -= int64(m)
		n += m
	}
	if s.failed || n < len(p) {
		return n, errStop
	}
	return n, nil
}

// wants reports how many more bytes the scanner would read: 0 once it
// failed or reached the end of what it skims.
func (s *scanner) wants() int64 {
	switch {
	case s.failed:
		return 0
	case s.left > 0:
		return s.left
	}
	return s.skim
}

// startSkim starts skimming, at the first byte past the bound: a body
// complete before it has nothing more to say.
func (s *scanner) startSkim() {
	if s.st == stDone || s.kind == Embeddings || s.seen&s.promptKeys() == 0 && (!s.model || !s.api) {
		// Complete, or nothing past the bound can change the estimate:
		// an embedding has no output bound, and a body not of the API's
		// shape by the bound is none of its requests. (Skimmed, each
		// read up to 63 MiB more for nothing: an embedding batch, a
		// mail of 8 MiB POSTed to a path ending in /messages.)
		s.skim = 0
		return
	}
	s.skimming = true
	s.count = false  // the string in progress counts no more
	s.numTxt = false // nor does a number
}

func (s *scanner) fail() { s.failed = true }

// promptKeys returns the members that hold the prompt of s's kind of
// request, one of which a body of its shape has.
func (s *scanner) promptKeys() uint32 {
	switch s.kind {
	case Chat, Messages:
		return 1 << fMessages
	case Responses:
		return 1<<fInput | 1<<fInstructions | 1<<fPrompt
	case Embeddings:
		return 1 << fInput
	case Completions:
		return 1 << fPrompt
	}
	return 0
}

func (s *scanner) isObject(d int) bool { return s.objs[(d-1)/64]&(1<<((d-1)%64)) != 0 }

// inJSON reports whether the container in progress is a tool call's
// input, or inside one (see markJSON).
func (s *scanner) inJSON() bool { return s.depth > 0 && s.marks[s.depth-1]&markJSON != 0 }

// isHolder reports whether the object at depth d is an attachment's.
func (s *scanner) isHolder(d int) bool { return s.marks[d-1]&markHolder != 0 }

// dataText reports whether the data of the object at depth d is text: its
// type says "text", or it has no type and is no attachment's object.
func (s *scanner) dataText(d int) bool {
	m := s.marks[d-1]
	return m&markText != 0 || m&(markTyped|markHolder) == 0
}

func (s *scanner) push(object bool) {
	if s.depth == maxDepth {
		s.fail()
		return
	}
	s.depth++
	bit := uint64(1) << ((s.depth - 1) % 64)
	s.marks[s.depth-1] = 0
	if object {
		s.objs[(s.depth-1)/64] |= bit
		s.st = stKeyOrEnd
	} else {
		s.objs[(s.depth-1)/64] &^= bit
		s.st = stValueOrEnd
	}
}

func (s *scanner) pop(object bool) {
	if s.depth == 0 || s.isObject(s.depth) != object {
		s.fail()
		return
	}
	if s.depth == s.pendDepth {
		s.settle(s.dataText(s.depth))
	}
	s.depth--
	s.ended()
}

// ended moves past a complete value.
func (s *scanner) ended() {
	if s.depth == 0 {
		s.st = stDone
	} else {
		s.st = stAfter
	}
}

func space(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// feed scans p, the next bytes of the body.
func feed[T string | []byte](s *scanner, p T) {
	quote := -1 // in a skimmed string: the index of the next quote, or len(p)
	for i := 0; i < len(p) && !s.failed; i++ {
		c := p[i]
		switch s.st {
		case stString:
			if s.skimming && !s.keep {
				// Skimmed: only its end matters, the first quote not
				// escaped. Each byte is searched once, so that a run
				// of escapes costs no more than a run of text.
				if s.esc != 0 {
					s.esc = 0 // the escaped byte (a \u's digits are neither)
					continue
				}
				if quote < i {
					quote = indexByte(p[i:], '"')
					if quote < 0 {
						quote = len(p)
					} else {
						quote += i
					}
				}
				if j := indexByte(p[i:quote], '\\'); j >= 0 {
					i += j
					s.esc = 1
					continue
				}
				if i = quote; i == len(p) {
					return
				}
				s.stringByte('"')
				continue
			}
			if s.esc == 0 {
				// The plain run up to a quote, a backslash or a control byte.
				j, u := i, int64(0)
				for j < len(p) {
					w := byteClass[p[j]]
					if w == stop {
						break
					}
					u += int64(w)
					j++
				}
				if j > i {
					run(s, p[i:j], u)
					i = j
					if i == len(p) {
						return
					}
					c = p[i]
				}
			}
			s.stringByte(c)
		case stNumber:
			if s.numberByte(c) {
				continue
			}
			s.endNumber()
			s.after(c)
		case stLiteral:
			if c != s.lit[0] {
				s.fail()
				continue
			}
			if s.lit = s.lit[1:]; s.lit == "" {
				s.ended()
			}
		case stValue, stValueOrEnd:
			switch {
			case space(c):
			case c == ']' && s.st == stValueOrEnd:
				s.pop(false)
			default:
				s.value(c)
			}
		case stKeyOrEnd, stKey:
			switch {
			case space(c):
			case c == '"':
				s.startKey()
			case c == '}' && s.st == stKeyOrEnd:
				s.pop(true)
			default:
				s.fail()
			}
		case stColon:
			switch {
			case space(c):
			case c == ':':
				s.st = stValue
			default:
				s.fail()
			}
		case stAfter:
			s.after(c)
		case stDone:
			if !space(c) {
				s.fail()
			}
		}
	}
}

// indexByte is strings.IndexByte or bytes.IndexByte.
func indexByte[T string | []byte](p T, c byte) int {
	switch p := any(p).(type) {
	case string:
		return strings.IndexByte(p, c)
	case []byte:
		return bytes.IndexByte(p, c)
	}
	return -1
}

// after reads c after a value.
func (s *scanner) after(c byte) {
	switch {
	case space(c):
		s.st = stAfter
	case c == ',' && s.depth > 0:
		if s.isObject(s.depth) {
			s.st = stKey
		} else {
			s.st = stValue
		}
	case c == '}':
		s.pop(true)
	case c == ']':
		s.pop(false)
	default:
		s.fail()
	}
}

// value starts the value that begins with c.
func (s *scanner) value(c byte) {
	inArray := s.depth > 0 && !s.isObject(s.depth)
	m := s.member
	s.member = mText
	if inArray {
		m = mText // an element has no key
	}
	if s.depth == 0 && c != '{' {
		s.fail() // the body must be an object
		return
	}
	if s.depth == 1 && s.top >= fMaxTokens && strings.IndexByte(`"{[tfn`, c) >= 0 {
		// A member given twice is read as its last value, as decoders
		// do; one that is no whole number (null, say) sets no bound. A
		// number sets it at its end (see endNumber), so that one cut
		// short leaves the value before it.
		s.ints[s.top] = -1
	}
	prompt := s.top == fInput || s.top == fPrompt
	tokens := prompt && !s.skimming
	if prompt && (inArray && s.depth == 2 || s.depth == 1 && c == '"') {
		if tokens {
			s.inputs++
		}
		if s.batch && (c == '"' || c == '[') {
			// A number is a token of the one prompt. Past the bound
			// too: each prompt of a batch is a completion, whose output
			// the server reserves, its text counted or not.
			s.prompts++
		}
	}
	switch {
	case c == '"':
		s.st, s.key, s.esc, s.hi = stString, false, 0, false
		s.typ = m == mType
		s.keep = s.typ
		s.keyLen, s.keyEsc = 0, false
		switch {
		case s.depth == 0 || !s.top.prompt():
			s.count = false
		case s.top == fTools, s.inJSON():
			s.count = !s.skimming // text, never an attachment
		case s.skimming:
			// Past the bound only attachments count (see Limit).
			s.count = false
			if m == mAttachment || m == mURL && s.isHolder(s.depth) {
				s.attachments++
			} else if m == mData {
				s.startData()
			}
		case m == mSkip || m == mType:
			s.count = false
		case m == mAttachment, m == mURL && s.isHolder(s.depth):
			s.count = false
			s.attachments++
		case m == mData:
			s.startData()
		default:
			s.count = true
		}
	case c == '{' || c == '[':
		if c == '{' && inArray && s.depth == 2 && (s.top == fMessages || s.top == fInput) && !s.skimming {
			s.items++
		}
		if c == '{' && inArray && s.depth == 2 && s.inTools {
			s.tools = true
		}
		json := s.inJSON() ||
			m == mInput && !inArray && s.depth >= 2 && s.top == fMessages ||
			// An mcp_list_tools item passed back in a Responses input:
			// the definitions the model is given, tokenized whole as
			// those of the request's "tools" are.
			m == mTools && c == '[' && s.depth == 3 && s.top == fInput
		s.push(c == '{')
		if s.failed {
			return
		}
		if c == '{' && (m == mHolder || m == mAttachment) && s.top.prompt() {
			s.marks[s.depth-1] |= markHolder
		}
		if json {
			s.marks[s.depth-1] |= markJSON
		}
	case c == '-' || c >= '0' && c <= '9':
		s.st = stNumber
		s.num, s.numInt, s.numTo = 0, c != '-', fOther
		s.numTxt = s.inJSON() && !s.skimming
		if s.depth == 1 && s.top >= fMaxTokens {
			s.numTo = s.top
		}
		if tokens && inArray {
			s.numbers++
		}
		s.numberByte(c)
	case c == 't':
		s.st, s.lit = stLiteral, "rue"
		s.literal()
	case c == 'f':
		s.st, s.lit = stLiteral, "alse"
		s.literal()
	case c == 'n':
		s.st, s.lit = stLiteral, "ull"
		s.literal()
	default:
		s.fail()
	}
}

// literal counts the literal that starts as text in a tool call's input
// (see markJSON): a quarter token a letter.
func (s *scanner) literal() {
	if s.inJSON() && !s.skimming {
		s.units += int64(len(s.lit)) + 1
	}
}

// numberByte reads c inside a number and reports whether it belongs to it.
func (s *scanner) numberByte(c byte) bool {
	switch {
	case c >= '0' && c <= '9':
		if s.numInt {
			d := int64(c - '0')
			if s.num > (math.MaxInt64-d)/10 {
				s.num = math.MaxInt64
			} else {
				s.num = s.num*10 + d
			}
		}
	case c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E':
		s.numInt = false
	default:
		return false
	}
	if s.numTxt {
		s.units += 2 // half a token, as a digit or a punctuation mark of text
	}
	return true
}

func (s *scanner) endNumber() {
	switch {
	case s.numTo == fOther:
	case s.numInt:
		s.ints[s.numTo] = s.num
	default:
		s.ints[s.numTo] = -1 // a fraction, an exponent, a negative
	}
	s.ended()
}

func (s *scanner) startKey() {
	s.st, s.key, s.esc, s.hi = stString, true, 0, false
	s.typ, s.keep = false, true
	s.keyLen, s.keyEsc = 0, false
	s.count = (s.depth >= 2 && s.top == fTools || s.inJSON()) && !s.skimming
}

// endKey handles a complete key.
func (s *scanner) endKey() {
	var k []byte
	if !s.keyEsc && s.keyLen <= len(s.keyBuf) {
		k = s.keyBuf[:s.keyLen]
	}
	if s.depth == 1 {
		s.inTools = string(k) == "tools"
	}
	if s.depth == 1 && s.skimming {
		// Past the bound, only the output bound, n, the prompt's
		// attachments, the prompts of a batch and whether it has
		// tools are read.
		s.top = fieldOf(k)
		s.batch = string(k) == "prompt"
	} else if s.depth == 1 {
		s.top = fieldOf(k)
		s.seen |= 1 << s.top
		s.batch = string(k) == "prompt"
		switch string(k) {
		case "model":
			s.model = true
		case "system", "instructions", "tools", "functions", "tool_choice", "response_format",
			"max_tokens", "max_completion_tokens", "max_output_tokens":
			s.api = true
		}
	}
	s.member = memberOf(k)
	s.st = stColon
}

// startData starts a string under "data" inside the prompt: counted as
// text until its object's end settles it. One in an object nested in
// another whose data is pending is what its object said before it (see
// dataText), text or else an attachment. Past the bound, its text does
// not count.
func (s *scanner) startData() {
	switch {
	case s.pendDepth != 0 && s.pendDepth != s.depth && s.dataText(s.depth):
		s.count = true
	case s.pendDepth != 0 && s.pendDepth != s.depth:
		s.count = false
		s.attachments++
	default:
		s.count = true
		s.pendDepth = s.depth
		s.pendData++
		s.inData, s.mark = true, s.units
	}
	if s.skimming {
		s.count = false // past the bound, an attachment or nothing
	}
}

// endValue ends a string value that is a "type" or a "data".
func (s *scanner) endValue() {
	if s.typ {
		text := !s.keyEsc && s.keyLen == 4 && string(s.keyBuf[:4]) == "text"
		m := s.marks[s.depth-1]&^markText | markTyped
		if text {
			m |= markText
		}
		s.marks[s.depth-1] = m
	}
	if s.inData {
		s.pendUnits += s.units - s.mark
		s.units = s.mark
	}
	s.typ, s.keep, s.inData = false, false, false
}

// settle counts the pending data as text or as attachments.
func (s *scanner) settle(text bool) {
	if text {
		s.units += s.pendUnits
	} else {
		s.attachments += s.pendData
	}
	s.pendDepth, s.pendUnits, s.pendData = 0, 0, 0
}

// run reads a plain run of string bytes (no quote, backslash or control
// byte) that weighs u.
func run[T string | []byte](s *scanner, p T, u int64) {
	s.hi = false
	if s.keep {
		if s.keyLen < len(s.keyBuf) {
			copy(s.keyBuf[s.keyLen:], p)
		}
		s.keyLen += len(p)
	}
	if s.count {
		s.units += u
	}
}

// keyByte appends c, an escaped byte, to the key (or type) in progress,
// if any: a decoder reads "max\u005ftokens" as max_tokens, and so does the
// server.
func (s *scanner) keyByte(c byte) {
	if !s.keep {
		return
	}
	if s.keyLen < len(s.keyBuf) {
		s.keyBuf[s.keyLen] = c
	}
	s.keyLen++
}

// stop marks in byteClass the bytes that end a plain run of string bytes.
const stop = 0xff

// byteClass holds the weight of each byte, or stop. It is never modified.
var byteClass = func() (t [256]uint8) {
	for c := range t {
		t[c] = uint8(weight(byte(c)))
	}
	for c := range 0x20 {
		t[c] = stop
	}
	t['"'], t['\\'] = stop, stop
	return t
}()

// weight is what byte c of UTF-8 text counts, in quarter tokens: 1 for an
// ASCII letter or white space, 2 for an ASCII digit or punctuation mark, 2
// for the lead byte of a 2-byte character, 4 for the lead byte of a longer
// one, 0 for continuation bytes.
func weight(c byte) int64 {
	switch {
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == ' ' || c < 0x20:
		return 1
	case c < 0x80:
		return 2
	case c >= 0xE0:
		return 4
	case c >= 0xC0:
		return 2
	}
	return 0
}

// stringByte reads c inside a string, outside a plain run.
func (s *scanner) stringByte(c byte) {
	switch s.esc {
	case 0:
		switch {
		case c == '"':
			switch {
			case s.key:
				s.endKey()
			case s.typ || s.inData:
				s.endValue()
				s.ended()
			default:
				s.ended()
			}
		case c == '\\':
			s.esc = 1
		default: // a control byte
			s.fail()
		}
	case 1:
		switch c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.esc, s.hi = 0, false
			s.text(escapeWeight(c))
			s.keyByte(unescape(c))
		case 'u':
			s.esc, s.hex = 2, 0
		default:
			s.fail()
		}
	default:
		var d rune
		switch {
		case c >= '0' && c <= '9':
			d = rune(c - '0')
		case c >= 'a' && c <= 'f':
			d = rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = rune(c-'A') + 10
		default:
			s.fail()
			return
		}
		s.hex = s.hex<<4 | d
		if s.esc++; s.esc < 6 {
			return
		}
		s.esc = 0
		if s.hex >= 0x80 {
			s.keyEsc = s.keyEsc || s.keep // every known key is ASCII
		}
		hi := s.hi
		s.hi = s.hex >= 0xD800 && s.hex <= 0xDBFF
		switch r := s.hex; {
		case r < 0x80:
			s.text(weight(byte(r)))
			s.keyByte(byte(r))
		case r < 0x800:
			s.text(2)
		case r >= 0xDC00 && r <= 0xDFFF && hi:
			// The second half of a surrogate pair: the first counted.
		default:
			// A lone half of a pair is read as U+FFFD, a 3-byte character.
			s.text(4)
		}
	}
}

// text counts u quarter tokens of escaped text.
func (s *scanner) text(u int64) {
	if s.count {
		s.units += u
	}
}

// result reports the estimate of what was scanned.
func (s *scanner) result() (Estimate, bool) {
	// A body skimmed past the bound is estimated from what came before
	// it, whatever follows.
	done := s.st == stDone && !s.skimming
	if !s.skimming && (s.failed || !done && !s.more) {
		return Estimate{}, false
	}
	if s.seen&s.promptKeys() == 0 && (done || !s.model || !s.api) {
		// A body of another shape. One cut at the bound before its
		// prompt's key, after its model and a member other JSON bodies
		// (a mail's, a chat message's, whose "text" is common) seldom
		// have (a long system prompt, or tools, written before the
		// messages), is the API's still, estimated from what was read:
		// rejected, the largest requests were paced as free.
		return Estimate{}, false
	}

	if s.inData {
		// Cut inside a data string: what was read of it.
		s.endValue()
	}
	if s.pendDepth != 0 {
		// Cut before its object's end: as its type said so far.
		s.settle(s.dataText(s.pendDepth))
	}

	e := Estimate{Kind: s.kind, Truncated: !done, Choices: 1}
	in := (s.units + BytesPerToken - 1) / BytesPerToken
	in = addSat(in, s.numbers)
	in = addSat(in, mulSat(s.attachments, AttachmentTokens))
	in = addSat(in, mulSat(s.items, MessageTokens))
	if s.kind != Embeddings {
		in = addSat(in, RequestTokens)
	}
	e.Input = in

	switch s.kind {
	case Chat:
		e.Max = s.bound(DefaultMaxTokens, fMaxCompletion, fMaxTokens)
		e.Choices = s.choices(fN, fN)
	case Completions:
		e.Max = s.bound(CompletionsMaxTokens, fMaxTokens, fMaxTokens)
		// A completion (n of them, or best_of) for each prompt of a batch.
		e.Choices = s.choices(fN, fBestOf) * min(max(s.prompts, 1), maxPrompts)
	case Responses:
		e.Max = s.bound(DefaultMaxTokens, fMaxOutput, fMaxOutput)
	case Messages:
		e.Max = s.bound(DefaultMaxTokens, fMaxTokens, fMaxTokens)
		if s.tools {
			e.Input = addSat(e.Input, ToolPromptTokens)
		}
	case Embeddings:
		e.Inputs = s.inputs
	}
	e.Output = mulSat(e.Max, e.Choices)
	return e, true
}

// bound reports the value of field a, else of field b, else def.
func (s *scanner) bound(def int64, a, b field) int64 {
	switch {
	case s.ints[a] >= 0:
		return s.ints[a]
	case s.ints[b] >= 0:
		return s.ints[b]
	}
	return def
}

// choices reports the larger of fields a and b, between 1 and maxChoices.
func (s *scanner) choices(a, b field) int64 {
	return min(max(s.ints[a], s.ints[b], 1), maxChoices)
}

// unescape returns the byte the escape \c stands for.
func unescape(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // a quote, a backslash or a slash
}

// escapeWeight is the weight of the character a one-letter escape stands for.
func escapeWeight(c byte) int64 {
	switch c {
	case 'b', 'f', 'n', 'r', 't':
		return 1 // white space
	}
	return 2 // a quote, a backslash or a slash
}
