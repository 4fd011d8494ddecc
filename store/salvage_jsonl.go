package store

import (
	"encoding/json"
	"fmt"
	"github.com/mcptape/mcptape/internal/utf8bom"
	"io"
	"os"
	"path/filepath"
)

// salvageJSONL is Salvage for an export: a download cut short, a line
// mangled by an editor or a mail client. Import refuses such a file at
// its first bad line; this reads on. Each line that cannot be read is a
// Loss naming its number. Messages keep their session, in the order their
// lines come; a seq that skips ahead is a loss of the seqs between, a seq
// that does not move forward is a line lost (it cannot be placed), and a
// session whose header line is missing gets one made from its messages.
func salvageJSONL(path string, w io.Writer, sessions []string, opts []ExportOption) (*SalvageReport, error) {
	if err := notADirectory(path); err != nil {
		return nil, err
	}
	// A cassette named .jsonl is no damaged export: each of its "lines"
	// would be reported lost, and none salvaged.
	if err := misnamed(path, KindJSONL, ErrNotJSONL); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return salvageJSONLText(data, path, w, sessions, opts)
}

// salvageJSONLText is salvageJSONL of the text data, named path.
func salvageJSONLText(data []byte, path string, w io.Writer, sessions []string, opts []ExportOption) (*SalvageReport, error) {
	data = utf8bom.Trim(data) // as readJSONL passes over it
	rep := &SalvageReport{}
	tape := &Tape{}
	type state struct {
		index  int    // in tape.Sessions
		header bool   // its header line was read
		seq    uint64 // the last seq placed, as in the file
		r      renumberer
	}
	bySession := map[string]*state{}
	session := func(id string) *state {
		st, ok := bySession[id]
		if !ok {
			st = &state{index: len(tape.Sessions), r: renumberer{file: filepath.Base(path), session: id, next: 1}}
			bySession[id] = st
			tape.Sessions = append(tape.Sessions, TapeSession{Info: SessionInfo{ID: id, Transport: TransportUnknown}})
		}
		return st
	}
	lineLost := func(n int, format string, a ...any) {
		rep.Lost = append(rep.Lost, Loss{Line: n, Err: fmt.Errorf("%s:%d: %w: %s", path, n, ErrJSONL, fmt.Sprintf(format, a...))})
	}
	r := newLineReader()
	for n, line := range jsonlLines(data) {
		var l messageLine
		err := r.parse(&l, line)
		switch {
		case err != nil:
			lineLost(n, "%v", err)
			continue
		case l.Session == "":
			lineLost(n, `missing "session"`)
			continue
		}
		if l.Info != nil {
			st := session(l.Session)
			ts := &tape.Sessions[st.index]
			if st.header {
				lineLost(n, "second header for session %q", l.Session)
				continue
			}
			var info SessionInfo
			if err := json.Unmarshal(l.Info, &info); err != nil {
				lineLost(n, "%s", infoProblem(err))
				continue
			}
			info.ID = l.Session
			ts.Info, st.header = info, true
			continue
		}
		m := &Message{Session: l.Session, Seq: l.Seq, HTTP: l.HTTP, Note: l.Note}
		if why := r.finish(&l, m); why != "" {
			lineLost(n, "%s", why)
			continue
		}
		st := session(l.Session)
		if l.Seq <= st.seq {
			lineLost(n, "seq %d after seq %d of session %q: it cannot be placed", l.Seq, st.seq, l.Session)
			continue
		}
		if l.Seq > st.seq+1 {
			loss := Loss{Session: l.Session, From: st.seq + 1, To: l.Seq - 1, Err: fmt.Errorf("%s:%d: %w: session %s skips from seq %d to %d", path, n, ErrJSONL, l.Session, st.seq, l.Seq)}
			rep.Lost = append(rep.Lost, loss)
			st.r.lost(loss)
		}
		st.seq = l.Seq
		st.r.place(l.Seq, m)
		ts := &tape.Sessions[st.index]
		ts.Messages = append(ts.Messages, m)
	}
	for i := range tape.Sessions {
		s := &tape.Sessions[i]
		if !bySession[s.Info.ID].header {
			rep.Lost = append(rep.Lost, Loss{Session: s.Info.ID, Err: fmt.Errorf("%s: %w: no header line for session %s", path, ErrJSONL, s.Info.ID)})
		}
		s.Info.fillGaps(s.firstTime)
	}
	if len(sessions) > 0 {
		if err := tape.Pick(path, sessions); err != nil {
			return rep, err
		}
		infos := make([]SessionInfo, len(tape.Sessions))
		for i, s := range tape.Sessions {
			infos[i] = s.Info
		}
		rep.Lost = lossesOf(rep.Lost, infos)
	}
	for _, s := range tape.Sessions {
		rep.Sessions++
		rep.Messages += len(s.Messages)
	}
	return rep, WriteJSONL(w, tape, opts...)
}
