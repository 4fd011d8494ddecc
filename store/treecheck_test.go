package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// branchPages lists the branch pages of the cassette at path with how
// many children each has.
func branchPages(t *testing.T, path string) (data []byte, pages map[int]int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pageSize := os.Getpagesize()
	pages = map[int]int{}
	for p := 2; (p+1)*pageSize <= len(data); p++ {
		head := data[p*pageSize:]
		if binary.NativeEndian.Uint16(head[8:]) == branchPage {
			pages[p] = int(binary.NativeEndian.Uint16(head[10:]))
		}
	}
	if len(pages) == 0 {
		t.Fatal("the cassette has no branch page to damage")
	}
	return data, pages
}

// widest is the branch page with the most children: one of a session's
// messages, which every read of the session goes through.
func widest(t *testing.T, branches map[int]int) int {
	t.Helper()
	best := 0
	for p, n := range branches {
		if n > branches[best] || n == branches[best] && p < best {
			best = p
		}
	}
	if branches[best] < 2 {
		t.Fatalf("no branch page with two children: %v", branches)
	}
	return best
}

// pointChild makes child i of branch page p point at page to.
func pointChild(t *testing.T, path string, data []byte, p, i int, to uint64) {
	t.Helper()
	at := p*os.Getpagesize() + pageHeaderSize + i*pageElementSize + 8
	binary.NativeEndian.PutUint64(data[at:], to)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// within runs do and fails the test if it has not returned in time: bbolt
// on a looping tree never returns (or crashes the process first).
func within(t *testing.T, what string, do func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- do() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not return in 30 s: it loops on the damaged tree", what)
		return nil
	}
}

// A branch page's child pointer damaged to point back at the branch
// itself makes bbolt loop (Cursor.search recurses until the stack
// overflows; Cursor.last appends until memory runs out), which no recover
// reaches. Every way into a cassette refuses such a file, naming the
// page, and Salvage does too, instead of hanging or crashing.
func TestCassette_LoopingBranchPointer(t *testing.T) {
	path := importTape(t, markedTape(400))
	data, branches := branchPages(t, path)
	loop := widest(t, branches)
	pointChild(t, path, data, loop, 1, uint64(loop))
	want := "loop back to it"
	checks := []struct {
		name string
		do   func() error
	}{
		{"check", func() error { return Check(path) }},
		{"view and read every session", func() error {
			return View(path, func(r *Reader) error {
				for _, id := range []string{"s1", "s2", "s3"} {
					if err := r.Messages(id, 1, func(*Message) error { return nil }); err != nil {
						return err
					}
				}
				return nil
			})
		}},
		{"export", func() error { return Export(path, new(bytes.Buffer), nil) }},
		{"load", func() error { _, err := Load(path); return err }},
		{"a writer", func() error {
			w, err := NewWriter(path, WriterOptions{NoSync: true})
			if err == nil {
				w.Close()
			}
			return err
		}},
		{"import", func() error { _, err := Import(path, markedTape(1)); return err }},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			err := within(t, c.name, c.do)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %v, want %v naming %s and saying %q", err, ErrCorrupt, path, want)
			}
		})
	}
}

// Salvage reads around a looping pointer: it cuts the pointer in a
// private copy, and loses only what lay below it (here one leaf of
// messages), which it reports with the loop; the copy is removed.
func TestSalvage_ReadsAroundALoop(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	path := importTape(t, markedTape(400))
	data, branches := branchPages(t, path)
	loop := widest(t, branches)
	pageSize := os.Getpagesize()
	// Child 1 of the branch, and the markers on it.
	leaf := int(binary.NativeEndian.Uint64(data[loop*pageSize+pageHeaderSize+pageElementSize+8:]))
	var under []string
	for _, m := range markerRE.FindAllSubmatch(data[leaf*pageSize:(leaf+1)*pageSize], -1) {
		under = append(under, string(m[0]))
	}
	if len(under) == 0 {
		t.Fatalf("page %d holds no message", leaf)
	}
	pointChild(t, path, data, loop, 1, uint64(loop))

	tape, rep, out := salvage(t, path)
	want := PageDetour{Page: uint64(loop), Element: 1, LoopsTo: uint64(loop)}
	if len(rep.Detours) != 1 || rep.Detours[0] != want {
		t.Errorf("detours %v, want [%v]", rep.Detours, want)
	}
	if rep.LostMessages() != len(under) {
		t.Errorf("lost %d messages (%v), want the %d on page %d", rep.LostMessages(), rep.Lost, len(under), leaf)
	}
	for _, m := range under {
		if strings.Contains(out, m) {
			t.Errorf("%s, below the cut pointer, was salvaged", m)
		}
	}
	if got := rep.Messages + len(under); got != 1200 || len(tape.Sessions) != 3 {
		t.Errorf("salvaged %d messages in %d sessions; with the %d lost, want 1200 in 3", rep.Messages, len(tape.Sessions), len(under))
	}
	for _, l := range rep.Lost {
		if !strings.Contains(l.Err.Error(), "loop") {
			t.Errorf("loss %v does not say it lay below the looping pointer", l)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "mcptape-salvage-*")); len(left) > 0 {
		t.Errorf("the private copy was left behind: %v", left)
	}
}

