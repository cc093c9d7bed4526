package parse

// This file reads the unit-first family, x-ratelimit-{requests,complexity,api-units}-{limit,remaining,reset},
// sent by Linear (resets in epoch milliseconds, complexity in points) and
// the RapidAPI gateway (resets in delta seconds, plan units). Both readings
// follow from the magnitude rule (package documentation, "Normalisation").
// Sources: https://linear.app/developers/rate-limiting; a captured
// response of the RapidAPI gateway (AeroDataBox), in testdata/dialects.txt.

var unitFirstUnits = [...]string{"requests", "points", "api-units"}

func (p *parser) unitFirst() { p.unitTriplets(sUnitFirst, unitFirstUnits[:], "linear") }

// unitTriplets reads one quota per unit from consecutive slots starting at
// base, three a unit (limit, remaining, reset), as the Anthropic and
// unit-first families lay them out. Resets follow the generic rules of
// reset: RFC 3339 for Anthropic, the magnitude rule for bare numbers.
func (p *parser) unitTriplets(base slot, units []string, dialect string) {
	for u, unit := range units {
		s := base + slot(3*u) // limit, remaining, reset
		if !(p.has(s) || p.has(s+1)) {
			continue
		}
		q := newQuota(dialect)
		q.Unit = unit
		q.Limit, q.Remaining, q.Reset = countOf(p.get(s)), countOf(p.get(s+1)), p.reset(s+2)
		p.add(q)
	}
}
