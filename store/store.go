// Package store is the cassette: a bbolt file holding recorded MCP sessions.
//
// Many processes share one cassette. bbolt locks the whole file while a
// handle is open (exclusively for writers), so no one here keeps it for
// long: a reader opens it for one read, and a writer keeps it only while it
// is committing often and nobody else asks for it (see dbLease). A recorder
// never waits on the file while forwarding; see Writer.
//
// Only this package imports bbolt. It never interprets a frame beyond the
// summary it keeps for fast listing (internal/jsonrpc). Besides the
// cassette it writes and reads JSONL exports, and writes the HTTP sessions
// as a HAR (har.go).
package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/mcptape/mcptape/internal/atomicfile"
)

// FormatVersion is the cassette layout this code writes and reads. What
// an older reader can ignore (a summary flag, the amended bucket) is added
// without a new version; a new version is for what it would misread.
const FormatVersion = 1

// formatName marks a bbolt file as a cassette.
const formatName = "mcptape-cassette"

// Errors that callers tell apart. They are wrapped with the file name.
var (
	// ErrNotCassette: the file is not a cassette (not bbolt, or another
	// program's bbolt file).
	ErrNotCassette = errors.New("not an mcptape cassette")
	// ErrNotJSONL: a file named as a JSONL export (.jsonl) holds another
	// kind of recording, which its first bytes show (a bbolt cassette).
	ErrNotJSONL = errors.New("not a JSONL export")
	// ErrUnsalvageable: the cassette is damaged past what Salvage reads
	// around (a cut that took the roots of both its commits' trees); it
	// comes with ErrCorrupt.
	ErrUnsalvageable = errors.New("nothing in it can be salvaged")
	// ErrNewerFormat: the cassette was written by a newer mcptape.
	ErrNewerFormat = errors.New("cassette format is newer than this mcptape understands")
	// ErrCorrupt: the file is damaged.
	ErrCorrupt = errors.New("cassette is corrupt")
	// ErrLocked: another process held the file for longer than LockTimeout.
	ErrLocked = errors.New("cassette is locked by another process")
	// ErrNoSession: no session has that id or name.
	ErrNoSession = errors.New("no such session")
	// ErrNotFound: the file does not exist.
	ErrNotFound = errors.New("cassette does not exist")
	// ErrWriterClosed: the Writer was closed; what it is given now is not
	// stored.
	ErrWriterClosed = errors.New("cassette writer is closed")
)

// Bucket names. Buckets are created in one place: ensureSchema.
var (
	bucketMeta     = []byte("meta")
	bucketSessions = []byte("sessions") // id -> SessionInfo JSON
	bucketMessages = []byte("messages") // id -> bucket of seq -> record
	bucketIndex    = []byte("index")    // id -> bucket of seq -> summary
	bucketBlobs    = []byte("blobs")    // id -> bucket of seq+chunk -> piece of a large frame
	bucketAmended  = []byte("amended")  // note number -> seq+id of a message stored again (amended.go)
	keyFormat      = []byte("format")
	keyVersion     = []byte("version")
)

// LockTimeout bounds how long an open waits for another process's lock.
// Writers hold the file for milliseconds, so a long wait means a stuck or
// foreign holder.
var LockTimeout = 10 * time.Second

// openDB opens path for one short use. It waits for the file lock itself,
// polling every millisecond, because bbolt's own wait sleeps 50 ms between
// tries, which would stall group commits behind a concurrent writer.
func openDB(path string, write bool) (*bolt.DB, error) {
	db, _, err := openDBFile(path, write)
	return db, err
}

// openDBFile is openDB that also returns the handle's file, which a writer
// holding the file between commits watches for waiters.
func openDBFile(path string, write bool) (*bolt.DB, *os.File, error) {
	return openInTurn(path, write, new(waitTurn))
}