// bbolt's cursors take a page of any known type that is not a leaf for a
// branch: a pointer damaged to lead into the freelist page, whose second
// free page id (where a branch's first child pointer would be) names the
// branch above, is a loop for Cursor.Next. Salvage cuts it and loses
// only the messages the damaged pointer led to.
func TestSalvage_ReadsAroundALoopThroughTheFreelist(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	path := importTape(t, markedTape(400))
	data, branches := branchPages(t, path)
	branch := widest(t, branches)
	pageSize := os.Getpagesize()
	freelist := -1
	for p := 2; (p+1)*pageSize <= len(data); p++ {
		head := data[p*pageSize:]
		if binary.NativeEndian.Uint16(head[8:]) == freelistPage && binary.NativeEndian.Uint64(head) == uint64(p) {
			freelist = p
		}
	}
	if freelist < 0 {
		t.Fatal("no freelist page")
	}
	// Child 1 of the branch, and the markers on it.
	leaf := int(binary.NativeEndian.Uint64(data[branch*pageSize+pageHeaderSize+pageElementSize+8:]))
	under := markerRE.FindAll(data[leaf*pageSize:(leaf+1)*pageSize], -1)
	binary.NativeEndian.PutUint64(data[freelist*pageSize+pageHeaderSize+8:], uint64(branch))
	pointChild(t, path, data, branch, 1, uint64(freelist))

	_, rep, out := salvage(t, path) // returns: the loop is cut
	if len(rep.Detours) != 1 || rep.Detours[0].LoopsTo != uint64(branch) {
		t.Errorf("detours %v, want one, back to page %d", rep.Detours, branch)
	}
	if rep.LostMessages() != len(under) || rep.Messages != 1200-len(under) {
		t.Errorf("salvaged %d and lost %d messages (%v), want the %d of page %d lost", rep.Messages, rep.LostMessages(), rep.Lost, len(under), leaf)
	}
	for _, m := range under {
		if strings.Contains(out, string(m)) {
			t.Errorf("%s, which the damaged pointer no longer leads to, was salvaged", m)
		}
	}
}

// Other damage to a branch pointer is refused by a plain read, with what
// is wrong; Salvage reads past it, as it reads past a zeroed page.
func TestCassette_DamagedBranchPointer(t *testing.T) {
	for _, tc := range []struct {
		name string
		to   func(data []byte, branch int) uint64
		want string
	}{
		{"past the last page", func(data []byte, _ int) uint64 { return uint64(len(data)/os.Getpagesize()) + 1000 }, "outside the tree's pages"},
		{"to a meta page", func([]byte, int) uint64 { return 1 }, "outside the tree's pages"},
		{"to its sibling", func(data []byte, branch int) uint64 {
			at := branch*os.Getpagesize() + pageHeaderSize + 8 // child 0
			return binary.NativeEndian.Uint64(data[at:])
		}, "reached twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := importTape(t, markedTape(400))
			data, branches := branchPages(t, path)
			branch := widest(t, branches)
			pointChild(t, path, data, branch, 1, tc.to(data, branch))
			err := within(t, "export", func() error { return Export(path, new(bytes.Buffer), nil) })
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("export: error %v, want %v saying %q", err, ErrCorrupt, tc.want)
			}
			var out bytes.Buffer
			var rep *SalvageReport
			err = within(t, "salvage", func() (err error) { rep, err = Salvage(path, &out, nil); return err })
			if err != nil {
				t.Fatalf("salvage: %v", err)
			}
			if rep.Messages == 0 || len(rep.Lost) == 0 && tc.name != "to its sibling" {
				t.Errorf("salvage wrote %d messages and lost %v; want the undamaged messages and the loss", rep.Messages, rep.Lost)
			}
			if _, err := ReadJSONL(bytes.NewReader(out.Bytes()), "salvaged.jsonl"); err != nil {
				t.Errorf("the salvaged export does not import: %v", err)
			}
		})
	}
}

