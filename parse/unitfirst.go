package parse

// This file reads the unit-first family, dialects.md §2 rows 35–36 and
// §3.7: x-ratelimit-{requests,complexity,api-units}-{limit,remaining,reset},
// sent by Linear (resets in epoch milliseconds, complexity in points) and
// the RapidAPI gateway (resets in delta seconds, plan units). Both readings
// follow from the magnitude rule (§3.1).
// Sources: https://linear.app/developers/rate-limiting; a RapidAPI
// (AeroDataBox) capture quoted in dialects.md.

var unitFirstUnits = [...]string{"requests", "points", "api-units"}

func (p *parser) unitFirst() {
	for u, unit := range unitFirstUnits {
		s := sUnitFirst + slot(3*u) // limit, remaining, reset
		if !(p.has(s) || p.has(s+1)) {
			continue
		}
		q := newQuota("linear")
		q.Unit = unit
		q.Limit, q.Remaining, q.Reset = p.count(s), p.count(s+1), p.reset(s+2)
		p.add(q)
	}
}
