package parse

import "net/textproto"

// This file lists every header field that Header reads. Families whose
// fields form a grid (unit × field, period × field) occupy consecutive
// slots, so keep each group in order. Keys are in canonical form
// ([net/textproto.CanonicalMIMEHeaderKey]).

// A slot is a header field that some family reads.
type slot uint8

const (
	sNone slot = iota
	sDate      // Date, the origin of absolute resets

	// IETF RateLimit fields and their Beta- twins (ietf.go, rlfields.go)
	sRateLimit           // Ratelimit
	sRateLimitPolicy     // Ratelimit-Policy
	sBetaRateLimit       // Beta-Ratelimit
	sBetaRateLimitPolicy // Beta-Ratelimit-Policy

	// RateLimit-* triplet of drafts 03 to 06, GitLab extras (draft06.go)
	sLimit     // Ratelimit-Limit
	sRemaining // Ratelimit-Remaining
	sReset     // Ratelimit-Reset
	sResetTime // Ratelimit-Resettime
	sName      // Ratelimit-Name
	sObserved  // Ratelimit-Observed

	// X-RateLimit-* triplet: GitHub, Discord, Reddit, Envoy... (xratelimit.go)
	sXLimit      // X-Ratelimit-Limit
	sXRemaining  // X-Ratelimit-Remaining
	sXReset      // X-Ratelimit-Reset
	sXUsed       // X-Ratelimit-Used
	sXResetAfter // X-Ratelimit-Reset-After
	sXResource   // X-Ratelimit-Resource
	sXBucket     // X-Ratelimit-Bucket

	// X-Rate-Limit-* triplet: Okta, Twitter, Zendesk (xdashratelimit.go)
	sDashLimitBare // X-Rate-Limit
	sDashLimit     // X-Rate-Limit-Limit
	sDashRemaining // X-Rate-Limit-Remaining
	sDashReset     // X-Rate-Limit-Reset

	// OpenAI, Groq, Azure OpenAI: x-ratelimit-{limit,remaining,reset}-{unit} (openai.go)
	sOpenAI           // X-Ratelimit-Limit-Requests
	_                 // X-Ratelimit-Remaining-Requests
	_                 // X-Ratelimit-Reset-Requests
	_                 // X-Ratelimit-Limit-Tokens
	_                 // X-Ratelimit-Remaining-Tokens
	_                 // X-Ratelimit-Reset-Tokens
	sAzureResetTokens // X-Rate-Limit-Reset-Tokens

	// Linear, RapidAPI: x-ratelimit-{unit}-{limit,remaining,reset} (unitfirst.go)
	sUnitFirst // X-Ratelimit-Requests-Limit
	_          // X-Ratelimit-Requests-Remaining
	_          // X-Ratelimit-Requests-Reset
	_          // X-Ratelimit-Complexity-Limit
	_          // X-Ratelimit-Complexity-Remaining
	_          // X-Ratelimit-Complexity-Reset
	_          // X-Ratelimit-Api-Units-Limit
	_          // X-Ratelimit-Api-Units-Remaining
	_          // X-Ratelimit-Api-Units-Reset

	// Anthropic: anthropic-ratelimit-{unit}-{limit,remaining,reset} (anthropic.go)
	sAnthropic // Anthropic-Ratelimit-Requests-Limit
	_          // Anthropic-Ratelimit-Requests-Remaining
	_          // Anthropic-Ratelimit-Requests-Reset
	_          // Anthropic-Ratelimit-Tokens-Limit
	_          // Anthropic-Ratelimit-Tokens-Remaining
	_          // Anthropic-Ratelimit-Tokens-Reset
	_          // Anthropic-Ratelimit-Input-Tokens-Limit
	_          // Anthropic-Ratelimit-Input-Tokens-Remaining
	_          // Anthropic-Ratelimit-Input-Tokens-Reset
	_          // Anthropic-Ratelimit-Output-Tokens-Limit
	_          // Anthropic-Ratelimit-Output-Tokens-Remaining
	_          // Anthropic-Ratelimit-Output-Tokens-Reset

	// Twitter/X: x-{app,user}-limit-24hour-{limit,remaining,reset} (twitter.go)
	sTwitter // X-App-Limit-24hour-Limit
	_        // X-App-Limit-24hour-Remaining
	_        // X-App-Limit-24hour-Reset
	_        // X-User-Limit-24hour-Limit
	_        // X-User-Limit-24hour-Remaining
	_        // X-User-Limit-24hour-Reset

	// Kong, Tomorrow.io: X-RateLimit-{Limit,Remaining}-<period> (kong.go)
	sKong // X-Ratelimit-Limit-Second
	_     // X-Ratelimit-Remaining-Second
	_     // X-Ratelimit-Limit-Minute
	_     // X-Ratelimit-Remaining-Minute
	_     // X-Ratelimit-Limit-Hour
	_     // X-Ratelimit-Remaining-Hour
	_     // X-Ratelimit-Limit-Day
	_     // X-Ratelimit-Remaining-Day
	_     // X-Ratelimit-Limit-Month
	_     // X-Ratelimit-Remaining-Month
	_     // X-Ratelimit-Limit-Year
	_     // X-Ratelimit-Remaining-Year

	// HubSpot (hubspot.go)
	sHubSpotDaily             // X-Hubspot-Ratelimit-Daily
	sHubSpotDailyRemaining    // X-Hubspot-Ratelimit-Daily-Remaining
	sHubSpotInterval          // X-Hubspot-Ratelimit-Interval-Milliseconds
	sHubSpotMax               // X-Hubspot-Ratelimit-Max
	sHubSpotRemaining         // X-Hubspot-Ratelimit-Remaining
	sHubSpotSecondly          // X-Hubspot-Ratelimit-Secondly
	sHubSpotSecondlyRemaining // X-Hubspot-Ratelimit-Secondly-Remaining

	// Shopify, Zendesk (shopify.go, zendesk.go)
	sShopify        // X-Shopify-Shop-Api-Call-Limit
	sZendeskTickets // Zendesk-Ratelimit-Tickets-Index

	numSlots
)

