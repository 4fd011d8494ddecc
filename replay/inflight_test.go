package replay

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestInflightIDs: the list, and the map it turns into, find what a map
// from string(id) finds, through puts of ids already in flight (the later
// request shadows the earlier) and deletes of ids not there.
func TestInflightIDs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var f inflightIDs
		want := map[string]*interaction{}
		its := make([]interaction, 100)
		ids := 4 + round%40 // some rounds stay under the list's size, some go past it
		for op := range 400 {
			id := []byte(strconv.Itoa(r.IntN(ids)))
			switch r.IntN(3) {
			case 0:
				f.put(id, &its[op%len(its)])
				want[string(id)] = &its[op%len(its)]
			case 1:
				f.del(id)
				delete(want, string(id))
			}
			for k := range ids {
				id := strconv.Itoa(k)
				if got := f.get([]byte(id)); got != want[id] {
					t.Fatalf("round %d op %d: get(%s) = %p, a map has %p", round, op, id, got, want[id])
				}
			}
		}
	}
	var f inflightIDs
	if f.get(nil) != nil {
		t.Fatal("an id nobody put found something")
	}
}
