package inspector

// growHuge is slices.Grow for the model's big tables (at a million
// messages the rows take tens of MB) in memory backed by huge pages where
// the kernel has them (makeHuge). On a virtual machine that makes each
// page fault dear (tens of µs for 4 KiB), faulting the tables in 4 KiB at
// a time cost most of the time to first paint.
func growHuge[T any](s []T, n int) []T {
	if n -= cap(s) - len(s); n <= 0 {
		return s
	}
	return append(makeHuge[T](len(s)+n), s...)
}