// Families, as bits of a set.
const (
	fIETF uint32 = 1 << iota
	fBeta
	fDraft06
	fX
	fDash
	fOpenAI
	fUnitFirst
	fAnthropic
	fTwitter
	fKong
	fHubSpot
	fShopify
	fZendesk
)

// family returns the family that reads slot s; 0 for Date. It relies on
// the order of the slot groups above.
func family(s slot) uint32 {
	switch {
	case s < sRateLimit:
		return 0
	case s < sBetaRateLimit:
		return fIETF
	case s < sLimit:
		return fBeta
	case s < sXLimit:
		return fDraft06
	case s < sDashLimitBare:
		return fX
	case s < sOpenAI:
		return fDash
	case s < sUnitFirst:
		return fOpenAI
	case s < sAnthropic:
		return fUnitFirst
	case s < sTwitter:
		return fAnthropic
	case s < sKong:
		return fTwitter
	case s < sHubSpotDaily:
		return fKong
	case s < sShopify:
		return fHubSpot
	case s == sShopify:
		return fShopify
	default:
		return fZendesk
	}
}

// lead marks the first bytes of the names slotOf may know.
var lead = [256]bool{
	'A': true, 'B': true, 'D': true, 'R': true, 'X': true, 'Z': true,
	'a': true, 'b': true, 'd': true, 'r': true, 'x': true, 'z': true,
}

// candidate reports whether slotOf may know k: a test cheap enough to
// inline, which rejects most field names of a response.
func candidate(k string) bool {
	return len(k) >= len("Date") && lead[k[0]]
}

