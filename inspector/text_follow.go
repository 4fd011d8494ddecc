package inspector

import (
	"context"
	"fmt"
	"time"

	"github.com/mcptape/mcptape/internal/termsafe"
	"github.com/mcptape/mcptape/store"
)

// show --follow prints each message once, and a printed line cannot be
// taken back. A recorder stores a client's HTTP message before its answer
// comes, and when the answer carries no message (the 202 of every
// notification over Streamable HTTP, a bare 404 or 503) it stores the
// message again with that status (store.Session.Amend), often after a
// follower has read the first version. Printed at once, such a line would
// lack the status --http shows, and a filter on the status (status:404)
// would pass it over for good. So the follower holds such a message back,
// and every line after it, so that the lines stay in order: until its
// status is recorded, an answer to it is read, its session ends, or
// AmendGrace passes. The line printed then is the one a later show of the
// file prints, and what a CI log wants: final lines, late by a moment,
// rather than prompt ones that are wrong. A message still held when show
// stops is printed as it stands.
//
// A status recorded after the grace (a gateway that refuses after a
// long wait) comes after the message's line: with --http it gets a line
// of its own naming the message ("http: s1:4: POST /mcp → 504 …"), and a
// message the filter passed over for want of it (status:5xx) gets its
// line then, late and out of order, rather than never.

// textFollow is what WriteText keeps while following.
type textFollow struct {
	tw *textWriter
	// next is the position in the model's display order of the first
	// row not released yet: the rows before it were printed or passed
	// over (the filter hid them).
	next int
	// seen is when each held row was first found held.
	seen map[int32]time.Time
	// last is the time of the last line printed, for the next one's Δ.
	last int64
	// late are the rows released at the end of their grace with no
	// status yet, and whether their line was printed.
	late map[int32]bool
}

// follow prints the visible rows, then polls for more until ctx ends.
func (tw *textWriter) follow(ctx context.Context) error {
	m := tw.m
	f := &textFollow{tw: tw, seen: map[int32]time.Time{}, late: map[int32]bool{}}
	tw.lw.upTo = make([]uint64, len(m.Sessions))
	if err := f.step(true, false); err != nil {
		return err
	}
	t := time.NewTicker(tw.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return f.step(false, true)
		case <-t.C:
		}
		for {
			b, err := tw.src.Poll(m.After())
			if err != nil {
				return fmt.Errorf("follow: %w", err)
			}
			if err := m.Apply(b, tw.src); err != nil {
				return err
			}
			if err := f.amendedLate(b.Amended); err != nil {
				return err
			}
			if err := f.step(false, false); err != nil {
				return err
			}
			if tw.opts.Lint {
				if err := tw.lw.late(); err != nil {
					return err
				}
			}
			if !b.More || ctx.Err() != nil {
				break
			}
		}
	}
}

// step prints the rows that can be released now; first says the model
// was just loaded (its visible rows are judged already), all that every
// row is to be released, held or not.
func (f *textFollow) step(first, all bool) error {
	tw, m := f.tw, f.tw.m
	from := f.next
	now := time.Now()
	tw.takeBare()
	idxs, err := f.release(now, all)
	if err != nil {
		return err
	}
	if len(idxs) > 0 && !all {
		// release read the rows' statuses after the model's last poll:
		// an amendment it saw, which released a row, may be one the
		// model has not taken yet, and lint would judge the row's line
		// on its first version, then report the finding late, away
		// from it. Anything release saw was committed, so a poll now
		// brings it.
		if err := f.catchUp(); err != nil {
			return err
		}
	}
	for len(tw.lw.upTo) < len(m.Sessions) {
		tw.lw.upTo = append(tw.lw.upTo, 0)
	}
	for _, idx := range idxs {
		r := &m.rows[idx]
		tw.lw.upTo[r.sess] = max(tw.lw.upTo[r.sess], r.seq)
	}
	shown, err := f.shown(idxs, from, first)
	if err != nil {
		return err
	}
	for _, idx := range shown {
		if _, ok := f.late[idx]; ok {
			f.late[idx] = true
		}
	}
	for idx := range f.late { // those that will get no status now
		if r := &m.rows[idx]; r.pair >= 0 || m.Sessions[r.sess].Info.End != nil {
			delete(f.late, idx)
		}
	}
	for len(shown) > 0 {
		part := shown[:min(len(shown), bodyBatch)]
		shown = shown[len(part):]
		rows := make([]Row, len(part))
		for i, idx := range part {
			rows[i] = m.row(int(idx))
			if f.last != 0 {
				rows[i].Delta = time.Duration(m.rows[idx].time - f.last)
			}
			f.last = m.rows[idx].time
		}
		if err := tw.print(rows); err != nil {
			return err
		}
	}
	// An exchange without a message prints before the first line after
	// it, or once no line before it can still be held back.
	if all {
		tw.printBare(time.Time{})
	} else {
		tw.printBare(now.Add(-tw.opts.AmendGrace))
	}
	return tw.w.Flush()
}

// catchUp takes what the cassette recorded since the model's last poll:
// amended rows are restated (and their sessions' lint redone), new rows
// wait for the next step.
func (f *textFollow) catchUp() error {
	tw := f.tw
	b, err := tw.src.Poll(tw.m.After())
	if err != nil {
		return fmt.Errorf("follow: %w", err)
	}
	if err := tw.m.Apply(b, tw.src); err != nil {
		return err
	}
	return f.amendedLate(b.Amended)
}