// openInTurn is openDBFile waiting for the file in turn (see waitLock). A
// writable open keeps its place in line from the check that reads the
// file first to the open itself.
func openInTurn(path string, write bool, turn *waitTurn) (*bolt.DB, *os.File, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !write {
			return nil, nil, fmt.Errorf("%s: %w", path, ErrNotFound)
		}
	case err != nil:
		return nil, nil, err
	case !st.Mode().IsRegular():
		return nil, nil, fmt.Errorf("%s: %w (a %s, not a file)", path, ErrNotCassette, atomicfile.FileKind(st.Mode()))
	case st.Size() == 0 && !write:
		return nil, nil, fmt.Errorf("%s: %w (empty file)", path, ErrNotCassette)
	}
	if write && err == nil && st.Size() > 0 { // an existing file; a new one is whole
		if err := checkWholeFile(path, turn); err != nil {
			return nil, nil, err
		}
	}
	var file *os.File
	opts := &bolt.Options{
		ReadOnly: !write,
		// A large batch grows the file; each growth past the mapping makes
		// bbolt remap and copy every dirty node. Mapping 1 GiB up front
		// (address space only) avoids that for any batch we write.
		InitialMmapSize: 1 << 30,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag, perm)
			if err != nil {
				return nil, err
			}
			if err := waitLock(f, write, turn); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			file = f
			return f, nil
		},
	}
	db, err := bolt.Open(path, 0o600, opts)
	if err != nil {
		return nil, nil, classifyOpenError(path, err)
	}
	// Grow the file in 1 MiB steps, not bbolt's 16 MiB: most cassettes are
	// small and some are committed to git.
	db.AllocSize = 1 << 20
	return db, file, nil
}

// checkWholeFile refuses, before a writable open, an existing cassette
// shorter than its pages. A writable bbolt open reads the freelist page,
// which a truncated file may lack, and the fault of that read cannot be
// turned into an error cleanly: it leaves the mapping, and with it the
// file's lock, behind. A read-only open reads no page past the meta
// pages, so checkWhole can run there first.
func checkWholeFile(path string, turn *waitTurn) error {
	db, _, err := openInTurn(path, false, turn)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error { return checkWhole(path, tx) })
}

func classifyOpenError(path string, err error) error {
	switch {
	case errors.Is(err, ErrLocked):
		return err
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrVersionMismatch):
		return notBbolt(path)
	case errors.Is(err, bolterrors.ErrChecksum):
		return fmt.Errorf("%s: %w: %v", path, ErrCorrupt, err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	if short := shortFileError(path); short != nil {
		return short
	}
	return fmt.Errorf("open cassette %s: %w", path, err)
}

// notBbolt is ErrNotCassette for a file that is no bbolt database. A
// script given where a recording is wanted (mcpspy show weather.yaml) is
// named for what it is, with what is read instead: "not a bbolt
// database" alone leaves the user guessing what was.
func notBbolt(path string) error {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".yaml", ".yml", ".json":
		return fmt.Errorf("%s: %w (not a bbolt database: a %s file is an mcpmock script, and a recording is a cassette .db, a JSONL export .jsonl or a HAR .har)", path, ErrNotCassette, ext)
	}
	if err := misnamed(path, KindDB, ErrNotCassette); err != nil {
		return err
	}
	return fmt.Errorf("%s: %w (not a bbolt database)", path, ErrNotCassette)
}

// bboltMagic starts the meta of both of a bbolt file's first two pages,
// after the 16-byte page header; the page size follows it and the format
// version.
const bboltMagic = 0xED0CDAED

// shortFileError explains a file shorter than two bbolt pages, which bbolt
// refuses with a bare "file size too small": one that does not start as a
// bbolt file is none (a script or notes given as CASSETTE), and one that
// does was cut short inside its meta pages. Nil when the file is neither.
func shortFileError(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	var head [28]byte
	n, _ := io.ReadFull(f, head[:])
	var order binary.ByteOrder = binary.LittleEndian
	if n == len(head) && binary.BigEndian.Uint32(head[16:]) == bboltMagic {
		order = binary.BigEndian
	}
	if n < len(head) || order.Uint32(head[16:]) != bboltMagic {
		return notBbolt(path)
	}
	if pages := 2 * int64(order.Uint32(head[24:])); st.Size() < pages {
		// Every page of the tree lies past the two meta pages: with them
		// cut, nothing is left that Salvage could read.
		return fmt.Errorf("%s: %w: truncated: the file is %d bytes, its two meta pages need %d (a copy cut short?), and its tree lies past them: %w; only a whole copy helps",
			path, ErrCorrupt, st.Size(), pages, ErrUnsalvageable)
	}
	return nil
}