// slotOf returns the slot of header field name k, matched case-insensitively;
// sNone when no family reads it. It does not allocate for canonical names.
func slotOf(k string) slot {
	// Reject most names by their first bytes; this runs for every field of
	// every response.
	if len(k) < len("Date") {
		return sNone
	}
	switch k[0] | 0x20 {
	case 'd':
		if len(k) == len("Date") && k[1]|0x20 == 'a' && k[2]|0x20 == 't' && k[3]|0x20 == 'e' {
			return sDate
		}
		return sNone
	case 'r', 'a', 'b', 'z': // Ratelimit, Anthropic, Beta, Zendesk
		if c := k[1] | 0x20; c != 'a' && c != 'n' && c != 'e' {
			return sNone
		}
	case 'x': // X-Ratelimit, X-Rate-Limit, X-App, X-User, X-Hubspot, X-Shopify
		if k[1] != '-' {
			return sNone
		}
		switch k[2] | 0x20 {
		case 'r', 'a', 'u', 'h', 's':
		default:
			return sNone
		}
		if c := k[3] | 0x20; c != 'a' && c != 'p' && c != 's' && c != 'u' && c != 'h' {
			return sNone
		}
	default:
		return sNone
	}
	if s := canonicalSlot(k); s != sNone || isCanonical(k) {
		return s
	}
	return canonicalSlot(textproto.CanonicalMIMEHeaderKey(k))
}

