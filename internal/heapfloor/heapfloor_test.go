package heapfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name         string
		floor, live  uint64
		base, wanted int
	}{
		{"before the first collection the floor sets the runtime's minimum", 32 * mib, 0, 100, 800},
		{"a tiny heap is capped where the minimum meets the floor", 32 * mib, 1 * mib, 100, 800},
		{"a small heap aims at the floor", 32 * mib, 8 * mib, 100, 300},
		{"half the floor: GOGC alone reaches it", 32 * mib, 16 * mib, 100, 100},
		{"a large heap keeps GOGC", 32 * mib, 200 * mib, 100, 100},
		{"a larger GOGC is never lowered", 32 * mib, 8 * mib, 400, 400},
		{"a floor under the runtime's minimum changes nothing", 2 * mib, 0, 100, 100},
		{"GOGC=50 on a small heap", 32 * mib, 4 * mib, 50, 700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentFor(tc.floor, tc.live, tc.base); got != tc.wanted {
				t.Errorf("percentFor(%d MiB, %d MiB, %d) = %d, want %d", tc.floor/mib, tc.live/mib, tc.base, got, tc.wanted)
			}
		})
	}
}

// gcPercent reads GOGC without changing it for long: only this test
// goroutine sets it while the Floor is stopped.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func heapGoal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitPercent collects until the Floor's cleanup has set a GOGC that ok
// accepts, or fails after a deadline: cleanups run on a goroutine of the
// runtime's.
func waitPercent(t *testing.T, f *Floor, what string, ok func(percent int) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		f.mu.Lock()
		got := f.percent
		f.mu.Unlock()
		if ok(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC stayed %d, want %s", got, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// The floor follows the live heap collection by collection: a small heap
// gets a goal near the floor, a large one the goal GOGC gives, and Stop
// puts GOGC back.
func TestFloor_FollowsTheLiveHeap(t *testing.T) {
	const floor = 64 << 20
	base := gcPercent()
	t.Cleanup(func() { debug.SetGCPercent(base) })

	f := Set(floor)
	t.Cleanup(f.Stop)
	waitPercent(t, f, "above GOGC for a small heap", func(p int) bool { return p > base })
	if goal := heapGoal(); goal < floor*9/10 {
		t.Errorf("small heap: goal %d MiB, want about the %d MiB floor", goal>>20, floor>>20)
	}

	big := make([]byte, 2*floor) // live past the floor
	for i := range big {
		big[i] = byte(i)
	}
	waitPercent(t, f, "GOGC itself for a large heap", func(p int) bool { return p == base })
	if goal, want := heapGoal(), uint64(len(big))*uint64(100+base)/100; goal > want*11/10 {
		t.Errorf("large heap: goal %d MiB, want what GOGC=%d gives, about %d MiB", goal>>20, base, want>>20)
	}
	runtime.KeepAlive(big)

	big = nil
	waitPercent(t, f, "above GOGC once the large heap is gone", func(p int) bool { return p > base })

	f.Stop()
	if p := gcPercent(); p != base {
		t.Errorf("after Stop GOGC is %d, want %d", p, base)
	}
	runtime.GC()
	runtime.GC()
	if p := gcPercent(); p != base {
		t.Errorf("a collection after Stop set GOGC to %d, want %d", p, base)
	}
}

// With the collector off the floor leaves it off.
func TestFloor_GOGCOff(t *testing.T) {
	base := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(base) })
	f := Set(64 << 20)
	runtime.GC()
	if p := gcPercent(); p != -1 {
		t.Errorf("GOGC is %d, want it left off (-1)", p)
	}
	f.Stop()
	if p := gcPercent(); p != -1 {
		t.Errorf("after Stop GOGC is %d, want it left off (-1)", p)
	}
}