// A child pointer damaged to lead to a free page, which holds what an
// older transaction wrote (its pointers too), is refused: the strict walk
// does not read the leaves under a branch beyond the first, and the
// freelist is how it knows such a pointer leads nowhere bbolt could
// take for a branch.
func TestCassette_PointerToAFreePage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	w, err := NewWriter(path, WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.NewSession(SessionInfo{Transport: TransportStdio, Upstream: "server"})
	if err != nil {
		t.Fatal(err)
	}
	for commit := range 4 { // each commit frees the pages it rewrites
		for i := range 150 {
			s.Append(C2S, time.Now(), fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":%q}}`, commit*150+i, strings.Repeat("x", 200)), nil)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	free := freePages(t, path)
	data, branches := branchPages(t, path)
	branch := widest(t, branches)
	pointChild(t, path, data, branch, 1, free)
	err = Export(path, new(bytes.Buffer), nil)
	if want := fmt.Sprintf("a pointer to page %d, a free page", free); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) {
		t.Errorf("export: %v, want %v saying %q", err, ErrCorrupt, want)
	}
}

// freePages returns a page the freelist of the cassette at path lists.
func freePages(t *testing.T, path string) uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pageSize := uint64(os.Getpagesize())
	w := &treeWalk{fileView: fileView{f: f, size: uint64(st.Size())}, pageSize: pageSize, pages: uint64(st.Size()) / pageSize}
	meta0, meta1 := w.at(pageHeaderSize, 64), w.at(pageSize+pageHeaderSize, 64)
	meta := meta0
	if binary.NativeEndian.Uint64(meta1[48:]) > binary.NativeEndian.Uint64(meta0[48:]) {
		meta = meta1
	}
	freelist := binary.NativeEndian.Uint64(meta[32:])
	w.readFreelist(freelist)
	if w.free == nil {
		t.Fatal("no freelist")
	}
	for p := uint64(2); p < w.pages; p++ {
		if w.free.has(p) && p != freelist {
			return p
		}
	}
	t.Fatal("the freelist lists no page")
	return 0
}

// A session's tree three levels deep, whose top branch's first pointer
// was damaged to lead to a leaf, and a branch below its last child to
// loop: the strict walk must not take the top branch for one whose
// children are all leaves (and so skip the subtrees where the loop is).
func TestCassette_FirstPointerToALeafHidesNothing(t *testing.T) {
	tape := &Tape{Sessions: []TapeSession{{Info: SessionInfo{ID: "s1", Transport: TransportStdio, Upstream: "server"}}}}
	for q := 1; q <= 20_000; q++ {
		frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, q)
		tape.Sessions[0].Messages = append(tape.Sessions[0].Messages, &Message{Session: "s1", Seq: uint64(q), Time: time.Unix(1_800_000_000, int64(q)).UTC(), Frame: []byte(frame)})
	}
	path := importTape(t, tape)
	var root uint64
	if err := View(path, func(r *Reader) error {
		root = uint64(r.tx.Bucket(bucketMessages).Bucket([]byte("s1")).Root())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	data, branches := branchPages(t, path)
	pageSize := os.Getpagesize()
	child := func(page, i int) int {
		return int(binary.NativeEndian.Uint64(data[page*pageSize+pageHeaderSize+i*pageElementSize+8:]))
	}
	top := int(root)
	n := branches[top]
	if n < 2 || branches[child(top, n-1)] < 2 || branches[child(top, 0)] < 2 {
		t.Fatalf("s1's messages are not three levels deep: root %d has %d children", top, n)
	}
	leaf := child(child(top, 0), 0) // a leaf, which the top branch's first pointer will name
	loop := child(top, n-1)         // a branch under the last child…
	pointChild(t, path, data, top, 0, uint64(leaf))
	pointChild(t, path, data, loop, 1, uint64(loop)) // …that loops
	err := within(t, "export", func() error { return Export(path, new(bytes.Buffer), nil) })
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("export: %v, want %v", err, ErrCorrupt)
	}
}

// A cassette written the ordinary way, many commits, sessions side by
// side, a chunked frame and inline buckets included, passes the walk.
func TestCheckTree_AcceptsWrittenCassettes(t *testing.T) {
	for _, path := range []string{
		importTape(t, markedTape(400)),
		damagedCassette(t, nil),
		"../cassettes/everything-stdio.db",
		"../cassettes/everything-http.db",
	} {
		if err := Check(path); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}
