// Package heapfloor keeps Go's garbage collector from running while a
// process's heap is small.
//
// A recording proxy keeps a few MiB live but allocates garbage quickly
// (bbolt materializes every leaf page a commit touches; net/http builds
// headers per request). With the default GOGC=100 the collector's goal is
// then the runtime's 4 MiB minimum, and it runs every couple of MiB
// allocated: some 6 % of mcpspy's CPU went to collecting. A floor lets
// the heap grow to the floor first.
//
// It must never raise the goal of a large heap: mcpspy holds a 64 MiB
// frame in under 3× its size, so past the floor the collector behaves
// exactly as GOGC says. The floor is a goal, not a limit; it never makes
// the collector run more often than GOGC would.
package heapfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// runtimeHeapMinimum is the Go runtime's smallest goal at GOGC=100, which
// it scales with GOGC (the GC guide's "4 MiB"): a percent above
// floor/runtimeHeapMinimum×100 would lift the goal of even an empty heap
// past the floor.
const runtimeHeapMinimum = 4 << 20

// liveMetric is the heap the last collection found reachable.
const liveMetric = "/gc/heap/live:bytes"

// Floor adjusts GOGC after each collection so that the collector's next
// goal is about max(floor, what GOGC alone would give). Stop ends it.
type Floor struct {
	floor uint64
	base  int // the GOGC in effect when Set was called

	mu      sync.Mutex
	stopped bool
	percent int // the value last set
	sample  []metrics.Sample
}

// Set starts a floor of floor bytes under the collector's goal and returns
// it. With GOGC=off (the collector disabled) it does nothing.
func Set(floor uint64) *Floor {
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	f := &Floor{floor: floor, base: base, percent: base, sample: []metrics.Sample{{Name: liveMetric}}}
	if base < 0 {
		f.stopped = true
		return f
	}
	f.adjust()
	f.arm()
	return f
}

// Stop puts back the GOGC in effect before Set.
func (f *Floor) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	f.stopped = true
	debug.SetGCPercent(f.base)
	f.percent = f.base
}

// sentinel is collected by every cycle that starts after it is made: its
// cleanup is the "a collection just finished" signal the runtime does
// not otherwise give. The pointer keeps it out of the tiny allocator,
// whose shared blocks could keep it alive past its cycle.
type sentinel struct {
	_ *int
}

func (f *Floor) arm() {
	runtime.AddCleanup(new(sentinel), func(f *Floor) { f.collected() }, f)
}

func (f *Floor) collected() {
	if f.adjust() {
		f.arm()
	}
}

// adjust sets the percent for the live heap the last collection found and
// reports whether the floor is still on.
func (f *Floor) adjust() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return false
	}
	metrics.Read(f.sample)
	if want := percentFor(f.floor, f.sample[0].Value.Uint64(), f.base); want != f.percent {
		debug.SetGCPercent(want)
		f.percent = want
	}
	return true
}

// percentFor gives the GOGC whose goal, live×(1+percent/100), is about
// floor, and never below base. Before the first collection the live heap
// reads 0: the runtime's minimum, scaled to the floor, sets the goal then.
func percentFor(floor, live uint64, base int) int {
	top := int(floor * 100 / runtimeHeapMinimum)
	if live >= floor/2 || top <= base {
		return base
	}
	p := top
	if live > 0 {
		p = int(math.Ceil((float64(floor)/float64(live) - 1) * 100))
	}
	return max(base, min(p, top))
}