func canonicalSlot(k string) slot {
	switch k {
	case "Ratelimit":
		return sRateLimit
	case "Ratelimit-Policy":
		return sRateLimitPolicy
	case "Beta-Ratelimit":
		return sBetaRateLimit
	case "Beta-Ratelimit-Policy":
		return sBetaRateLimitPolicy
	case "Ratelimit-Limit":
		return sLimit
	case "Ratelimit-Remaining":
		return sRemaining
	case "Ratelimit-Reset":
		return sReset
	case "Ratelimit-Resettime":
		return sResetTime
	case "Ratelimit-Name":
		return sName
	case "Ratelimit-Observed":
		return sObserved
	case "X-Ratelimit-Limit":
		return sXLimit
	case "X-Ratelimit-Remaining":
		return sXRemaining
	case "X-Ratelimit-Reset":
		return sXReset
	case "X-Ratelimit-Used":
		return sXUsed
	case "X-Ratelimit-Reset-After":
		return sXResetAfter
	case "X-Ratelimit-Resource":
		return sXResource
	case "X-Ratelimit-Bucket":
		return sXBucket
	case "X-Rate-Limit":
		return sDashLimitBare
	case "X-Rate-Limit-Limit":
		return sDashLimit
	case "X-Rate-Limit-Remaining":
		return sDashRemaining
	case "X-Rate-Limit-Reset":
		return sDashReset
	case "X-Ratelimit-Limit-Requests":
		return sOpenAI
	case "X-Ratelimit-Remaining-Requests":
		return sOpenAI + 1
	case "X-Ratelimit-Reset-Requests":
		return sOpenAI + 2
	case "X-Ratelimit-Limit-Tokens":
		return sOpenAI + 3
	case "X-Ratelimit-Remaining-Tokens":
		return sOpenAI + 4
	case "X-Ratelimit-Reset-Tokens":
		return sOpenAI + 5
	case "X-Rate-Limit-Reset-Tokens":
		return sAzureResetTokens
	case "X-Ratelimit-Requests-Limit":
		return sUnitFirst
	case "X-Ratelimit-Requests-Remaining":
		return sUnitFirst + 1
	case "X-Ratelimit-Requests-Reset":
		return sUnitFirst + 2
	case "X-Ratelimit-Complexity-Limit":
		return sUnitFirst + 3
	case "X-Ratelimit-Complexity-Remaining":
		return sUnitFirst + 4
	case "X-Ratelimit-Complexity-Reset":
		return sUnitFirst + 5
	case "X-Ratelimit-Api-Units-Limit":
		return sUnitFirst + 6
	case "X-Ratelimit-Api-Units-Remaining":
		return sUnitFirst + 7
	case "X-Ratelimit-Api-Units-Reset":
		return sUnitFirst + 8
	case "Anthropic-Ratelimit-Requests-Limit":
		return sAnthropic
	case "Anthropic-Ratelimit-Requests-Remaining":
		return sAnthropic + 1
	case "Anthropic-Ratelimit-Requests-Reset":
		return sAnthropic + 2
	case "Anthropic-Ratelimit-Tokens-Limit":
		return sAnthropic + 3
	case "Anthropic-Ratelimit-Tokens-Remaining":
		return sAnthropic + 4
	case "Anthropic-Ratelimit-Tokens-Reset":
		return sAnthropic + 5
	case "Anthropic-Ratelimit-Input-Tokens-Limit":
		return sAnthropic + 6
	case "Anthropic-Ratelimit-Input-Tokens-Remaining":
		return sAnthropic + 7
	case "Anthropic-Ratelimit-Input-Tokens-Reset":
		return sAnthropic + 8
	case "Anthropic-Ratelimit-Output-Tokens-Limit":
		return sAnthropic + 9
	case "Anthropic-Ratelimit-Output-Tokens-Remaining":
		return sAnthropic + 10
	case "Anthropic-Ratelimit-Output-Tokens-Reset":
		return sAnthropic + 11
	case "X-App-Limit-24hour-Limit":
		return sTwitter
	case "X-App-Limit-24hour-Remaining":
		return sTwitter + 1
	case "X-App-Limit-24hour-Reset":
		return sTwitter + 2
	case "X-User-Limit-24hour-Limit":
		return sTwitter + 3
	case "X-User-Limit-24hour-Remaining":
		return sTwitter + 4
	case "X-User-Limit-24hour-Reset":
		return sTwitter + 5
	case "X-Ratelimit-Limit-Second":
		return sKong
	case "X-Ratelimit-Remaining-Second":
		return sKong + 1
	case "X-Ratelimit-Limit-Minute":
		return sKong + 2
	case "X-Ratelimit-Remaining-Minute":
		return sKong + 3
	case "X-Ratelimit-Limit-Hour":
		return sKong + 4
	case "X-Ratelimit-Remaining-Hour":
		return sKong + 5
	case "X-Ratelimit-Limit-Day":
		return sKong + 6
	case "X-Ratelimit-Remaining-Day":
		return sKong + 7
	case "X-Ratelimit-Limit-Month":
		return sKong + 8
	case "X-Ratelimit-Remaining-Month":
		return sKong + 9
	case "X-Ratelimit-Limit-Year":
		return sKong + 10
	case "X-Ratelimit-Remaining-Year":
		return sKong + 11
	case "X-Hubspot-Ratelimit-Daily":
		return sHubSpotDaily
	case "X-Hubspot-Ratelimit-Daily-Remaining":
		return sHubSpotDailyRemaining
	case "X-Hubspot-Ratelimit-Interval-Milliseconds":
		return sHubSpotInterval
	case "X-Hubspot-Ratelimit-Max":
		return sHubSpotMax
	case "X-Hubspot-Ratelimit-Remaining":
		return sHubSpotRemaining
	case "X-Hubspot-Ratelimit-Secondly":
		return sHubSpotSecondly
	case "X-Hubspot-Ratelimit-Secondly-Remaining":
		return sHubSpotSecondlyRemaining
	case "X-Shopify-Shop-Api-Call-Limit":
		return sShopify
	case "Zendesk-Ratelimit-Tickets-Index":
		return sZendeskTickets
	case "Date":
		return sDate
	}
	return sNone
}

// isCanonical reports whether k is in the form CanonicalMIMEHeaderKey gives:
// each word capitalised, the rest lower case.
func isCanonical(k string) bool {
	upper := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case upper && 'a' <= c && c <= 'z', !upper && 'A' <= c && c <= 'Z':
			return false
		}
		upper = c == '-'
	}
	return true
}
