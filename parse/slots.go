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

// family returns the family that reads slot s; 0 for Date.
func family(s slot) uint32 { return slotFamily[s] }

// slotFamily holds the family of each slot. It relies on the order of
// the slot groups above.
var slotFamily = func() (t [numSlots]uint32) {
	for s := range t {
		t[s] = familyOf(slot(s))
	}
	return t
}()

// familyOf returns the family that reads slot s; 0 for Date and sNone.
func familyOf(s slot) uint32 {
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

// xFourth marks the fourth bytes of the names of slots that start with
// "X-", and second the second bytes of the others (see slotOf).
var xFourth, second = [256]bool{
	'a': true, 'p': true, 's': true, 'u': true, 'h': true,
	'A': true, 'P': true, 'S': true, 'U': true, 'H': true,
}, [256]bool{'a': true, 'n': true, 'e': true, 'A': true, 'N': true, 'E': true}

// candidate reports whether slotOf may know k: a test cheap enough to
// inline, which rejects most field names of a response.
func candidate(k string) bool {
	return len(k) >= len("Date") && lead[k[0]]
}

// slotOf returns the slot of header field name k, matched case-insensitively;
// sNone when no family reads it. It does not allocate for canonical names.
func slotOf(k string) slot {
	// The IETF pair, the most common names that read does not classify
	// itself.
	if len(k) >= len("Ratelimit") && k[:len("Ratelimit")] == "Ratelimit" {
		if s := ratelimitSlot(k[len("Ratelimit"):]); s != sNone {
			return s
		}
	}
	if len(k) <= len("Date") {
		if k == "Date" {
			return sDate // on every response: no need to hash
		}
		if len(k) < len("Date") {
			return sNone
		}
	}
	// Reject most names that candidate let through by one byte; the
	// switch below checks more, for names no slot has.
	if k[0]|0x20 == 'x' && !xFourth[k[3]] || k[0]|0x20 != 'x' && !second[k[1]] {
		return sNone
	}
	// The canonical names of the most common families share a prefix:
	// compare it, then the rest against constants, which the compiler
	// does with a few loads and no call.
	if k[3] == 'a' { // as in "X-Ra"
		if len(k) > len("X-Ratelimit-") && k[:len("X-Ratelimit-")] == "X-Ratelimit-" {
			if s := xRatelimitSlot(k[len("X-Ratelimit-"):]); s != sNone {
				return s
			}
		} else if len(k) >= len("X-Rate-Limit") && k[:len("X-Rate-Limit")] == "X-Rate-Limit" {
			if s := xRateLimitSlot(k[len("X-Rate-Limit"):]); s != sNone {
				return s
			}
		}
	}
	// Any other canonical name costs a hash and a comparison: most names
	// compared differ in length.
	b := &slotTable[slotHash(k)]
	if s := b[0]; s != sNone && slotNames[s] == k {
		return s
	}
	if s := b[1]; s != sNone && slotNames[s] == k {
		return s
	}
	// Reject most other names by their first bytes, before checking
	// whether they are canonical.
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
	if isCanonical(k) {
		return sNone
	}
	return canonicalSlot(textproto.CanonicalMIMEHeaderKey(k))
}

// xRatelimitSlot returns the slot of the canonical name "X-Ratelimit-" +
// rest; sNone when no family reads it. TestSlotNames checks that it knows
// every such name of slotNames.
func xRatelimitSlot(rest string) slot {
	if len(rest) > 16 {
		// In two parts, each compared inline: the compiler compares a
		// constant of more than 16 bytes by a call.
		switch rest[:16] {
		case "Remaining-Reques":
			if rest[16:] == "ts" {
				return sOpenAI + 1
			}
		case "Requests-Remaini":
			if rest[16:] == "ng" {
				return sUnitFirst + 1
			}
		case "Api-Units-Remain":
			if rest[16:] == "ing" {
				return sUnitFirst + 7
			}
		case "Complexity-Remai":
			if rest[16:] == "ning" {
				return sUnitFirst + 4
			}
		}
		return sNone
	}
	switch rest {
	case "Limit":
		return sXLimit
	case "Remaining":
		return sXRemaining
	case "Reset":
		return sXReset
	case "Used":
		return sXUsed
	case "Reset-After":
		return sXResetAfter
	case "Resource":
		return sXResource
	case "Bucket":
		return sXBucket
	case "Limit-Requests":
		return sOpenAI
	case "Reset-Requests":
		return sOpenAI + 2
	case "Limit-Tokens":
		return sOpenAI + 3
	case "Remaining-Tokens":
		return sOpenAI + 4
	case "Reset-Tokens":
		return sOpenAI + 5
	case "Requests-Limit":
		return sUnitFirst
	case "Requests-Reset":
		return sUnitFirst + 2
	case "Complexity-Limit":
		return sUnitFirst + 3
	case "Complexity-Reset":
		return sUnitFirst + 5
	case "Api-Units-Limit":
		return sUnitFirst + 6
	case "Api-Units-Reset":
		return sUnitFirst + 8
	case "Limit-Second":
		return sKong
	case "Remaining-Second":
		return sKong + 1
	case "Limit-Minute":
		return sKong + 2
	case "Remaining-Minute":
		return sKong + 3
	case "Limit-Hour":
		return sKong + 4
	case "Remaining-Hour":
		return sKong + 5
	case "Limit-Day":
		return sKong + 6
	case "Remaining-Day":
		return sKong + 7
	case "Limit-Month":
		return sKong + 8
	case "Remaining-Month":
		return sKong + 9
	case "Limit-Year":
		return sKong + 10
	case "Remaining-Year":
		return sKong + 11
	}
	return sNone
}

// xRateLimitSlot returns the slot of the canonical name "X-Rate-Limit" +
// rest; sNone when no family reads it. TestSlotNames checks that it knows
// every such name of slotNames.
func xRateLimitSlot(rest string) slot {
	switch rest {
	case "":
		return sDashLimitBare
	case "-Limit":
		return sDashLimit
	case "-Remaining":
		return sDashRemaining
	case "-Reset":
		return sDashReset
	case "-Reset-Tokens":
		return sAzureResetTokens
	}
	return sNone
}

// ratelimitSlot returns the slot of the canonical name "Ratelimit" +
// rest; sNone when no family reads it. TestSlotNames checks that it knows
// every such name of slotNames.
func ratelimitSlot(rest string) slot {
	switch rest {
	case "":
		return sRateLimit
	case "-Policy":
		return sRateLimitPolicy
	case "-Limit":
		return sLimit
	case "-Remaining":
		return sRemaining
	case "-Reset":
		return sReset
	case "-Resettime":
		return sResetTime
	case "-Name":
		return sName
	case "-Observed":
		return sObserved
	}
	return sNone
}

// slotNames holds the canonical name of every slot.
var slotNames = [numSlots]string{
	sRateLimit:                "Ratelimit",
	sRateLimitPolicy:          "Ratelimit-Policy",
	sBetaRateLimit:            "Beta-Ratelimit",
	sBetaRateLimitPolicy:      "Beta-Ratelimit-Policy",
	sLimit:                    "Ratelimit-Limit",
	sRemaining:                "Ratelimit-Remaining",
	sReset:                    "Ratelimit-Reset",
	sResetTime:                "Ratelimit-Resettime",
	sName:                     "Ratelimit-Name",
	sObserved:                 "Ratelimit-Observed",
	sXLimit:                   "X-Ratelimit-Limit",
	sXRemaining:               "X-Ratelimit-Remaining",
	sXReset:                   "X-Ratelimit-Reset",
	sXUsed:                    "X-Ratelimit-Used",
	sXResetAfter:              "X-Ratelimit-Reset-After",
	sXResource:                "X-Ratelimit-Resource",
	sXBucket:                  "X-Ratelimit-Bucket",
	sDashLimitBare:            "X-Rate-Limit",
	sDashLimit:                "X-Rate-Limit-Limit",
	sDashRemaining:            "X-Rate-Limit-Remaining",
	sDashReset:                "X-Rate-Limit-Reset",
	sOpenAI:                   "X-Ratelimit-Limit-Requests",
	sOpenAI + 1:               "X-Ratelimit-Remaining-Requests",
	sOpenAI + 2:               "X-Ratelimit-Reset-Requests",
	sOpenAI + 3:               "X-Ratelimit-Limit-Tokens",
	sOpenAI + 4:               "X-Ratelimit-Remaining-Tokens",
	sOpenAI + 5:               "X-Ratelimit-Reset-Tokens",
	sAzureResetTokens:         "X-Rate-Limit-Reset-Tokens",
	sUnitFirst:                "X-Ratelimit-Requests-Limit",
	sUnitFirst + 1:            "X-Ratelimit-Requests-Remaining",
	sUnitFirst + 2:            "X-Ratelimit-Requests-Reset",
	sUnitFirst + 3:            "X-Ratelimit-Complexity-Limit",
	sUnitFirst + 4:            "X-Ratelimit-Complexity-Remaining",
	sUnitFirst + 5:            "X-Ratelimit-Complexity-Reset",
	sUnitFirst + 6:            "X-Ratelimit-Api-Units-Limit",
	sUnitFirst + 7:            "X-Ratelimit-Api-Units-Remaining",
	sUnitFirst + 8:            "X-Ratelimit-Api-Units-Reset",
	sAnthropic:                "Anthropic-Ratelimit-Requests-Limit",
	sAnthropic + 1:            "Anthropic-Ratelimit-Requests-Remaining",
	sAnthropic + 2:            "Anthropic-Ratelimit-Requests-Reset",
	sAnthropic + 3:            "Anthropic-Ratelimit-Tokens-Limit",
	sAnthropic + 4:            "Anthropic-Ratelimit-Tokens-Remaining",
	sAnthropic + 5:            "Anthropic-Ratelimit-Tokens-Reset",
	sAnthropic + 6:            "Anthropic-Ratelimit-Input-Tokens-Limit",
	sAnthropic + 7:            "Anthropic-Ratelimit-Input-Tokens-Remaining",
	sAnthropic + 8:            "Anthropic-Ratelimit-Input-Tokens-Reset",
	sAnthropic + 9:            "Anthropic-Ratelimit-Output-Tokens-Limit",
	sAnthropic + 10:           "Anthropic-Ratelimit-Output-Tokens-Remaining",
	sAnthropic + 11:           "Anthropic-Ratelimit-Output-Tokens-Reset",
	sTwitter:                  "X-App-Limit-24hour-Limit",
	sTwitter + 1:              "X-App-Limit-24hour-Remaining",
	sTwitter + 2:              "X-App-Limit-24hour-Reset",
	sTwitter + 3:              "X-User-Limit-24hour-Limit",
	sTwitter + 4:              "X-User-Limit-24hour-Remaining",
	sTwitter + 5:              "X-User-Limit-24hour-Reset",
	sKong:                     "X-Ratelimit-Limit-Second",
	sKong + 1:                 "X-Ratelimit-Remaining-Second",
	sKong + 2:                 "X-Ratelimit-Limit-Minute",
	sKong + 3:                 "X-Ratelimit-Remaining-Minute",
	sKong + 4:                 "X-Ratelimit-Limit-Hour",
	sKong + 5:                 "X-Ratelimit-Remaining-Hour",
	sKong + 6:                 "X-Ratelimit-Limit-Day",
	sKong + 7:                 "X-Ratelimit-Remaining-Day",
	sKong + 8:                 "X-Ratelimit-Limit-Month",
	sKong + 9:                 "X-Ratelimit-Remaining-Month",
	sKong + 10:                "X-Ratelimit-Limit-Year",
	sKong + 11:                "X-Ratelimit-Remaining-Year",
	sHubSpotDaily:             "X-Hubspot-Ratelimit-Daily",
	sHubSpotDailyRemaining:    "X-Hubspot-Ratelimit-Daily-Remaining",
	sHubSpotInterval:          "X-Hubspot-Ratelimit-Interval-Milliseconds",
	sHubSpotMax:               "X-Hubspot-Ratelimit-Max",
	sHubSpotRemaining:         "X-Hubspot-Ratelimit-Remaining",
	sHubSpotSecondly:          "X-Hubspot-Ratelimit-Secondly",
	sHubSpotSecondlyRemaining: "X-Hubspot-Ratelimit-Secondly-Remaining",
	sShopify:                  "X-Shopify-Shop-Api-Call-Limit",
	sZendeskTickets:           "Zendesk-Ratelimit-Tickets-Index",
	sDate:                     "Date",
}

// slotTable finds the slot of a canonical name: each entry holds the
// slots whose names hash to its index (see slotHash), at most two.
var slotTable = func() (t [128][2]slot) {
	for s := sDate; s < numSlots; s++ {
		b := &t[slotHash(slotNames[s])]
		if b[0] == sNone {
			b[0] = s
		} else {
			b[1] = s // TestSlotNames checks that no third name lands here
		}
	}
	return t
}()

// slotHash hashes a name of at least two bytes to an index of slotTable,
// from its length and its last two bytes; it spreads the canonical names
// of the slots at most two to an index.
func slotHash(k string) uint {
	n := len(k)
	return (uint(n)*5 + uint(k[n-1])*13 + uint(k[n-2])) & 127
}

// canonicalSlot returns the slot of the canonical name k; sNone when no
// family reads it.
func canonicalSlot(k string) slot {
	if len(k) < 2 {
		return sNone
	}
	b := &slotTable[slotHash(k)]
	if s := b[0]; s != sNone && slotNames[s] == k {
		return s
	}
	if s := b[1]; s != sNone && slotNames[s] == k {
		return s
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
