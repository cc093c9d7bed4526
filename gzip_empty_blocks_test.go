package polite_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/politehttp/polite"
)

// emptyBits writes a DEFLATE bit stream, least significant bit first.
type emptyBits struct {
	buf []byte
	acc uint64
	n   uint
}

func (w *emptyBits) put(v uint64, n uint) {
	w.acc |= v << w.n
	for w.n += n; w.n >= 8; w.n -= 8 {
		w.buf = append(w.buf, byte(w.acc))
		w.acc >>= 8
	}
}

// emptyDynamicBlock writes a valid, non-final dynamic-Huffman block that
// decodes to nothing: 12 bytes, each costing the decoder three Huffman
// tables.
func (w *emptyBits) emptyDynamicBlock() {
	w.put(0, 1)  // BFINAL 0
	w.put(2, 2)  // BTYPE dynamic
	w.put(0, 5)  // HLIT: 257 codes
	w.put(0, 5)  // HDIST: 1 code
	w.put(14, 4) // HCLEN: 18 code-length codes
	for _, s := range []int{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1} {
		if s == 1 || s == 18 {
			w.put(1, 3)
		} else {
			w.put(0, 3)
		}
	}
	w.put(0, 1)        // literal 0: length 1
	w.put(1|127<<1, 8) // code 18 (1), 138 zeros (127+11)
	w.put(1|106<<1, 8) // code 18 (1), 117 zeros (106+11)
	w.put(0, 1)        // 256 (end of block): length 1
	w.put(0, 1)        // distance 0: length 1
	w.put(1, 1)        // end of block
}

// A run of empty dynamic-Huffman blocks (valid DEFLATE, decoding to
// nothing) was decoded to the end of the 64 MiB the compressed body is
// read to: about 20 times what the scanner spends on the costliest plain
// body of that length (64 MiB: about 7 s against 0.4 s), all inside
// RoundTrip, which a context's end does not stop when the body's Close
// does not interrupt its Read (any bytes.Reader body), for a request that
// then costs the zero Cost. The compressed body is read no further than
// twice what it decoded to, and 64 KiB more.
func TestGzipEmptyBlocksReadLittle(t *testing.T) {
	const size = 8 << 20
	w := &emptyBits{}
	for len(w.buf) < size {
		w.emptyDynamicBlock()
	}
	gz := append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, w.buf...)
	var read int64
	req, _ := http.NewRequest(http.MethodPost, "https://api.openai.com/v1/chat/completions", bytes.NewReader(gz))
	req.GetBody = func() (io.ReadCloser, error) {
		return io.NopCloser(&gzCounter{r: bytes.NewReader(gz), n: &read}), nil
	}
	req.Header.Set("Content-Encoding", "gzip")
	if c := polite.EstimateCost(req); c != (polite.Cost{}) {
		t.Errorf("EstimateCost of empty blocks = %+v, want the zero Cost", c)
	}
	if read > 256<<10 {
		t.Errorf("EstimateCost read %d bytes of %d of gzip that decode to nothing, want at most 256 KiB", read, len(gz))
	}
}

// gzCounter counts the bytes read through it in n.
type gzCounter struct {
	r io.Reader
	n *int64
}

func (c *gzCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}
