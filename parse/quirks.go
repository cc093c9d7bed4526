package parse

import "strings"

// This file gathers the vendor quirks that Header accepts on purpose, each
// with its source (package documentation, "Normalisation"): each is
// bounded to one shape a known server sends. Everything else follows the draft or the dialect's own rules.

// quirkPolicies reads a RateLimit-Policy field that Policies rejected,
// accepting only the Hugging Face Hub shape
//
//	ratelimit-policy: "fixed window";"api";q=500;w=300
//
// which is not RFC 9651 (a String where a parameter key must be). As
// huggingface_hub itself does, the last String before the parameters is
// the name ("api"). The field must be valid once the leading Strings are
// dropped; otherwise it is ignored.
// Sources: huggingface/hub-docs docs/hub/rate-limits.md;
// huggingface/huggingface_hub src/huggingface_hub/utils/_http.py
func quirkPolicies(dst []Policy, vals []string) []Policy {
	s, ok := dropLeadingStrings(strings.Join(vals, ", "))
	if !ok {
		return dst
	}
	ps, err := appendPolicies(dst, []string{s})
	if err != nil {
		return dst
	}
	return ps
}

// dropLeadingStrings rewrites each list member that opens with several
// Strings separated by ";" to keep only the last of them. ok is false when
// nothing was rewritten or a String is unterminated.
func dropLeadingStrings(s string) (string, bool) {
	var b strings.Builder
	changed, start := false, true // start: at the beginning of a member
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			j := stringEnd(s, i)
			if j < 0 {
				return "", false
			}
			if start {
				k := j
				if k < len(s) && s[k] == ';' {
					k++
					for k < len(s) && s[k] == ' ' {
						k++
					}
					if k < len(s) && s[k] == '"' {
						i, changed = k, true // drop this String; the next one names the member
						continue
					}
				}
			}
			b.WriteString(s[i:j])
			i, start = j, false
			continue
		case c == ',':
			start = true
		case c != ' ' && c != '\t':
			start = false
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), changed
}

// stringEnd returns the index just past the String opening at s[i]; -1
// when it is unterminated.
func stringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// windowParam reports whether k names the window of a legacy quota item:
// w, or window as Envoy wrote it before draft-polli-03 ("10;window=1").
// Source: envoyproxy/envoy
// source/extensions/filters/http/ratelimit/ratelimit_headers.cc (2020).
func windowParam(k string) bool {
	return k == "w" || k == "window"
}

// azureResetTokens is where older Azure OpenAI deployments send the token
// reset, in seconds: x-rate-limit-reset-tokens, with "rate-limit" as two
// words. It stands in for x-ratelimit-reset-tokens when that is absent.
// Source: openai/openai-python#937 (a captured 429).
const azureResetTokens = sAzureResetTokens
