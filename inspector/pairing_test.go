package inspector

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/store"
)

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
