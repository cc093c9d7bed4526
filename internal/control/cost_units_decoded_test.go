package control

import (
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// fourOthersState is the binary form a key takes whose first answer (at
// t0+1s) stated quotas of points, credits, images and seconds: four cost
// units, none a token unit, none declared by a request.
const fourOthersState = "02018080d0bccfafe1e33181e8a1e6fd220102010000000000000104000081a8d6b90700000100010100000000000000000000009a9999999999014081a8d6b9070000008094ebdc030000000000000000000000000406706f696e747301000763726564697473010006696d616765730100077365636f6e647301000402783000000281a8d6b907a18d0680b09dc2df010000000000000000a08d0681a8d6b907818891bec6030102783100010281a8d6b907a18d0680b09dc2df010000000000000000a08d0681a8d6b907818891bec6030102783200020281a8d6b907a18d0680b09dc2df010000000000000000a08d0681a8d6b907818891bec6030102783300030281a8d6b907a18d0680b09dc2df010000000000000000a08d0681a8d6b907818891bec603010e01010101"

// A state decoded from a Store's binary form holding four other units,
// none declared, makes room for tokens: the tokens quota (1000 a minute,
// 400 left after A) is read, and B (600) waits (with every unit kept for
// the state's life, it stayed unread, and B was granted).
func TestDecodedFourOthersLeaveTokenRoom(t *testing.T) {
	var qs []parse.Quota
	for i, u := range []string{"points", "credits", "images", "seconds"} {
		qs = append(qs, parse.Quota{Policy: fmt.Sprint("x", i), Unit: u, Limit: 100000, Window: time.Minute, Remaining: 100000, Reset: time.Minute - 3*time.Second, Dialect: "ietf"})
	}
	qs = append(qs, parse.Quota{Policy: "tok", Unit: "tokens", Limit: 1000, Window: time.Minute, Remaining: 400, Reset: time.Minute, Dialect: "ietf"})
	tok := Cost{Tokens: 600}
	for _, decoded := range []bool{false, true} {
		t.Run(fmt.Sprint("decoded=", decoded), func(t *testing.T) {
			var s State
			if decoded {
				b, _ := hex.DecodeString(fourOthersState)
				if err := s.UnmarshalBinary(b); err != nil {
					t.Fatal(err)
				}
			}
			runFSteps(t, &s, &Config{}, []fstep{
				{2 * time.Second, 'a', "A", tok, nil, ReasonNone},
				{3 * time.Second, 'r', "A", tok, qs, ReasonNone},
				{4 * time.Second, 'a', "B", tok, nil, ReasonQuota},
			})
			var units []string
			for _, u := range s.costs.units {
				units = append(units, u.name)
			}
			t.Logf("units %v", units)
		})
	}
}
