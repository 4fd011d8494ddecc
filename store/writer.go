package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// WriterOptions tune a Writer. The zero value is what mcpspy uses.
type WriterOptions struct {
	// CommitInterval is the shortest gap between two group commits. A
	// commit starts as soon as a message is waiting and the gap has
	// passed, so a message waits at most this long plus one commit.
	// Default 25 ms: inside "committed within 50 ms of forwarding". The
	// writer keeps the file open between commits while it is busy and no
	// other process waits for it (see dbLease); when it must reopen the
	// file for each commit, the interval sets most of the store's cost.
	CommitInterval time.Duration
	// MaxPending is the number of frame bytes buffered before Append starts
	// to wait for the store. Default 256 MiB.
	MaxPending int
	// Observe, if set, sees every message (with its summary) on the commit
	// goroutine, before it is stored, and may update the session's
	// Handshake, reporting whether it did. The recorder uses it to note the
	// handshake without slowing the forwarding path; it runs without the
	// lock Append takes, so parsing a large frame never stalls forwarding.
	Observe func(info *SessionInfo, m *Message, s *Summary) (changed bool)
	// Rewrite, if set, gives on the commit goroutine the message to store
	// in place of m: m itself, or a copy with secrets blanked (mcpspy
	// record --redact). It runs before Observe, so the session's info
	// holds what the cassette holds. It must not change m, whose frame the
	// proxy may still be forwarding. It sees each message once, even when
	// a failed commit is retried.
	Rewrite func(m *Message) *Message
	// Log receives warnings (a slow store, a failed commit that will be
	// retried). Default: discarded.
	Log io.Writer
	// CreateLate leaves a missing cassette to the first commit that has
	// something to store, so that a writer that records nothing leaves no
	// file behind: mcpmock's fallback makes its writer before it knows
	// whether its server will ever be asked. NewWriter still checks that
	// the file could be created there. A follower cannot open the
	// cassette before that commit, so a recorder that others watch from
	// the start does not set it.
	CreateLate bool
	// NoSync skips fsync on commit. Data still survives a killed process
	// (it is in the page cache), but not a power cut. For benchmarks and
	// tests.
	NoSync bool
}

// Writer appends sessions to one cassette with group commit. It opens the
// file only while committing, so other recorders and readers can share it.
//
// Append may be called from many goroutines at once; everything else too.
type Writer struct {
	path string
	opts WriterOptions

	mu           sync.Mutex
	room         *sync.Cond // signalled when pendingBytes drops
	pending      []*Message
	pendingBytes int
	// appendedBytes and storedBytes count frame bytes since the writer
	// began, as they come and as commits store them (see WaitBacklog).
	appendedBytes, storedBytes uint64
	// commitFailing: the last commit failed (a full disk, a foreign
	// lock); WaitBacklog does not wait for the store then.
	commitFailing bool
	// rewritten is how many messages at the head of pending have been
	// through Rewrite already: a failed commit puts them back, and the
	// retry must not rewrite them again (Rewrite may note what it sees,
	// as vcr's Received does).
	rewritten int
	dirty     map[*Session]bool   // sessions whose info changed
	byID      map[string]*Session // by key: the id, or a started session's placeholder
	// started lists the sessions StartSession made that have no id yet,
	// in the order they were made: the next commit, or NewSession, gives
	// them ids in that order.
	started    []*Session
	placeholds uint64 // source of placeholder keys
	closed     bool
	warnedFull bool

	flushMu sync.Mutex // serialises commits, so a session's batches land in order
	lease   dbLease    // guarded by flushMu
	// shut: Close has made its final commit (guarded by flushMu). A
	// commit after it would open the file again, and create it anew if
	// it was removed since.
	shut bool

	kick chan struct{}
	done chan struct{}
	wg   sync.WaitGroup
}

// Session records one session. Its methods are safe for concurrent use.
type Session struct {
	w    *Writer
	info SessionInfo // guarded by w.mu
	next uint64      // next seq, guarded by w.mu
	// key is what the session's messages carry in Message.Session while
	// they wait for a commit, and its key in w.byID: its id, or, until the
	// writer has given it one, a placeholder no cassette id can equal.
	// Guarded by w.mu.
	key string
}

