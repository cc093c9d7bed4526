package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// minuteDay is an answer stating a key's two token quotas, a minute's and
// a day's (IETF policies of the same unit).
func minuteDay(minLimit, minLeft, dayLimit, dayLeft int64, reset time.Duration) []parse.Quota {
	return []parse.Quota{
		{Policy: "minute", Unit: "tokens", Limit: minLimit, Remaining: minLeft, Reset: reset, Window: time.Minute, Dialect: "ietf"},
		{Policy: "day", Unit: "tokens", Limit: dayLimit, Remaining: dayLeft, Reset: 12 * time.Hour, Window: 24 * time.Hour, Dialect: "ietf"},
	}
}

// fits (PolicyState.Accepted) is the unit's, and a new limit of any of
// its quotas forgot it: a refusal, or an acceptance, stating a new limit
// of the day's quota forgot what was accepted above the minute's, whose
// limit did not change, and a request of 12,000 tokens the server had
// accepted under the minute's 10,000 (an estimate over what it counts)
// failed at once with a CostError. Only a new limit below it forgets it.
func TestFitsKeptWhenAnotherQuotasLimitChanges(t *testing.T) {
	var s State
	cfg := Config{}
	now := t0
	big := new(Lease)
	big.SetCost(Cost{Tokens: 12000})
	if h, ok := s.Acquire(now, &cfg, Ask{}, big); !ok {
		t.Fatalf("first held: %v", h.Reason)
	}
	// Accepted: the server counted 1,000 of the 12,000 declared.
	s.Release(now, &cfg, big, &Outcome{First: true, Served: true, Bytes: -1, Quotas: minuteDay(10000, 9000, 1_000_000, 999_000, time.Minute)})
	if ex := s.Excess(now, &Cost{Tokens: 12000}); ex.Unit != "" {
		t.Fatalf("12,000 beyond %v right after the server accepted it", ex)
	}
	now = now.Add(time.Second)
	small := new(Lease)
	small.SetCost(Cost{Tokens: 500})
	if h, ok := s.Acquire(now, &cfg, Ask{}, small); !ok {
		t.Fatalf("second held: %v", h.Reason)
	}
	// Refused: the minute's quota spent by another client; the day's
	// limit raised meanwhile (the account moved up a tier). The minute's
	// limit is still 10,000.
	s.Release(now, &cfg, small, &Outcome{First: true, Refused: true, Rejected: true, Bytes: -1, Quotas: minuteDay(10000, 0, 2_000_000, 1_990_000, 59*time.Second)})
	if ex := s.Excess(now, &Cost{Tokens: 12000}); ex.Unit != "" {
		t.Errorf("after a refusal stating a new limit of the day's quota alone, 12,000 tokens exceed %s (limit %d): the minute's limit is unchanged and the server accepted 12,000 under it", ex.Unit, ex.Limit)
	}
}
