package inspector

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/store"
)

func TestPairID(t *testing.T) {
	tests := []struct{ name, id, want string }{
		{"plain integer", `12`, `12`},
		{"zero", `0`, `0`},
		{"negative integer", `-3`, `-3`},
		{"plain string", `"abc"`, `"abc"`},
		{"escaped string", `"\u0031"`, `"1"`},
		{"escaped quote and slash", `"a\"\/b"`, `"a"/b"`},
		{"non-ASCII string", `"é"`, `"é"`},
		{"escaped non-ASCII", `"\u00e9"`, `"é"`},
		{"fraction of an integer", `1.0`, `1`},
		{"exponent", `1e0`, `1`},
		{"exponent and fraction", `10E-1`, `1`},
		{"positive exponent", `25e+2`, `2500`},
		{"leading zeros in the fraction", `0.0`, `0`},
		{"negative zero", `-0`, `0`},
		{"negative with exponent", `-2.50e1`, `-25`},
		{"not an integer", `1.5`, `15e-1`},
		{"not an integer, other form", `15e-1`, `15e-1`},
		{"too long to write out", `1e100`, `1e100`},
		{"exponent past any id", `1e99999999999`, `1e99999999999`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(pairID([]byte(tt.id))); got != tt.want {
				t.Errorf("pairID(%s) = %s, want %s", tt.id, got, tt.want)
			}
		})
	}
}

// A response pairs with its request however either writes the id, as
// long as the value is the same: a string with escapes, an integer with
// a fraction or an exponent. A string and an integer of the same digits
// do not pair. The table still shows each id as written.
func TestModel_PairingComparesIDValues(t *testing.T) {
	m, _ := openModel(t, writeCassette(t, []frame{
		{store.C2S, 0, `{"jsonrpc":"2.0","id":"\u0031","method":"ping"}`},
		{store.S2C, time.Millisecond, `{"jsonrpc":"2.0","id":"1","result":{}}`},
		{store.C2S, 2 * time.Millisecond, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{store.S2C, 3 * time.Millisecond, `{"jsonrpc":"2.0","id":1.0,"result":{"tools":[]}}`},
		{store.C2S, 4 * time.Millisecond, `{"jsonrpc":"2.0","id":2e0,"method":"ping"}`},
		{store.S2C, 5 * time.Millisecond, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{store.C2S, 6 * time.Millisecond, `{"jsonrpc":"2.0","id":3,"method":"ping"}`},
		{store.S2C, 7 * time.Millisecond, `{"jsonrpc":"2.0","id":"3","result":{}}`},
		{store.C2S, 8 * time.Millisecond, `[{"jsonrpc":"2.0","id":"\u0034","method":"ping"}]`},
		{store.S2C, 9 * time.Millisecond, `{"jsonrpc":"2.0","id":"4","result":{}}`},
	}))
	got := map[uint64]string{}
	for i := range m.Len() {
		r, _ := m.ByIndex(i)
		pair := "none"
		if p, ok := m.ByIndex(r.Pair); ok {
			pair = fmt.Sprint(p.Seq)
		}
		got[r.Seq] = r.ID + " → " + pair
	}
	want := map[uint64]string{
		1: `"\u0031" → 2`, 2: `"1" → 1`,
		3: `1 → 4`, 4: `1.0 → 3`,
		5: `2e0 → 6`, 6: `2 → 5`,
		7: `3 → none`, 8: `"3" → none`,
		9: ` → 10`, 10: `"4" → 9`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ids and pairs (-want +got):\n%s", diff)
	}
}