// NewWriter checks (or creates; see CreateLate) the cassette at path and
// starts the commit goroutine. It writes nothing to a cassette that exists:
// one that nothing is recorded into keeps its bytes. Close it to flush and
// stop.
func NewWriter(path string, opts WriterOptions) (*Writer, error) {
	if opts.CommitInterval <= 0 {
		opts.CommitInterval = 25 * time.Millisecond
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = 256 << 20
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if err := initWriter(path, opts.CreateLate); err != nil {
		return nil, err
	}
	w := &Writer{
		path:  path,
		lease: dbLease{path: path},
		opts:  opts,
		dirty: map[*Session]bool{},
		byID:  map[string]*Session{},
		kick:  make(chan struct{}, 1),
		done:  make(chan struct{}),
	}
	w.room = sync.NewCond(&w.mu)
	w.wg.Add(1)
	go w.loop()
	return w, nil
}

// initWriter checks or creates the cassette at path, as Init; late, a
// missing one is only checked for: the first commit creates it.
func initWriter(path string, late bool) error {
	if _, err := os.Stat(path); late && errors.Is(err, fs.ErrNotExist) {
		tmp, err := tempBeside(path)
		if err == nil {
			os.Remove(tmp)
		}
		return err
	}
	return Init(path)
}

// Path is the cassette file.
func (w *Writer) Path() string { return w.path }

// NewSession allocates a session id and stores info at once, so that a
// follower sees the session before its first message. It notes this
// process as the session's RecorderProcess, as StartSession does: until
// the session's end is stored, a reader takes it for still recording
// only while this process runs. The sessions
// StartSession began before it get their ids in the same transaction,
// before its own: a writer's ids follow the order its sessions were
// begun in, however they were begun. If it fails, they wait for the
// next commit, as they would have.
func (w *Writer) NewSession(info SessionInfo) (*Session, error) {
	if info.Start.IsZero() {
		info.Start = time.Now()
	}
	info.RecorderProcess = recorderProcess()
	w.flushMu.Lock()
	err := w.allocate(&info)
	w.flushMu.Unlock()
	if err != nil {
		return nil, err
	}
	s := &Session{w: w, info: info, next: 1, key: info.ID}
	w.mu.Lock()
	w.byID[s.key] = s
	w.mu.Unlock()
	return s, nil
}

// StartSession begins a session without waiting for the file: the
// writer's next group commit allocates its id and stores its info, in a
// transaction of its own just before the one that stores its first
// messages (or in NewSession's, if NewSession comes first), and Append
// works meanwhile. For a proxy that starts a session on a client's first
// frame: NewSession's transaction waits for every commit before it (they
// are serialized) and, while another process holds the cassette, for up
// to LockTimeout. A commit that fails keeps the session and its messages
// for the next try, as it keeps messages.
// The only error is ErrWriterClosed.
func (w *Writer) StartSession(info SessionInfo) (*Session, error) {
	if info.Start.IsZero() {
		info.Start = time.Now()
	}
	info.RecorderProcess = recorderProcess()
	info.ID = ""
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, fmt.Errorf("new session: %s: %w", w.path, ErrWriterClosed)
	}
	w.placeholds++
	s := &Session{w: w, info: info, next: 1, key: "\x00started-" + strconv.FormatUint(w.placeholds, 10)}
	w.byID[s.key] = s
	w.started = append(w.started, s)
	w.kickLocked()
	return s, nil
}

// nextID takes the next free session id of the cassette: NextSequence
// keeps ids unique across the processes that record into it.
func nextID(tx *bolt.Tx) (string, error) {
	b := tx.Bucket(bucketSessions)
	for {
		n, err := b.NextSequence()
		if err != nil {
			return "", err
		}
		id := "s" + strconv.FormatUint(n, 10)
		if b.Get([]byte(id)) == nil { // else an imported session took it
			return id, nil
		}
	}
}

// ID is the session's id in the cassette ("s1", "s2", …); "" for a
// session from StartSession that no commit has stored yet.
func (s *Session) ID() string {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return s.info.ID
}

