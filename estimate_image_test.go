package polite_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/politehttp/polite"
)

// llmcost.AttachmentTokens said 1,600 was "about the most an image
// costs". It is what a large image costs Anthropic, but OpenAI's
// patch-based models count a large image as 1,536 patches times the
// model's multiplier: 1.62 for gpt-4.1-mini, 2.46 for gpt-4.1-nano (3,779
// tokens), and gpt-4o-mini's tiles more still. The documentation now says
// so, and why an image still counts 1,600 tokens whatever its bytes: its
// cost follows its pixels and the model, which its bytes do not tell (a
// flat 2048x2048 PNG is 11 KB as a data URL, noise of a sixteenth of its
// pixels 30 times that), and a server that counts more is learned from
// its answers. The estimate of an image does not follow its bytes.
func TestEstimateCostImageWhateverItsBytes(t *testing.T) {
	encode := func(img image.Image) string {
		var buf bytes.Buffer
		png.Encode(&buf, img)
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	noisy := image.NewGray(image.Rect(0, 0, 512, 512))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range noisy.Pix {
		noisy.Pix[i] = uint8(rng.IntN(256))
	}
	images := []string{
		encode(image.NewGray(image.Rect(0, 0, 2048, 2048))), // flat: 11 KB
		encode(noisy), // 512x512 of noise: 350 KB
		encode(image.NewGray(image.Rect(0, 0, 8, 8))),
		"https://example.com/photo.jpg",
	}
	est := func(urls ...string) polite.Cost {
		parts := make([]string, len(urls))
		for i, u := range urls {
			parts[i] = `{"image_url":{"detail":"high","url":"` + u + `"},"type":"image_url"},`
		}
		body := `{"messages":[{"content":[` + strings.Join(parts, "") + `{"text":"Compare these.","type":"text"}],"role":"user"}],"model":"gpt-4.1-nano","max_completion_tokens":500}`
		req, _ := http.NewRequest(http.MethodPost, "https://api.openai.com/v1/chat/completions", strings.NewReader(body))
		return polite.EstimateCost(req)
	}
	text := est()
	for _, u := range images {
		if c := est(u); c.InputTokens-text.InputTokens != 1600 {
			t.Errorf("an image of %d bytes: EstimateCost = %v, %d more than without it, want 1,600 (llmcost.AttachmentTokens)",
				len(u), c, c.InputTokens-text.InputTokens)
		}
	}
	if c := est(images...); c.InputTokens-text.InputTokens != 1600*int64(len(images)) {
		t.Errorf("%d images: EstimateCost = %v, want %d more than without them", len(images), c, 1600*len(images))
	}
}
