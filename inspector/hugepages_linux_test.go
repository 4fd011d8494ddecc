package inspector

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/mcptape/mcptape/inspector/internal/gen"
)

// TestMakeHuge: the slice has the room asked for, and when it spans a
// huge page its memory is advised as huge pages.
func TestMakeHuge(t *testing.T) {
	huge := needHugePages(t)
	size := unsafe.Sizeof(row{})
	rowsPerHuge := int((huge + size - 1) / size) // the fewest that fill one
	for _, n := range []int{0, 1, 100, rowsPerHuge - 1, rowsPerHuge, 3*rowsPerHuge + 7} {
		rows := makeHuge[row](n)
		if len(rows) != 0 || cap(rows) < n {
			t.Errorf("makeHuge[row](%d): len %d cap %d", n, len(rows), cap(rows))
		}
		if n >= rowsPerHuge && !advisedHuge(t, rows) {
			t.Errorf("makeHuge[row](%d): not advised as huge pages", n)
		}
	}
	for _, n := range []int{0, 5, int(huge), 5*int(huge) + 3} {
		b := makeHuge[byte](n)
		if len(b) != 0 || cap(b) < n {
			t.Errorf("makeHuge[byte](%d): len %d cap %d", n, len(b), cap(b))
		}
		if n >= int(huge) && !advisedHuge(t, b) {
			t.Errorf("makeHuge[byte](%d): not advised as huge pages", n)
		}
	}
}

// TestOpen_RowsInHugePages: Open puts a cassette's rows, the table that
// takes most of the model's memory, in memory advised as huge pages.
func TestOpen_RowsInHugePages(t *testing.T) {
	huge := needHugePages(t)
	n := 2 * int(huge/unsafe.Sizeof(row{}))
	path := filepath.Join(t.TempDir(), "big.db")
	if err := gen.Cassette(path, n, n); err != nil {
		t.Fatal(err)
	}
	m, _ := openModel(t, path)
	if m.Len() != n {
		t.Fatalf("%d rows, want %d", m.Len(), n)
	}
	if !advisedHuge(t, m.rows) {
		t.Error("the rows are not in memory advised as huge pages")
	}
}

func needHugePages(t *testing.T) uintptr {
	t.Helper()
	huge := hugePageSize()
	if huge == 0 {
		t.Skip("this kernel has no transparent huge pages")
	}
	return huge
}

// advisedHuge says whether the memory of s's capacity lies in one
// mapping advised MADV_HUGEPAGE ("hg" among its VmFlags in smaps).
func advisedHuge[T any](t *testing.T, s []T) bool {
	t.Helper()
	from := uintptr(unsafe.Pointer(unsafe.SliceData(s[:cap(s)])))
	to := from + uintptr(cap(s))*unsafe.Sizeof(*new(T))
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps to read the advice in: %v", err)
	}
	defer f.Close()
	covers := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok {
			if covers {
				return strings.Contains(" "+flags+" ", " hg ")
			}
			continue
		}
		// A mapping's first line: "start-end perms offset dev inode path".
		span, _, _ := strings.Cut(line, " ")
		lo, hi, ok := strings.Cut(span, "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 == nil && err2 == nil {
			covers = uintptr(start) <= from && to <= uintptr(end)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return false
}
