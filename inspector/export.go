package inspector

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcptape/mcptape/internal/atomicfile"
	"github.com/mcptape/mcptape/store"
)

// Export writes the messages with the given stable indexes as JSONL, in
// the store's export format: per session a header line, then its messages
// in seq order, renumbered from 1 so the file imports and replays like any
// export; each message's note names its original seq. opts change what is
// written, as for store.WriteJSONL.
func (m *Model) Export(w io.Writer, src Source, idxs []int, opts ...store.ExportOption) error {
	bySess := make([][]uint64, len(m.Sessions))
	for _, idx := range idxs {
		if idx < 0 || idx >= len(m.rows) {
			return fmt.Errorf("export: no message %d", idx)
		}
		r := &m.rows[idx]
		bySess[r.sess] = append(bySess[r.sess], r.seq)
	}
	for s, seqs := range bySess {
		if len(seqs) == 0 {
			continue
		}
		sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
		ts := store.TapeSession{Info: m.Sessions[s].Info}
		k := 0
		err := src.Messages(ts.Info.ID, seqs[0], seqs[len(seqs)-1], func(msg *store.Message) error {
			for k < len(seqs) && seqs[k] < msg.Seq {
				k++
			}
			if k < len(seqs) && seqs[k] == msg.Seq {
				// A selection has gaps, but a cassette's seqs run from 1
				// without gaps: renumber, and say where it came from.
				c := *msg
				c.Seq = uint64(len(ts.Messages) + 1)
				from := fmt.Sprintf("exported from %s %s #%d", filepath.Base(m.Path), msg.Session, msg.Seq)
				if c.Note == "" {
					c.Note = from
				} else {
					c.Note += "; " + from
				}
				ts.Messages = append(ts.Messages, &c)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if err := store.WriteJSONL(w, &store.Tape{Sessions: []store.TapeSession{ts}}, opts...); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	return nil
}

// VisibleIndexes returns the stable indexes of the visible rows.
func (m *Model) VisibleIndexes() []int {
	out := make([]int, len(m.visible))
	for i, v := range m.visible {
		out[i] = int(v)
	}
	return out
}

// ErrExportIsCassette is ExportFile's refusal to write over the file the
// model shows: the rename would replace the cassette (and a recorder
// writing it would fail from then on) with a JSONL export of a part of it.
var ErrExportIsCassette = errors.New("is the cassette being shown; writing it would destroy it")

// IsCassette says whether path is the file the model shows: the same file
// by os.SameFile, whatever it is called (another relative path, a hard
// or symbolic link), or the same name when neither exists.
func (m *Model) IsCassette(path string) bool {
	a, errA := os.Stat(path)
	b, errB := os.Stat(m.Path)
	if errA == nil && errB == nil {
		return os.SameFile(a, b)
	}
	absA, errA := filepath.Abs(path)
	absB, errB := filepath.Abs(m.Path)
	return errA == nil && errB == nil && absA == absB
}

// ErrExportName is ExportFile's refusal of a name that every command
// reads as something other than a JSONL export (a .db as a cassette, a
// .har as a HAR, a .yaml as a script): the file written could not be read
// back, as mcpspy export -o refuses it too.
var ErrExportName = errors.New("names another kind of file")

// CheckExportPath says why an export may not go to path, if it may not:
// the cassette shown (ErrExportIsCassette), a name read as another kind
// of file (ErrExportName), or what is no file (a directory), which no
// answer to "overwrite it?" could replace.
func (m *Model) CheckExportPath(path string) error {
	if m.IsCassette(path) {
		return fmt.Errorf("export: %s %w", path, ErrExportIsCassette)
	}
	var as string
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".db":
		as = "a .db is read as a cassette"
	case ".har", ".zip":
		as = "a " + ext + " is read as a HAR"
	case ".yaml", ".yml", ".json":
		as = "a " + ext + " is read as an mcpmock script"
	}
	if as != "" {
		return fmt.Errorf("export: %s %w: %s; name it .jsonl", path, ErrExportName, as)
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("export: %s is a %s, not a file", path, atomicfile.FileKind(st.Mode()))
	}
	return nil
}

// ExportFile exports to path atomically: a temp file beside it, synced,
// then renamed, so a failed export leaves no half file. It refuses what
// CheckExportPath refuses; any other existing file is replaced, so the
// caller asks first.
func (m *Model) ExportFile(path string, src Source, idxs []int) error {
	if err := m.CheckExportPath(path); err != nil {
		return err
	}
	err := atomicfile.Write(path, 0o600, func(f *os.File) error { return m.Export(f, src, idxs) })
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}
