package polite_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// A Basic credential whose user name is the secret and whose password is
// empty (Stripe's API key, "sk_...:"), decoded, was hidden only as
// "user:" with its colon: a Base error quoting the user name alone had
// the API key logged whole.
func TestLogHidesDecodedBasicUserToken(t *testing.T) {
	const key = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
	h := http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(key+":"))}}
	logs := loggedWithHeader(t, h, "invalid API key "+key+" (revoked)")
	if !strings.Contains(logs, "EOF") || strings.Contains(logs, key) {
		t.Errorf("the log shows the Basic user name (the API key), decoded:\n%s", logs)
	}
}

// When one credential was a prefix of another (here an X-Api-Key of a
// bearer token), the shorter, hidden first in the header map's order, cut
// the longer one's match, and its tail was logged in about half the runs.
// Credentials are hidden longest first.
func TestLogHidesCredentialWhateverMapOrder(t *testing.T) {
	h := http.Header{"Authorization": {"Bearer tok-abcdef0123456789TAIL"}, "X-Api-Key": {"tok-abcdef0123"}}
	for i := range 40 {
		logs := loggedWithHeader(t, h, "token tok-abcdef0123456789TAIL rejected")
		if strings.Contains(logs, "456789TAIL") {
			t.Fatalf("run %d: the log shows the bearer token's tail:\n%s", i, logs)
		}
	}
}

// Each cookie's value was hidden in turn: a value that is a prefix of a
// later cookie's value cut that one's match, and its tail was logged.
func TestLogHidesEachCookieWhole(t *testing.T) {
	h := http.Header{"Cookie": {"uid=8f14e45fceea; session=8f14e45fceea167a5a36dedd4bea2543"}}
	logs := loggedWithHeader(t, h, "cookie session=8f14e45fceea167a5a36dedd4bea2543 rejected")
	if strings.Contains(logs, "167a5a36dedd4bea2543") {
		t.Errorf("the log shows the session cookie's tail:\n%s", logs)
	}
}
