package inspector

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gdamore/tcell/v2"
	"github.com/mcptape/mcptape/store"
)

// TestModel_ExportFileRefusesTheCassette: the cassette shown is never
// written over, whatever name reaches it; another file is.
func TestModel_ExportFileRefusesTheCassette(t *testing.T) {
	path := writeCassette(t, sampleSession)
	dir := filepath.Dir(path)
	hard := filepath.Join(dir, "hard.db")
	if err := os.Link(path, hard); err != nil {
		t.Fatal(err)
	}
	soft := filepath.Join(t.TempDir(), "soft.db")
	if err := os.Symlink(path, soft); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	tests := []struct {
		name    string
		path    string
		refused bool
	}{
		{"same name", path, true},
		{"relative name", "test.db", true},
		{"dot slash", "./sub/../test.db", true},
		{"hard link", hard, true},
		{"symbolic link", soft, true},
		{"another file", filepath.Join(t.TempDir(), "out.jsonl"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, src := openModel(t, path)
			err := m.ExportFile(tt.path, src, m.VisibleIndexes())
			if got := errors.Is(err, ErrExportIsCassette); got != tt.refused {
				t.Fatalf("ExportFile(%s) = %v; refused %v, want %v", tt.path, err, got, tt.refused)
			}
			if !tt.refused && err != nil {
				t.Fatal(err)
			}
			// The cassette is still one, whole.
			m2, _ := openModel(t, path)
			if m2.Len() != len(sampleSession) {
				t.Errorf("cassette holds %d messages after the export, want %d", m2.Len(), len(sampleSession))
			}
		})
	}
}

// TestView_ExportAsksBeforeOverwriting: e refuses the cassette, and asks
// before it replaces any other file.
func TestView_ExportAsksBeforeOverwriting(t *testing.T) {
	path := writeCassette(t, sampleSession)
	other := filepath.Join(t.TempDir(), "keep.jsonl")
	if err := os.WriteFile(other, []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, src := openModel(t, path)
	t.Chdir(filepath.Dir(path))
	h := startApp(t, m, src, Options{ExportPath: other}, 120, 24)
	h.waitFor(wait, []string{"initialize"})

	// Another name for it: the file is what counts.
	h.play(wait, []keyStep{
		{keys: "e"}, {key: tcell.KeyCtrlU}, {keys: "./test.db"},
		{key: tcell.KeyEnter, want: []string{"is the cassette being shown; writing it would destroy it"}},
	})
	if m2, _ := openModel(t, path); m2.Len() != len(sampleSession) {
		t.Fatalf("cassette holds %d messages after e", m2.Len())
	}

	h.play(wait, []keyStep{
		{keys: "e"}, {key: tcell.KeyEnter, want: []string{"keep.jsonl exists; overwrite it? (y/N)"}},
		{keys: "n"}, {key: tcell.KeyEnter, want: []string{"export: not written; "}},
	})
	if b, _ := os.ReadFile(other); string(b) != "keep me\n" {
		t.Fatalf("declined overwrite wrote %q", b)
	}

	h.play(wait, []keyStep{
		{keys: "e"}, {key: tcell.KeyEnter, want: []string{"overwrite it? (y/N)"}},
		{keys: "y"}, {key: tcell.KeyEnter, want: []string{"exported 13 shown messages"}},
	})
	tape, err := store.Load(other)
	if err != nil {
		t.Fatal(err)
	}
	if len(tape.Sessions) != 1 || len(tape.Sessions[0].Messages) != len(sampleSession) {
		t.Errorf("export holds %+v", tape.Sessions)
	}
}

// TestView_ExportRefusesOtherKinds: e writes JSONL, so a name every
// command reads as another kind of file (as mcpspy export -o refuses
// them), or a directory, is refused at once, with nothing written and
// no "overwrite it?" to answer.
func TestView_ExportRefusesOtherKinds(t *testing.T) {
	path := writeCassette(t, sampleSession)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o700); err != nil {
		t.Fatal(err)
	}
	m, src := openModel(t, path)
	t.Chdir(dir)
	h := startApp(t, m, src, Options{}, 160, 24)
	h.waitFor(wait, []string{"initialize"})
	for _, tt := range []struct{ name, want string }{
		{"x.db", "export: x.db names another kind of file: a .db is read as a cassette; name it .jsonl"},
		{"x.HAR", "a .har is read as a HAR; name it .jsonl"},
		{"x.yaml", "a .yaml is read as an mcpmock script; name it .jsonl"},
		{"adir", "export: adir is a directory, not a file; choose another file"},
	} {
		h.play(wait, []keyStep{
			{keys: "e"}, {key: tcell.KeyCtrlU}, {keys: tt.name},
			{key: tcell.KeyEnter, want: []string{tt.want}},
		})
		if st, err := os.Stat(filepath.Join(dir, tt.name)); tt.name != "adir" && err == nil {
			t.Errorf("%s was written (%d bytes)", tt.name, st.Size())
		}
	}
	if err := m.ExportFile(filepath.Join(dir, "y.db"), src, m.VisibleIndexes()); !errors.Is(err, ErrExportName) {
		t.Errorf("ExportFile(y.db) = %v; want ErrExportName", err)
	}
}
