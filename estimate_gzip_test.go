package polite_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/politehttp/polite"
)

// A request body sent with Content-Encoding: gzip (a gateway or client
// that compresses large prompts; OpenAI-compatible servers accept it) is
// a JSON body of the API's shape, compressed. EstimateCost scanned the
// compressed bytes as JSON, failed on the first, and returned the zero
// Cost: a prompt of about 57,000 tokens was paced as free.
func TestEstimateCostGzipBody(t *testing.T) {
	body := `{"model":"gpt-4.1","max_tokens":100,"messages":[{"role":"user","content":"` +
		strings.Repeat("The quick brown fox jumps over the lazy dog. ", 5000) + `"}]}`
	plain, _ := http.NewRequest(http.MethodPost, "https://api.openai.com/v1/chat/completions", strings.NewReader(body))
	want := polite.EstimateCost(plain)
	gz := func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) }
	zl := func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) }
	fl := func(w io.Writer) io.WriteCloser { zw, _ := flate.NewWriter(w, flate.DefaultCompression); return zw }
	for _, c := range []struct {
		coding string
		writer func(io.Writer) io.WriteCloser
		want   polite.Cost
	}{
		{"gzip", gz, want},
		{"x-gzip", gz, want},
		{" GZip ", gz, want},
		{"deflate", zl, want},           // RFC 9110 §8.4.1.2: zlib
		{"identity", nil, want},         // not compressed
		{"br", nil, polite.Cost{}},      // no decoder in the standard library
		{"gzip, br", gz, polite.Cost{}}, // more than one coding
		{"gzip", nil, want},             // not gzip after all: read as sent
		{"deflate", nil, want},          // nor zlib
		{"deflate", fl, polite.Cost{}},  // raw deflate, not zlib: compressed bytes, not JSON
	} {
		var buf bytes.Buffer
		if c.writer != nil {
			zw := c.writer(&buf)
			zw.Write([]byte(body))
			zw.Close()
		} else {
			buf.WriteString(body)
		}
		req, _ := http.NewRequest(http.MethodPost, "https://api.openai.com/v1/chat/completions", bytes.NewReader(buf.Bytes()))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Encoding", c.coding)
		if got := polite.EstimateCost(req); got != c.want {
			t.Errorf("Content-Encoding %q (%d bytes, %d decoded): EstimateCost = %v, want %v", c.coding, buf.Len(), len(body), got, c.want)
		}
	}
}

// A compressed body is read no further than a plain one: the 64 MiB
// skimmed in all, decoded, whatever the compressed body's length. Here
// 128 MiB of prompt compress to 161 KiB; the bound after them is not
// read, and the compressed body is read only as far as it takes.
func TestEstimateCostGzipBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses 128 MiB")
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	io.WriteString(zw, `{"model":"gpt-4.1","messages":[{"role":"user","content":"`)
	io.CopyN(zw, repeatReader('a'), 128<<20)
	io.WriteString(zw, `"}],"max_tokens":100}`)
	zw.Close()
	var read int64
	req, _ := http.NewRequest(http.MethodPost, "https://api.openai.com/v1/chat/completions", strings.NewReader("{}"))
	req.Header.Set("Content-Encoding", "gzip")
	req.GetBody = func() (io.ReadCloser, error) {
		return countingReader{bytes.NewReader(buf.Bytes()), &read}, nil
	}
	c := polite.EstimateCost(req)
	if c.InputTokens < 260_000 || c.InputTokens > 270_000 || c.OutputTokens != 4096 {
		t.Errorf("EstimateCost = %v, want the first MiB counted (about 262,000 tokens) and the default bound: max_tokens is past 64 MiB", c)
	}
	if read >= int64(buf.Len()) {
		t.Errorf("read %d bytes of the %d compressed, want only those of the first 64 MiB decoded", read, buf.Len())
	}
}
