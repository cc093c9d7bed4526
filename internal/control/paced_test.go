package control

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// steadyOutcome draws an outcome as a server that states one quota of
// requests sends them: mostly an answer accepted with its quota (a limit
// small, exact or large, a window of a second or a minute, what is left
// and the reset), now and then nothing, a quota spent, another policy, a
// refusal or a failure; when calm, nearly always the quota.
func steadyOutcome(next func() byte, b byte, calm bool) Outcome {
	o := Outcome{First: b&8 != 0, Bytes: int64(next()) - 1, Rand: uint64(next()) << 40}
	if next()%4 == 0 {
		o.Dated, o.Skew = true, time.Duration(int64(next())-128)*time.Duration(10*time.Millisecond)
	}
	kind := next() % 16
	if calm && next()%8 != 0 || kind == 10 && next()%8 != 0 || kind == 11 && next()%8 != 0 ||
		kind >= 12 && kind <= 14 && next()%4 != 0 {
		kind = 0 // another policy, or a quota of tokens, stays; refusals and failures: seldom
	}
	limits := [...]int64{4, 100, 1000, 1_000_000_000}
	windows := [...]time.Duration{time.Second, time.Minute, 0, time.Hour}
	resets := [...]time.Duration{time.Second / 2, time.Minute, time.Hour, 0}
	q := parse.Quota{Policy: "api", Dialect: "ietf", Limit: limits[next()%4], Window: windows[next()%4],
		Remaining: int64(next() % 64), Reset: resets[next()%4]}
	if q.Limit > 1000 {
		q.Remaining = q.Limit - int64(next())
	}
	switch kind {
	case 0, 1, 2, 3, 4, 5, 6, 7: // the quota
		if next()%8 == 0 {
			q.Dialect = "github"
		}
		o.Quotas = []parse.Quota{q}
	case 8:
		// nothing stated
	case 9:
		q.Remaining = 0
		o.Quotas = []parse.Quota{q}
	case 10:
		q.Policy = "other"
		o.Quotas = []parse.Quota{q}
	case 11:
		q.Unit = "tokens"
		o.Quotas = []parse.Quota{q}
	case 12, 13:
		o.Refused = true
		o.Quotas = []parse.Quota{q}
		o.Refusal = Refusal{Given: next()%2 == 0, Wait: time.Duration(next()) * 10 * time.Millisecond, Reason: ReasonRetryAfter,
			Backoff: time.Duration(next()) * 10 * time.Millisecond, Retryable: next()%2 == 0, MaxWait: time.Minute}
	case 14:
		o.Failed = true
	case 15:
		o.Keep = true
		o.Quotas = []parse.Quota{q}
	}
	return o
}

// TestPacedPathMatchesFull runs the differential drive with the outcomes
// of a server that states one quota, and checks that the paced path was
// taken often: it must leave the States as the full path does.
func TestPacedPathMatchesFull(t *testing.T) {
	total, paced := 0, 0
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d))
		next := func() byte { return byte(r.Uint32()) }
		steps := 400
		_, p := drive(t, next, steps, steadyOutcome)
		paced += p
		total += steps
	}
	t.Logf("paced path eligible in %d of %d steps", paced, total)
	if paced < total/20 { // half the steps are Acquires
		t.Fatalf("paced path eligible in %d of %d steps, want at least a tenth of the Acquires: the test no longer exercises it", paced, total)
	}
}

// FuzzPacedPath runs the differential drive with the outcomes of a server
// that states one quota on any bytes.
func FuzzPacedPath(f *testing.F) {
	f.Add([]byte{})
	addRandomSeeds(f, 3, 4)
	f.Fuzz(func(t *testing.T, data []byte) {
		drive(t, byteReader(data), min(len(data), 2000), steadyOutcome)
	})
}
