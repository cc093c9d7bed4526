package parse

// This file reads the OpenAI family:
// x-ratelimit-{limit,remaining,reset}-{requests,tokens}, sent by OpenAI,
// Groq, Azure OpenAI and other OpenAI-compatible APIs. Resets are Go
// duration strings ("6m0s", "1m51.535s", "12ms") until the bucket is
// fully refilled; a bare number follows the magnitude rule: Azure sends
// bare seconds, some compatible servers epoch seconds. The window is
// never stated: Groq uses the same names for per-day request buckets.
// Source: https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers

var openAIUnits = [...]string{"requests", "tokens"}

func (p *parser) openAI() {
	for u, unit := range openAIUnits {
		s := sOpenAI + slot(3*u) // limit, remaining, reset
		if !(p.has(s) || p.has(s+1)) {
			continue
		}
		q := newQuota("openai")
		q.Unit = unit
		q.Limit, q.Remaining = countOf(p.get(s)), countOf(p.get(s+1))
		r := p.get(s + 2)
		if r == nil && unit == "tokens" {
			r = p.get(azureResetTokens)
		}
		q.Reset = goDuration(r, p.origin, p.now)
		p.add(q)
	}
}
