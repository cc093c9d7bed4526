package polite_test

import (
	"testing"

	"github.com/politehttp/polite"
)

// A Cost whose Unit was "content-bytes" reported its Amount through In and
// String, as a cost, though the Transport and State.WaitFor never charged
// it: a content-bytes quota is paced by the content of the responses,
// which no request declares. Such a Unit is ignored, as "requests" is, and
// In reports 0 for it.
func TestCostUnitContentBytesIgnored(t *testing.T) {
	c := polite.Cost{Unit: "content-bytes", Amount: 5000}
	if n := c.In("content-bytes"); n != 0 {
		t.Errorf("Cost%+v.In(content-bytes) = %d, want 0: the unit is never charged", c, n)
	}
	if s := c.String(); s != "tokens=0" {
		t.Errorf("Cost%+v.String() = %q, want %q", c, s, "tokens=0")
	}
	c = polite.Cost{Unit: "points", Amount: 5}
	if n := c.In("points"); n != 5 {
		t.Errorf("Cost%+v.In(points) = %d, want 5", c, n)
	}
}