// Append records one frame and returns its seq. The sequencer is here:
// call Append when the frame is read, before forwarding it, so that seq
// follows causal order. frame is owned by the store from now on and must
// not be changed. Append only waits when MaxPending bytes are already
// buffered.
func (s *Session) Append(dir Dir, t time.Time, frame []byte, meta *HTTPMeta) uint64 {
	w := s.w
	w.mu.Lock()
	w.waitRoomLocked()
	seq := s.next
	s.next++
	w.enqueueLocked(&Message{Session: s.key, Seq: seq, Dir: dir, Time: t, Frame: frame, HTTP: meta})
	w.mu.Unlock()
	return seq
}

// Amend records m again over the message Append gave m.Seq: the same
// Dir, Time and Frame, with metadata known only after the frame went on,
// such as the HTTP status of a POST whose answer carried no message, or a
// Note. m.Session is ignored. The next commit stores it over the first (in
// the same transaction, or a later one); Observe does not see it again.
// Like Append, it waits only when MaxPending bytes are already buffered.
func (s *Session) Amend(m Message) {
	w := s.w
	w.mu.Lock()
	w.waitRoomLocked()
	m.Session, m.amends, m.rpc = s.key, true, nil
	w.enqueueLocked(&m)
	w.mu.Unlock()
}

// AmendMeta records on the message Append gave seq the HTTP metadata and
// note learnt after its frame went on (the status and headers of a POST
// answered without a message, a Note), in place of those it was appended
// with; meta, like Append's, is the store's from now on. It is Amend for
// a caller that changes nothing else: it takes no frame, so a long one
// need not live on until the next commit, and the commit does not store
// it again. The commit reads the record of seq in its own transaction
// and writes it back with the new metadata and note; its direction,
// time, frame and summary stay as they were. The amendment log notes it
// as it notes an Amend. Nothing is waited for: it adds no frame bytes.
func (s *Session) AmendMeta(seq uint64, meta *HTTPMeta, note string) {
	w := s.w
	w.mu.Lock()
	w.enqueueLocked(&Message{Session: s.key, Seq: seq, HTTP: meta, Note: note, amends: true, amendsMeta: true})
	w.mu.Unlock()
}

// waitRoomLocked waits while MaxPending bytes are buffered, saying so
// once; w.mu is held.
func (w *Writer) waitRoomLocked() {
	for w.pendingBytes >= w.opts.MaxPending && !w.closed {
		if !w.warnedFull {
			w.warnedFull = true
			fmt.Fprintf(w.opts.Log, "mcpspy: cassette %s is %d MiB behind; slowing traffic until it catches up\n", w.path, w.pendingBytes>>20)
		}
		w.kickLocked()
		w.room.Wait()
	}
}

// enqueueLocked adds m to what the next commit stores; w.mu is held.
func (w *Writer) enqueueLocked(m *Message) {
	if len(w.pending) == 0 {
		w.kickLocked() // the first message waiting starts a commit
	}
	w.pending = append(w.pending, m)
	w.pendingBytes += len(m.Frame)
	w.appendedBytes += uint64(len(m.Frame))
}

// Update changes the session's info; it is stored with the next commit.
func (s *Session) Update(fn func(info *SessionInfo)) {
	s.w.mu.Lock()
	fn(&s.info)
	s.w.dirty[s] = true
	s.w.kickLocked()
	s.w.mu.Unlock()
}

// Info returns a copy of the session's info as it stands.
func (s *Session) Info() SessionInfo {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return s.info
}

// End records how the session ended and commits everything it has.
func (s *Session) End(e EndInfo) error {
	s.Finish(e)
	return s.w.Flush()
}

// Finish records how the session ended without waiting for the disk: the
// writer's next group commit stores it, as it stores appended messages,
// and so do Flush and Close. For a caller that must not hold a peer on a
// commit: commits are serialized, so a proxy that ended each of 200
// sessions with End, on the client's DELETE, kept the last client waiting
// for 200 commits.
func (s *Session) Finish(e EndInfo) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	s.Update(func(info *SessionInfo) { info.End = &e })
}

