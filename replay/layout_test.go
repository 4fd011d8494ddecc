package replay

import (
	"testing"
	"unsafe"
)

// TestInteraction_Layout: what answering reads stays within the first two
// cache lines of a 256-byte interaction.
func TestInteraction_Layout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are for 64-bit platforms")
	}
	var it interaction
	if got := unsafe.Sizeof(it); got != 256 {
		t.Errorf("interaction is %d bytes, want 256", got)
	}
	if end := unsafe.Offsetof(it.note) + 1; end > 128 {
		t.Errorf("hot fields end at byte %d, past 128", end)
	}
}
