package polite_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/politehttp/polite"
)

// pdfOfPages returns a PDF of pages pages, each holding about 40 lines of
// text: a short report.
func pdfOfPages(pages int) []byte {
	var b strings.Builder
	var offs []int
	obj := func(s string) { offs = append(offs, b.Len()); fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offs), s) }
	b.WriteString("%PDF-1.4\n")
	kids := make([]string, pages)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for i := 0; i < pages; i++ {
		var s strings.Builder
		s.WriteString("BT /F1 10 Tf 50 780 Td 12 TL\n")
		for l := 0; l < 40; l++ {
			fmt.Fprintf(&s, "(Page %d line %d: quarterly revenue rose in every region we report.) '\n", i+1, l+1)
		}
		s.WriteString("ET")
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", s.Len(), s.String()))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, xref)
	return []byte(b.String())
}

// EstimateCost counts an inline file 1,600 tokens whatever its size, and
// a PDF costs more: Anthropic and OpenAI both put into the context the
// text of each page and an image of it, 1,500 to 3,000 tokens a page to
// Anthropic. A 20-page report (~85 KB of base64) is 30,000 tokens or
// more. The documentation of llmcost.AttachmentTokens said only that a
// PDF of many pages costs more; it now says how much, why the estimate
// does not follow a file's bytes (a page of text is a few KB, a scanned
// one a MB, and a rate by the byte that covered the first would count a
// scanned report at millions of tokens, above any quota, which fails a
// request at once, unsent), and that a caller who knows a PDF's pages
// adds them (ExampleEstimateCost_pdf). A PDF counts as one file, whatever
// its pages.
func TestEstimateCostPDFIsOneFile(t *testing.T) {
	for _, pages := range []int{1, 20} {
		pdf := base64.StdEncoding.EncodeToString(pdfOfPages(pages))
		for _, tc := range []struct{ name, url, body string }{
			{"anthropic document", "https://api.anthropic.com/v1/messages", `{"max_tokens":1000,"messages":[{"content":[{"source":{"data":"` + pdf +
				`","media_type":"application/pdf","type":"base64"},"type":"document"},{"text":"Summarise.","type":"text"}],"role":"user"}],"model":"claude-sonnet-4-5"}`},
			{"openai chat file", "https://api.openai.com/v1/chat/completions", `{"messages":[{"content":[{"file":{"file_data":"data:application/pdf;base64,` + pdf +
				`","filename":"report.pdf"},"type":"file"},{"text":"Summarise.","type":"text"}],"role":"user"}],"model":"gpt-4.1","max_completion_tokens":1000}`},
		} {
			req, _ := http.NewRequest(http.MethodPost, tc.url, strings.NewReader(tc.body))
			if c := polite.EstimateCost(req); c.InputTokens < 1600 || c.InputTokens > 1620 {
				t.Errorf("%s: a %d-page PDF (%d bytes of base64): EstimateCost = %v, want 1,600 input tokens and the text's few",
					tc.name, pages, len(pdf), c)
			}
		}
	}
}