func (w *Writer) kickLocked() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// loop commits whenever something waits, at most once per
// CommitInterval. A failed commit keeps its messages and is retried on the
// next round.
func (w *Writer) loop() {
	defer w.wg.Done()
	retry := time.NewTicker(w.opts.CommitInterval * 10)
	defer retry.Stop()
	// The lease is also checked between commits, so that a writer gone
	// quiet (or one that took the file outside this loop, in NewSession
	// or End) gives it up.
	idle := time.NewTicker(leaseIdle)
	defer idle.Stop()
	// A commit that keeps failing (a full disk, a foreign lock) is told
	// once, not at every retry, four times a second, into the stderr a
	// host shares with its server; and so is its recovery.
	var failing string
	for {
		select {
		case <-w.done:
			return
		case <-w.kick:
		case <-retry.C:
		case <-idle.C:
			w.yieldLease()
			continue
		}
		start := time.Now()
		if err := w.Flush(); err != nil {
			if err.Error() != failing {
				fmt.Fprintf(w.opts.Log, "mcpspy: commit to %s failed, will retry: %v\n", w.path, err)
			}
			failing = err.Error()
		} else if failing != "" {
			fmt.Fprintf(w.opts.Log, "mcpspy: commit to %s works again; what waited is stored\n", w.path)
			failing = ""
		}
		w.yieldLease()
		if gap := w.opts.CommitInterval - time.Since(start); gap > 0 {
			select {
			case <-w.done:
				return
			case <-time.After(gap):
			}
		}
	}
}

// commitBytes bounds the frame bytes one group commit stores (a frame
// larger than it is stored alone). A backlog, left by a slow disk or by
// another process holding the file, is stored in several transactions:
// bbolt copies every value of a transaction into pages of its own until
// the commit, so one transaction for a backlog of MaxPending bytes held
// it twice over, and the heap grew to four times the bound (1 GiB for
// 256 MiB), where each piece adds only its own bytes. A sender held back
// by a full buffer also goes on after the first piece, not after all.
var commitBytes = 16 << 20

// Flush commits everything appended so far. It is safe to call at any time.
func (w *Writer) Flush() error {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	w.mu.Lock()
	left := len(w.pending) // what arrives meanwhile need not keep Flush going
	w.mu.Unlock()
	for {
		taken, cut, err := w.flushPiece(left)
		if err != nil {
			return err
		}
		if left -= taken; !cut {
			return nil
		}
		if left <= 0 {
			// What arrived meanwhile came while pending was not empty,
			// which no append kicks for.
			w.mu.Lock()
			w.kickLocked()
			w.mu.Unlock()
			return nil
		}
		// Between pieces as between commits: a recorder storing its
		// backlog must not keep the file from the others.
		if err := w.lease.yield(); err != nil {
			fmt.Fprintf(w.opts.Log, "mcpspy: closing cassette %s: %v\n", w.path, err)
		}
	}
}

// flushPiece commits the messages at the head of pending, commitBytes of
// frames at most, and says how many it took and whether it left some
// behind. Session infos go in with the last piece of a Flush (left is how
// many messages the Flush has still to store), so that a follower sees a
// session end after its messages. The caller holds flushMu.
func (w *Writer) flushPiece(left int) (taken int, cut bool, err error) {
	// First, so that Rewrite and Observe see the started sessions' ids.
	if err := w.allocate(nil); err != nil {
		return 0, false, err
	}
	w.mu.Lock()
	batch, cut := w.takeLocked()
	taken = len(batch)
	rewritten := min(w.rewritten, taken)
	w.rewritten -= rewritten
	if len(w.started) > 0 { // started while allocate ran
		batch = w.holdStartedLocked(batch)
	}
	batchBytes := 0
	for _, m := range batch {
		batchBytes += len(m.Frame)
	}
	last := !cut || left <= taken
	anyDirty := last && len(w.dirty) > 0
	w.mu.Unlock()
	if len(batch) == 0 && !anyDirty {
		return taken, cut, nil
	}

	// Before encoding: a revived cassette renumbers the batch.
	err = w.reviveIfRemoved(batch)
	var encoded []encodedMessage
	var infos []SessionInfo
	var dirty []*Session
	if err == nil {
		encoded, infos, dirty, rewritten, err = w.encode(batch, rewritten, last)
	}
	if err == nil {
		err = w.commit(batch, encoded, infos)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if !w.commitFailing {
			w.commitFailing = true
			w.room.Broadcast() // a WaitBacklog waits no more
		}
		// Keep everything for the next try: nothing is dropped. The
		// rewritten messages stay a prefix of pending: those left behind
		// were rewritten only if all of batch had been.
		w.pending = append(batch, w.pending...)
		w.rewritten += rewritten
		for _, s := range dirty {
			w.dirty[s] = true
		}
		return taken, cut, err
	}
	w.pendingBytes -= batchBytes
	w.storedBytes += uint64(batchBytes)
	w.commitFailing = false
	if w.pendingBytes < w.opts.MaxPending/2 {
		w.warnedFull = false
	}
	w.room.Broadcast()
	return taken, cut, nil
}

