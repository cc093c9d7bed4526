package llmcost

import (
	"strings"
	"testing"
)

// When Read first skimmed past the first MiB, it skimmed bodies whose
// estimate the skim cannot change: one not of the API's shape at the
// bound (a mail with an attachment POSTed to Microsoft Graph's
// /me/messages: no "model", no "messages"), and an embeddings request (no
// output bound at all). Each read up to 63 MiB more for nothing: 8 MiB
// here, where Read had stopped at Limit. It stops there again for them.
func TestSkimOnlyWhenItCanMatter(t *testing.T) {
	pad := strings.Repeat("QUJD", 2<<20) // 8 MiB
	for _, c := range []struct{ name, path, body string }{
		{"not the API's shape", "/v1.0/me/messages",
			`{"subject":"report","body":{"contentType":"text","content":"see attached"},"attachments":[{"name":"a.bin","contentBytes":"` + pad + `"}]}`},
		{"embeddings, no output bound", "/v1/embeddings",
			`{"model":"text-embedding-3-small","input":["` + pad + `"]}`},
	} {
		r := &countingReader{r: strings.NewReader(c.body)}
		e, ok := Read(r, c.path, 0)
		if r.n > Limit+4<<10 {
			t.Errorf("%s: Read = %+v, %v after reading %d bytes, want at most the first MiB (%d) read: past it nothing can change", c.name, e, ok, r.n, Limit)
		}
	}
}
