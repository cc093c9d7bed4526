package polite

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/politehttp/polite/internal/media"
)

// The problem types of draft-11 §5 (RFC 9457 problem details).
const (
	problemQuota    = "https://iana.org/assignments/http-problem-types#quota-exceeded"
	problemCapacity = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"
	problemAbnormal = "https://iana.org/assignments/http-problem-types#abnormal-usage-detected"
)

// problemPrefix is how much of a problem document is read: enough for the
// members polite reads, not a whole body.
const problemPrefix = 4 << 10

// problem is what polite reads of a problem document.
type problem struct {
	kind     string   // the type URI
	violated []string // violated-policies
}

// closed is the Closer of a body closed already.
type closed struct{}

func (closed) Close() error { return nil }

// hasProblem reports whether resp's body is a problem document that
// readProblem reads: its Content-Type is application/problem+json, and it
// has a body.
func hasProblem(resp *http.Response) bool {
	if resp.Body == nil || resp.Body == http.NoBody {
		return false
	}
	return media.Is(resp.Header.Get("Content-Type"), "application/problem+json")
}

// readProblem reads what a refusal's problem document says, when its
// Content-Type is application/problem+json, from at most problemPrefix
// bytes of its body, read until until (drainTime from when the refusal's
// body was first read: the rest is discarded within the same bound) and
// while ctx lasts. It returns the body to use in place of resp.Body: the bytes read followed by
// the rest, closed by the original Close. A body that is not a problem
// document is returned as it is, unread; one cut short (closed) fails
// after the bytes read.
//
// A quota-exceeded problem names the policies it exhausted; their quota
// pauses until the origin's pause ends. A temporary-reduced-capacity
// problem comes with a lowered RateLimit-Policy, which the budget adopts as
// it adopts every policy it reads. An abnormal-usage-detected problem stops
// the retries to that origin: the caller should stop its batch, not retry
// harder.
func readProblem(ctx context.Context, resp *http.Response, until time.Time) (io.ReadCloser, problem) {
	body := resp.Body
	if !hasProblem(resp) {
		return body, problem{}
	}
	// A prefix that trickles in is cut at until: the body is closed, and
	// reading the rest fails.
	var prefix []byte
	var readErr error
	var closer io.Closer = body
	if bounded(ctx, body, until, func() { prefix, readErr = io.ReadAll(io.LimitReader(body, problemPrefix)) }) {
		closer = closed{} // closed by the cut: once is enough
	}
	// The rest: what the body has not given yet, or the error its read
	// ended with, which the caller reads too, after the bytes before it.
	var rest io.Reader = body
	if readErr != nil {
		rest = failedRead{readErr}
	}
	restored := struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(prefix), rest), closer}
	// Read member by member, so that a document longer than the prefix
	// still yields the members that came before the cut.
	var doc struct {
		Type     string
		Violated []string
	}
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return restored, problem{}
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		var dst any = new(json.RawMessage)
		switch tok {
		case "type":
			dst = &doc.Type
		case "violated-policies":
			dst = &doc.Violated
		}
		if dec.Decode(dst) != nil {
			break
		}
	}
	switch doc.Type {
	case problemQuota, problemCapacity, problemAbnormal:
	default:
		return restored, problem{}
	}
	if len(doc.Violated) > maxPolicies {
		doc.Violated = doc.Violated[:maxPolicies]
	}
	return restored, problem{kind: doc.Type, violated: doc.Violated}
}

// failedRead is a reader whose every read fails with err.
type failedRead struct{ err error }

func (f failedRead) Read([]byte) (int, error) { return 0, f.err }