// takeLocked takes the messages at the head of pending, up to commitBytes
// of frames (one at least), and says whether it left some. w.mu is held.
func (w *Writer) takeLocked() (batch []*Message, cut bool) {
	k, bytes := 0, 0
	for k < len(w.pending) && (k == 0 || bytes+len(w.pending[k].Frame) <= commitBytes) {
		bytes += len(w.pending[k].Frame)
		k++
	}
	if k == len(w.pending) {
		batch, w.pending = w.pending, nil
		return batch, false
	}
	// A copy, and the head cleared, so that the array pending keeps
	// holds no frame once it is stored.
	batch = append([]*Message(nil), w.pending[:k]...)
	clear(w.pending[:k])
	w.pending = w.pending[k:]
	return batch, true
}

// encode prepares a batch outside the file lock, which other processes
// share, and takes the infos that changed (Observe may change some). The
// first done messages of batch were rewritten by an earlier try; encode
// rewrites the rest in place and says how many of batch now are, even
// when it fails. Without withInfos it leaves the infos for a later piece.
func (w *Writer) encode(batch []*Message, done int, withInfos bool) ([]encodedMessage, []SessionInfo, []*Session, int, error) {
	encoded := make([]encodedMessage, len(batch))
	for i, m := range batch {
		if w.opts.Rewrite != nil && i >= done {
			m = w.opts.Rewrite(m)
			batch[i] = m
			done = i + 1
		}
		if m.amendsMeta { // no frame: nothing to summarize or observe
			encoded[i] = encodedMessage{rec: encodeMetaFields(m)}
			continue
		}
		sum := Summarize(m)
		if w.opts.Observe != nil && !m.amends {
			w.observe(m, &sum)
		}
		e, err := encodeMessage(m, &sum)
		if err != nil {
			return nil, nil, nil, done, err
		}
		encoded[i] = e
	}
	if !withInfos {
		return encoded, nil, nil, len(batch), nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	infos := make([]SessionInfo, 0, len(w.dirty))
	dirty := make([]*Session, 0, len(w.dirty))
	for s := range w.dirty {
		if s.info.ID == "" {
			continue // started after allocate: stays dirty for its own commit
		}
		infos = append(infos, s.info)
		dirty = append(dirty, s)
		delete(w.dirty, s)
	}
	return encoded, infos, dirty, len(batch), nil
}

// holdStartedLocked keeps the messages of sessions that have no id yet
// pending, ahead of what is left there, for the commit after the one that
// gives them ids, and returns the rest of batch. Rewritten messages, at
// the head of batch, all have ids. w.mu is held.
func (w *Writer) holdStartedLocked(batch []*Message) []*Message {
	keep := batch[:0:0]
	var held []*Message
	for _, m := range batch {
		if w.byID[m.Session].info.ID == "" {
			held = append(held, m)
			continue
		}
		keep = append(keep, m)
	}
	if len(held) > 0 {
		w.pending = append(held, w.pending...)
	}
	return keep
}

// allocate gives the sessions StartSession began their ids, in the order
// they were begun, and stores their infos, in one transaction; with own
// (NewSession's info), it gives own the next id and stores it too, in the
// same transaction. The started sessions' messages, all pending, take the
// ids. A failed transaction leaves them as they were, for the next try.
// The caller holds flushMu.
func (w *Writer) allocate(own *SessionInfo) error {
	w.mu.Lock()
	started := w.started
	infos := make([]SessionInfo, len(started), len(started)+1)
	for i, s := range started {
		infos[i] = s.info
	}
	w.mu.Unlock()
	if own != nil {
		infos = append(infos, *own) // begun after every session in started
	}
	if len(infos) == 0 {
		return nil
	}
	err := w.update(func(tx *bolt.Tx) error {
		for i := range infos {
			var err error
			if infos[i].ID, err = nextID(tx); err != nil {
				return err
			}
			if err := putInfo(tx, &infos[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("new session: %w", err)
	}
	if own != nil {
		*own = infos[len(started)]
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := make(map[string]string, len(started)) // placeholder to id
	for i, s := range started {
		delete(w.byID, s.key)
		ids[s.key] = infos[i].ID
		s.key, s.info.ID = infos[i].ID, infos[i].ID
		w.byID[s.key] = s
	}
	// Only StartSession adds to w.started, at its end, and only a
	// flushMu holder takes from it.
	clear(started) // w.started's head
	w.started = w.started[len(started):]
	for _, m := range w.pending {
		if id, ok := ids[m.Session]; ok {
			m.Session = id
		}
	}
	return nil
}

// observe shows m to Observe on a copy of its session's info, outside
// w.mu, and keeps the handshake it noted.
func (w *Writer) observe(m *Message, sum *Summary) {
	w.mu.Lock()
	s := w.byID[m.Session]
	var info SessionInfo
	if s != nil {
		info = s.info
	}
	w.mu.Unlock()
	if s == nil || !w.opts.Observe(&info, m, sum) {
		return
	}
	w.mu.Lock()
	s.info.Handshake = info.Handshake
	w.dirty[s] = true
	w.mu.Unlock()
}

func (w *Writer) commit(batch []*Message, encoded []encodedMessage, infos []SessionInfo) error {
	return w.update(func(tx *bolt.Tx) error {
		// Concurrent HTTP sessions interleave in a batch: open each
		// session's buckets once, not at every switch.
		open := map[string]sessionBuckets{}
		amends := newAmendLog(batch)
		for i, m := range batch {
			sb, ok := open[m.Session]
			if !ok {
				var err error
				if sb, err = openSessionBuckets(tx, m.Session); err != nil {
					return err
				}
				open[m.Session] = sb
			}
			if m.amendsMeta {
				found, err := sb.amendMeta(m.Seq, encoded[i].rec)
				if err != nil {
					return fmt.Errorf("amend %s seq %d: %w", m.Session, m.Seq, err)
				}
				if !found {
					// Only a cassette removed while recording loses
					// messages (reviveIfRemoved): the amendment goes
					// with its message, rather than fail every commit.
					fmt.Fprintf(w.opts.Log, "mcpspy: cassette %s: no message %s seq %d to amend; its amendment is dropped\n", w.path, m.Session, m.Seq)
					continue
				}
			}
			if err := amends.note(tx, m); err != nil {
				return err
			}
			if m.amendsMeta {
				continue
			}
			if err := sb.put(m.Seq, encoded[i]); err != nil {
				return err
			}
		}
		for i := range infos {
			if err := putInfo(tx, &infos[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// update runs fn in one write transaction on the leased handle. The caller
// holds flushMu. A failed transaction gives the handle up, so the next try
// starts from a fresh open.
func (w *Writer) update(fn func(tx *bolt.Tx) error) error {
	if w.shut {
		return fmt.Errorf("%s: %w", w.path, ErrWriterClosed)
	}
	if err := w.reviveIfRemoved(nil); err != nil {
		return err
	}
	db, err := w.lease.get()
	if err != nil {
		return err
	}
	db.NoSync = w.opts.NoSync
	db.NoGrowSync = w.opts.NoSync
	if err = writeTx(w.path, db, fn); err != nil {
		_ = w.lease.release()
	}
	return err
}

// reviveIfRemoved makes the cassette anew when someone removed it while
// the writer had it closed between commits (bbolt would otherwise create
// a bare file on the next open, without the cassette's buckets, and the
// sessions' infos would be lost with the old file). It says so once, and
// writes the infos of the writer's sessions at once, so that the rest of
// their messages keep their sessions and another recorder does not take
// their ids (a session StartSession began has none yet: allocate gives
// it one in the new file). Each session's seqs start again from 1 in the
// new file, so that they stay dense there (the messages before are gone):
// batch, the messages a Flush is about to commit, and those still pending
// are renumbered. The caller holds flushMu.
func (w *Writer) reviveIfRemoved(batch []*Message) error {
	if w.shut || w.lease.db != nil { // a closed writer writes nothing (update says so)
		return nil
	}
	if _, err := os.Stat(w.path); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if w.lease.opens == 0 {
		// Not created yet (CreateLate), or removed before this writer
		// stored anything in it: made now, whole, as Init makes it.
		_, err := create(w.path)
		return err
	}
	fmt.Fprintf(w.opts.Log, "mcpspy: cassette %s was removed while recording; recording the rest into a new one there (what the removed file held is gone with it)\n", w.path)
	if _, err := create(w.path); err != nil {
		return err
	}
	w.mu.Lock()
	w.renumberFromOneLocked(batch)
	infos := make([]SessionInfo, 0, len(w.byID))
	for _, s := range w.byID {
		if s.info.ID != "" { // a started session's info goes with its id, in allocate
			infos = append(infos, s.info)
		}
	}
	w.mu.Unlock()
	db, err := w.lease.get()
	if err != nil {
		return err
	}
	err = writeTx(w.path, db, func(tx *bolt.Tx) error {
		for i := range infos {
			if err := putInfo(tx, &infos[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		_ = w.lease.release()
	}
	return err
}

// renumberFromOneLocked shifts each session's uncommitted messages (batch
// and w.pending) and its next seq so that its first uncommitted message is
// seq 1; w.mu is held.
func (w *Writer) renumberFromOneLocked(batch []*Message) {
	first := map[string]uint64{}
	for _, msgs := range [][]*Message{batch, w.pending} {
		for _, m := range msgs {
			if m.amendsMeta {
				continue // it stores no message: one of these, or one gone
			}
			if f, ok := first[m.Session]; !ok || m.Seq < f {
				first[m.Session] = m.Seq
			}
		}
	}
	shift := make(map[string]uint64, len(w.byID))
	for id, s := range w.byID {
		f, ok := first[id]
		if !ok {
			f = s.next
		}
		shift[id] = f - 1
		s.next -= f - 1
	}
	for _, msgs := range [][]*Message{batch, w.pending} {
		for _, m := range msgs {
			if m.amendsMeta && m.Seq <= shift[m.Session] {
				m.Seq = 0 // its message went with the removed file: no seq finds it
				continue
			}
			m.Seq -= shift[m.Session]
		}
	}
}

// yieldLease lets the file go if another process waits for it or the
// writer has been idle; see dbLease.
func (w *Writer) yieldLease() {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	if err := w.lease.yield(); err != nil {
		fmt.Fprintf(w.opts.Log, "mcpspy: closing cassette %s: %v\n", w.path, err)
	}
}

// Close flushes what is left and stops the commit goroutine. Sessions not
// ended are left without an end record, as after a crash.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.room.Broadcast()
	w.mu.Unlock()
	close(w.done)
	w.wg.Wait()
	var err error
	for range 3 { // a lock held by another process may clear
		if err = w.Flush(); err == nil {
			break
		}
	}
	w.flushMu.Lock()
	w.shut = true
	cerr := w.lease.release()
	w.flushMu.Unlock()
	if err != nil {
		return fmt.Errorf("final commit to %s: %w", w.path, err)
	}
	if cerr != nil {
		return fmt.Errorf("close cassette %s: %w", w.path, cerr)
	}
	return nil
}

func putInfo(tx *bolt.Tx, info *SessionInfo) error {
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketSessions).Put([]byte(info.ID), b)
}