// checkFormat verifies the meta bucket. It runs inside every transaction
// that reads, so a file replaced under us is noticed too.
func checkFormat(path string, tx *bolt.Tx) error {
	if err := checkWhole(path, tx); err != nil {
		return err
	}
	return checkMeta(path, tx)
}

// checkMeta verifies that the meta bucket names a cassette this code reads.
func checkMeta(path string, tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		if tx.Writable() && isEmptyDB(tx) {
			return nil // a brand-new file; ensureSchema fills it
		}
		return fmt.Errorf("%s: %w (no %q bucket)", path, ErrNotCassette, bucketMeta)
	}
	if string(meta.Get(keyFormat)) != formatName {
		return fmt.Errorf("%s: %w (format %q)", path, ErrNotCassette, meta.Get(keyFormat))
	}
	v, err := strconv.Atoi(string(meta.Get(keyVersion)))
	if err != nil {
		return fmt.Errorf("%s: %w: bad format version %q", path, ErrCorrupt, meta.Get(keyVersion))
	}
	if v > FormatVersion {
		return fmt.Errorf("%s: %w (file has version %d, this mcptape reads up to %d)", path, ErrNewerFormat, v, FormatVersion)
	}
	return nil
}

// checkWhole refuses a file shorter than the pages its meta page counts:
// a copy or download cut short. bbolt maps the whole length it expects,
// and reading a page past the end of the file would be a fault that no
// recover catches, so this is checked before any bucket is touched.
func checkWhole(path string, tx *bolt.Tx) error {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed while open: what this handle reads is whole
	}
	if err != nil {
		return err
	}
	if want := tx.Size(); st.Size() < want {
		if err := rootCut(path, tx, st.Size()); err != nil {
			return err
		}
		return fmt.Errorf("%s: %w: truncated: the file is %d bytes, its pages reach %d (a copy cut short?)", path, ErrCorrupt, st.Size(), want)
	}
	return nil
}

// rootCut is the error for a file of size bytes that ends before the root
// page of tx's tree: every page is reached from the root, so none can be
// found, by Salvage or by anything else that goes by the tree, unless
// the commit before tx is still in the file (Salvage reads that one). Nil
// when the root is there, and what is below it may be read in part.
func rootCut(path string, tx *bolt.Tx, size int64) error {
	root := uint64(tx.Cursor().Bucket().Root()) // from the meta page: reads no page
	pageSize := uint64(tx.DB().Info().PageSize)
	if (root+1)*pageSize <= uint64(size) {
		return nil
	}
	if older, _ := olderCommit(path); older != nil {
		// Not ErrUnsalvageable: Salvage reads the commit before.
		return fmt.Errorf("%s: %w: truncated: the file is %d bytes, its pages reach %d (a copy cut short?), and the cut took the root of its last commit's tree (txid %d, page %d, at byte %d); the commit before it (txid %d) is still in the file",
			path, ErrCorrupt, size, tx.Size(), older.Lost, root, root*pageSize, older.Read)
	}
	return fmt.Errorf("%s: %w: truncated: the file is %d bytes, its pages reach %d (a copy cut short?), and the cut took the root of its tree (page %d, at byte %d): %w, as every page is found from the root; only a whole copy helps",
		path, ErrCorrupt, size, tx.Size(), root, root*pageSize, ErrUnsalvageable)
}

func isEmptyDB(tx *bolt.Tx) bool {
	empty := true
	_ = tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return errStop })
	return empty
}

var errStop = errors.New("stop")

func ensureSchema(tx *bolt.Tx) error {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	if meta.Get(keyFormat) == nil {
		if err := meta.Put(keyFormat, []byte(formatName)); err != nil {
			return err
		}
		if err := meta.Put(keyVersion, []byte(strconv.Itoa(FormatVersion))); err != nil {
			return err
		}
	}
	// amended is new within version 1 (see amended.go): a file an older
	// mcptape made gets it from the first newer writer.
	for _, b := range [][]byte{bucketSessions, bucketMessages, bucketIndex, bucketBlobs, bucketAmended} {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	return nil
}

// update runs fn in one write transaction on a freshly opened file.
func update(path string, fn func(tx *bolt.Tx) error) (err error) {
	db, file, err := openDBFile(path, true)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close cassette %s: %w", path, cerr)
		}
	}()
	// Before writing: a write transaction searches the tree too. The
	// file is whole: openDBFile checked that before opening it to write.
	err = guard(path, func() error {
		return db.View(func(tx *bolt.Tx) error { return checkTree(path, file, tx, false) })
	})
	if err != nil {
		return err
	}
	return writeTx(path, db, fn)
}

