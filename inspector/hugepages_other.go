//go:build !linux

package inspector

// makeHuge returns an empty slice with room for n elements: huge pages
// are advised per mapping on Linux only (hugepages_linux.go).
func makeHuge[T any](n int) []T { return make([]T, 0, n) }
