package parse

// This file reads the Anthropic family:
// anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-
// {limit,remaining,reset}, four buckets at once. Resets are RFC 3339
// instants when the bucket is fully replenished; on a full bucket they are
// often a second before Date, and clamp to 0. The window is not stated.
// The unified-* subscription family reports utilisation fractions, not
// counts, and is not read.
// Source: https://docs.anthropic.com/en/api/rate-limits#response-headers

var anthropicUnits = [...]string{"requests", "tokens", "input-tokens", "output-tokens"}

func (p *parser) anthropic() { p.unitTriplets(sAnthropic, anthropicUnits[:], "anthropic") }