// release returns the rows from next on, in display order, up to the
// first that is held (with all, up to the end), and moves next past them.
// It reads the status of the rows it looks at a run at a time, so that
// one held early in a long backlog is not paid for by every row after it
// at every poll.
func (f *textFollow) release(now time.Time, all bool) ([]int32, error) {
	order := f.tw.m.order[f.next:]
	n := 0
scan:
	for n < len(order) {
		end := min(len(order), n+releaseRun)
		var held map[int32]bool
		if !all {
			var err error
			if held, err = f.unanswered(order[n:end]); err != nil {
				return nil, err
			}
		}
		for ; n < end; n++ {
			idx := order[n]
			if held[idx] {
				if f.waiting(idx, now) {
					break scan
				}
				f.late[idx] = false // its status may come yet
			}
			delete(f.seen, idx)
		}
	}
	f.next += n
	return order[:n], nil
}

// amendedLate prints what the amended messages among msgs add to rows
// released before their status came: with --http, the status on a line
// of its own under the message's name, or, for a row the filter passed
// over, its line, now that it matches.
func (f *textFollow) amendedLate(msgs []BatchMsg) error {
	tw, m := f.tw, f.tw.m
	for i := range msgs {
		sess, ok := m.sessIdx[msgs[i].Session]
		if !ok {
			continue
		}
		idx, ok := m.rowOf(sess, msgs[i].Sum.Seq)
		if !ok {
			continue
		}
		printed, ok := f.late[idx]
		if !ok {
			continue
		}
		delete(f.late, idx)
		r := m.row(int(idx))
		if !printed {
			match, err := m.matchesNow(idx, tw.src)
			if err != nil {
				return err
			}
			if match {
				if err := tw.print([]Row{r}); err != nil {
					return err
				}
			}
			continue
		}
		if !tw.opts.HTTP {
			continue // its line shows no status
		}
		msg, err := tw.src.Message(r.Ref)
		if err != nil {
			return err
		}
		if msg.HTTP == nil || msg.HTTP.Status == 0 {
			continue
		}
		first := httpSummary(msg.HTTP)[0]
		fmt.Fprintf(tw.w, "http: %s:%d: %s (recorded after its line)\n", r.Session, r.Seq, first[len(first)-1].Text)
		if msg.Note != "" {
			fmt.Fprintf(tw.w, "    note: %s\n", termsafe.Line(store.OneLine(msg.Note)))
		}
	}
	return nil
}

// releaseRun is how many rows release judges at a time.
const releaseRun = 16 << 10

// unanswered finds, among rows, the client messages of HTTP sessions
// still being recorded that may yet be amended with the status of their
// answer: a POST's message with no status recorded and no answer read.
func (f *textFollow) unanswered(rows []int32) (map[int32]bool, error) {
	m := f.tw.m
	bySess := map[uint32][]uint64{} // rows are in seq order within a session
	for _, idx := range rows {
		r := &m.rows[idx]
		info := &m.Sessions[r.sess].Info
		switch {
		case r.dir != store.C2S || r.pair >= 0 || info.End != nil:
		case info.Transport == store.TransportHTTP, info.Transport == store.TransportLegacySSE, info.Transport == "":
			bySess[r.sess] = append(bySess[r.sess], r.seq)
		}
	}
	held := map[int32]bool{}
	for sess, seqs := range bySess {
		err := f.tw.src.HTTPBriefs(m.Sessions[sess].Info.ID, seqs, func(seq uint64, b store.HTTPBrief) error {
			if b.Stream == store.StreamPostBody && b.Status == 0 {
				if idx, ok := m.rowOf(sess, seq); ok {
					held[idx] = true
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return held, nil
}

// waiting says whether held row idx is still within its grace, counted
// from when the recorder read it or this follower first found it held,
// whichever is earlier: a message read long ago is not held again, and
// one stamped by a clock ahead of this one is not held for longer.
func (f *textFollow) waiting(idx int32, now time.Time) bool {
	first, ok := f.seen[idx]
	if !ok {
		first = now
		f.seen[idx] = now
	}
	if at := time.Unix(0, f.tw.m.rows[idx].time); at.Before(first) {
		first = at
	}
	return now.Sub(first) < f.tw.opts.AmendGrace
}

// shown returns those of rows, released from display position from on,
// that the filter and scope show. Just after loading, a filter that does
// not read the HTTP status has judged them already: the model's visible
// rows are a subsequence of its display order. Otherwise they are judged
// now, as they stand: release read their status after the model did,
// and a row amended in between would be judged on its first version.
func (f *textFollow) shown(rows []int32, from int, first bool) ([]int32, error) {
	m := f.tw.m
	if !first || m.filter != nil && m.filter.reads()&readsHTTP != 0 {
		keep, err := m.matches(rows, m.filter, f.tw.src)
		if err != nil {
			return nil, err
		}
		out := rows[:0:0]
		for i, idx := range rows {
			if keep[i] && m.inScope(idx) {
				out = append(out, idx)
			}
		}
		return out, nil
	}
	var out []int32
	j := 0
	for pos, idx := range m.order[:from+len(rows)] {
		if j < len(m.visible) && m.visible[j] == idx {
			j++
			if pos >= from {
				out = append(out, idx)
			}
		}
	}
	return out, nil
}