// writeTx runs fn in one write transaction on db, the cassette at path,
// after checking its format and buckets.
func writeTx(path string, db *bolt.DB, fn func(tx *bolt.Tx) error) error {
	return guard(path, func() error {
		return db.Update(func(tx *bolt.Tx) error {
			if err := checkFormat(path, tx); err != nil {
				return err
			}
			if err := ensureSchema(tx); err != nil {
				return err
			}
			return fn(tx)
		})
	})
}

// view runs fn in one read transaction on a freshly opened file.
func view(path string, fn func(tx *bolt.Tx) error) error {
	return viewChecked(path, func(path string, file *os.File, tx *bolt.Tx) error {
		return checkTree(path, file, tx, false)
	}, fn)
}

// viewChecked is view with the tree check a Viewer may skip.
func viewChecked(path string, check func(path string, file *os.File, tx *bolt.Tx) error, fn func(tx *bolt.Tx) error) error {
	db, file, err := openDBFile(path, false)
	if err != nil {
		return err
	}
	defer db.Close()
	return guard(path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			if err := checkWhole(path, tx); err != nil {
				return err
			}
			if err := check(path, file, tx); err != nil {
				return err
			}
			if err := checkMeta(path, tx); err != nil {
				return err
			}
			return fn(tx)
		})
	})
}

// guard turns a panic inside bbolt (it panics on some damaged pages) into
// ErrCorrupt, so a bad file gets one clear error instead of a crash. A
// memory fault reading the mapped file (it shrank under us) becomes such
// a panic too, rather than killing the process.
func guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: %w: %v", path, ErrCorrupt, describePanic(path, r))
		}
	}()
	return fn()
}

// describePanic says what a recovered panic means for the file: a fault
// at an address away from nil is a read of the mapped file past its end.
func describePanic(path string, r any) any {
	if f, ok := r.(interface{ Addr() uintptr }); ok && f.Addr() >= 1<<16 {
		size := "?"
		if st, err := os.Stat(path); err == nil {
			size = strconv.FormatInt(st.Size(), 10)
		}
		return "a page lies past the end of the file (" + size + " bytes): truncated, or cut short while it was read"
	}
	if isDetour(r) {
		return "it lay below a page pointer that looped, which salvage cut"
	}
	// bbolt's check of a page it reads, in the words checkTree uses.
	var want, own uint64
	if s, ok := r.(string); ok {
		if n, _ := fmt.Sscanf(s, "assertion failed: Page expected to be: %d, but self identifies as %d", &want, &own); n == 2 {
			return fmt.Sprintf("page %d identifies itself as page %d", want, own)
		}
	}
	return r
}

// isDetour says whether a recovered panic is bbolt's read of detourPage:
// an index past the end of its mapping array, at detourPage × page size
// or beyond.
func isDetour(r any) bool {
	e, ok := r.(runtime.Error)
	if !ok {
		return false
	}
	_, rest, found := strings.Cut(e.Error(), "index out of range [")
	digits, _, _ := strings.Cut(rest, "]")
	at, err := strconv.ParseUint(digits, 10, 64)
	return found && err == nil && at >= detourPage*512
}

// Init creates the cassette at path if needed, or checks that the file there
// is a cassette this code can write. Recording calls it first so that a bad
// path fails before any traffic flows. An existing cassette is checked
// without writing to it: a commit, even of nothing, rewrites a meta page
// and the freelist, and a cassette kept in git would show as changed by a
// run that recorded nothing into it.
func Init(path string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		placed, err := create(path)
		if placed || err != nil {
			return err
		}
	}
	if checked, err := checkWritable(path); checked || err != nil {
		return err
	}
	// Empty, a bare bbolt file, or gone again: the first commit fills it
	// (or makes it), as it always did.
	return update(path, func(*bolt.Tx) error { return nil })
}

