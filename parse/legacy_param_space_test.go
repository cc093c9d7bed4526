package parse

import (
	"net/http"
	"testing"
	"time"
)

// A legacy ";w=" parameter (draft-03 to 06, Docker Hub, XIQ, Envoy) was
// read with white space trimmed from its value but not from its key: "w=
// 60" stated a window of a minute, "w =60" and "w = 60" stated none.
// Zendesk's reader of the same key=value shape trims both sides, and the
// package docs say values are trimmed of optional white space.
func TestLegacyParamKeyWhiteSpace(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{"100;w=60", "100;w= 60", "100;w =60", "100; w = 60", "100;w\t=60", `100;name = "a"; w = 60`} {
		h := http.Header{"Ratelimit-Limit": {v}, "Ratelimit-Remaining": {"5"}}
		if got := Header(h, now); len(got) != 1 || got[0].Window != time.Minute {
			t.Errorf("RateLimit-Limit %q: %v, want one quota with a window of 1m, as for \"100;w= 60\"", v, got)
		}
	}
}
