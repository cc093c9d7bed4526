package polite_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/politehttp/polite"
)

// A body that is not a JSON object of the API's shape costs the zero Cost
// (EstimateCost), cut at the 1 MiB bound too: a large upload to a path
// that ends in /messages (a mail with attachments, a chat API's message)
// with none of the API's members before the bound ("text" is a message's
// as often) is no LLM request, not 3 + 4096 tokens.
func TestEstimateCostTruncatedOtherBody(t *testing.T) {
	for _, tc := range []struct{ url, body string }{
		{"https://graph.example/v1.0/me/messages", `{"subject":"report","body":{"contentType":"Text","content":"see attached"},"attachments":[{"@odata.type":"#microsoft.graph.fileAttachment","name":"a.pdf","contentBytes":"` + strings.Repeat("QUJD", 400_000) + `"}]}`},
		{"https://chat.example/api/channels/1/messages", `{"content":"` + strings.Repeat("x", 2<<20) + `"}`},
		{"https://chat.example/api/channels/1/messages", `{"text":"` + strings.Repeat("x", 2<<20) + `"}`},
		{"https://api.messaging.example/v1/messages", `{"message_type":"text","text":"hi","to":"447700900000","channel":"mms","image":{"data":"` + strings.Repeat("QUJD", 400_000) + `"}}`},
	} {
		short := strings.Replace(tc.body, strings.Repeat("QUJD", 400_000), "QUJD", 1)
		short = strings.Replace(short, strings.Repeat("x", 2<<20), "x", 1)
		reqShort, _ := http.NewRequest(http.MethodPost, tc.url, strings.NewReader(short))
		req, _ := http.NewRequest(http.MethodPost, tc.url, strings.NewReader(tc.body))
		cShort, c := polite.EstimateCost(reqShort), polite.EstimateCost(req)
		if c != (polite.Cost{}) {
			t.Errorf("%s: a %d-byte JSON body of no LLM API's shape: EstimateCost = %+v, want the zero Cost (the same body, short: %+v)", tc.url, len(tc.body), c, cShort)
		}
	}
}