// checkWritable checks, without a write transaction, what update would
// refuse in the cassette at path: a file that cannot be opened to write,
// or is no cassette, or a newer or damaged one. checked is false when
// there is no cassette there yet to check: the path is missing or not a
// file (update says which), the file is empty, or it is a bbolt file
// without buckets, which a writer fills (ensureSchema).
func checkWritable(path string) (checked bool, err error) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
		return false, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false, classifyOpenError(path, err) // as bbolt's open to write fails
	}
	f.Close()
	db, file, err := openDBFile(path, false)
	if err != nil {
		return false, err
	}
	defer db.Close()
	err = guard(path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			if err := checkWhole(path, tx); err != nil {
				return err
			}
			if err := checkTree(path, file, tx, false); err != nil {
				return err
			}
			if tx.Bucket(bucketMeta) == nil && isEmptyDB(tx) {
				return errStop
			}
			return checkMeta(path, tx)
		})
	})
	if errors.Is(err, errStop) {
		return false, nil
	}
	return err == nil, err
}

// create makes a new cassette at path in one step: it is built beside
// path and linked into place, so that path never holds half a cassette.
// Opened in place, a process killed between bbolt's open and the first
// commit left a bbolt file without the cassette's buckets, which every
// reader then refused as foreign (internal/faults' TestKill_RandomPoints
// met it). placed reports whether the new cassette is at path now; it is
// not when someone else created one there first (theirs wins, and Init
// checks it) or the file system has no hard links (Init creates it in
// place).
func create(path string) (placed bool, err error) {
	tmp, err := tempBeside(path)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	if err := update(tmp, func(*bolt.Tx) error { return nil }); err != nil {
		return false, fmt.Errorf("create cassette %s: %w", path, err)
	}
	return os.Link(tmp, path) == nil, nil
}

// tempBeside makes an empty file in path's directory, 0600 as a cassette
// is, for a cassette to be built in, and returns its name. Its error says
// why path could not be created there.
func tempBeside(path string) (string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "." // not CreateTemp's default, the system's temp directory
	}
	tmp, err := os.CreateTemp(dir, "."+base+".creating-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // without the temporary name, which the user never gave
		}
		return "", fmt.Errorf("create cassette %s: create a file in %s: %w", path, filepath.Dir(path), err)
	}
	tmp.Close()
	return tmp.Name(), nil
}

// Check opens the cassette at path read-only and verifies its format.
func Check(path string) error {
	return view(path, func(*bolt.Tx) error { return nil })
}

// sessionBuckets are where one session's messages live.
type sessionBuckets struct{ msgs, idx, blobs *bolt.Bucket }

func openSessionBuckets(tx *bolt.Tx, session string) (sessionBuckets, error) {
	var b sessionBuckets
	var err error
	for _, x := range []struct {
		dst **bolt.Bucket
		top []byte
	}{{&b.msgs, bucketMessages}, {&b.idx, bucketIndex}, {&b.blobs, bucketBlobs}} {
		if *x.dst, err = tx.Bucket(x.top).CreateBucketIfNotExists([]byte(session)); err != nil {
			return b, err
		}
		(*x.dst).FillPercent = 1 // keys only ever grow
	}
	return b, nil
}

func (b sessionBuckets) put(seq uint64, e encodedMessage) error {
	k := seqKey(seq)
	if err := b.msgs.Put(k, e.rec); err != nil {
		return err
	}
	if err := b.idx.Put(k, e.sum); err != nil {
		return err
	}
	for i, c := range e.chunks {
		if err := b.blobs.Put(chunkKey(seq, i), c); err != nil {
			return err
		}
	}
	return nil
}

// amendMeta stores the record of seq again with fields, its new metadata
// and note (encodeMetaFields), and says whether there was one. Its
// summary and chunks hold neither, and stay as they are: a chunked
// frame is not written again.
func (b sessionBuckets) amendMeta(seq uint64, fields []byte) (found bool, err error) {
	k := seqKey(seq)
	old := b.msgs.Get(k)
	if old == nil {
		return false, nil
	}
	rec, err := withMetaFields(old, fields)
	if err != nil {
		return true, fmt.Errorf("its record: %w", err)
	}
	return true, b.msgs.Put(k, rec)
}
