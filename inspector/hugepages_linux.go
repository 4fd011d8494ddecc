package inspector

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// hugePageSize is the size of a transparent huge page, 0 if the kernel
// has none.
var hugePageSize = sync.OnceValue(func() uintptr {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n&(n-1) != 0 {
		return 0
	}
	return uintptr(n)
})

// makeHuge returns an empty slice with room for at least n elements,
// whose memory the kernel is asked (MADV_HUGEPAGE) to back with huge
// pages: the default transparent_hugepage setting, madvise, gives them
// only to memory so advised, and Go's heap asks for none. A slice smaller
// than a huge page is made as make makes it.
//
// The slice starts and ends on huge page boundaries, so that none of it
// is faulted in 4 KiB at a time: it lies inside an allocation one huge
// page longer at each end, whose ends are never touched and so cost
// address space only. make leaves memory fresh from the kernel untouched,
// as it is zero already, so the advice comes before the first fault.
func makeHuge[T any](n int) []T {
	huge := hugePageSize()
	size := unsafe.Sizeof(*new(T))
	if huge == 0 || size == 0 || size > huge || uintptr(n)*size < huge {
		return make([]T, 0, n)
	}
	slack := int(2*huge/size) + 2
	buf := make([]T, 0, n+slack)[:n+slack]
	p := unsafe.Pointer(unsafe.SliceData(buf))
	base := uintptr(p)
	first := (base + huge - 1) &^ (huge - 1)
	end := (base + uintptr(len(buf))*size) &^ (huge - 1)
	from := (first - base + size - 1) / size // the first element at or past first
	to := (end - base) / size                // past the last element before end
	// A hint: an error (a kernel without transparent huge pages) changes
	// nothing but speed.
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, first-base)), end-first), syscall.MADV_HUGEPAGE)
	return buf[from:from:to]
}
