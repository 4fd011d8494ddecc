package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcptape/mcptape/store"
)

func runLs(args []string, s streams) error {
	fs := newFlags("ls", "ls CASSETTE", s)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErrorf("ls: want exactly one CASSETTE, got %d arguments", fs.NArg())
	}
	tape, err := loadAny(fs.Arg(0))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(s.Out)
	for _, sess := range tape.Sessions {
		fmt.Fprintln(w, sessionLine(sess.Info, sess.Messages))
	}
	return w.Flush()
}

// loadAny reads a .db or a .jsonl. ls reads everything, which is fine for
// the sizes a person lists; the inspector reads summaries instead.
func loadAny(path string) (*store.Tape, error) {
	t, err := store.Load(path)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// sessionLine is one line of "mcpspy ls": id, name, transport, start,
// message count, errors, server, how it ended, upstream.
func sessionLine(info store.SessionInfo, msgs []*store.Message) string {
	name := info.Name
	if name == "" {
		name = "-"
	}
	server := "-"
	if len(info.Handshake.ServerInfo) > 0 {
		server = compactServerInfo(info.Handshake.ServerInfo)
	}
	end := "recording"
	if e := info.End; e != nil {
		end = e.Reason
		switch {
		case e.ExitCode != nil && e.Signal == "":
			end += fmt.Sprintf("(%d)", *e.ExitCode)
		case e.Signal != "":
			end += "(" + e.Signal + ")"
		case e.CloseCode != 0:
			end += fmt.Sprintf("(%d)", e.CloseCode)
		}
	}
	version := info.Handshake.ProtocolVersion
	if version == "" {
		version = "-"
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%d msgs\t%s\t%s\t%s\t%s",
		info.ID, name, info.Transport, info.Start.Local().Format(time.DateTime),
		len(msgs), server, version, end, info.Upstream)
}

func compactServerInfo(raw []byte) string {
	var si struct{ Name, Version string }
	if err := json.Unmarshal(raw, &si); err != nil || si.Name == "" {
		return strings.TrimSpace(string(raw))
	}
	if si.Version == "" {
		return si.Name
	}
	return si.Name + "@" + si.Version
}

func runExport(args []string, s streams) error {
	fs := newFlags("export", "export [--session ID] [-o FILE] CASSETTE", s)
	var sessions multiFlag
	fs.Var(&sessions, "session", "export only this session (id or name); repeatable")
	out := fs.String("o", "", "write to FILE atomically instead of stdout")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErrorf("export: want exactly one CASSETTE, got %d arguments", fs.NArg())
	}
	if *out == "" {
		return store.Export(fs.Arg(0), s.Out, sessions)
	}
	return writeAtomic(*out, 0o600, func(f *os.File) error {
		return store.Export(fs.Arg(0), f, sessions)
	})
}

func runImport(args []string, s streams) error {
	fs := newFlags("import", "import -o CASSETTE FILE.jsonl", s)
	out := fs.String("o", "", "the cassette to write (required); created if missing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usageErrorf("import: -o CASSETTE is required")
	}
	if fs.NArg() != 1 {
		return usageErrorf("import: want exactly one FILE.jsonl, got %d arguments", fs.NArg())
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	tape, err := store.ReadJSONL(f, fs.Arg(0))
	if err != nil {
		return err
	}
	// Build the cassette beside the target and rename it into place, so a
	// failed import leaves nothing half-written. Importing into an existing
	// cassette adds to a copy of it.
	return writeAtomic(*out, 0o600, func(tmp *os.File) error {
		if err := copyExisting(*out, tmp); err != nil {
			return err
		}
		tmp.Close()
		return store.Import(tmp.Name(), tape)
	})
}

func copyExisting(path string, dst *os.File) error {
	src, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer src.Close()
	if err := store.Check(path); err != nil {
		return err
	}
	_, err = dst.ReadFrom(src)
	return err
}

// writeAtomic writes a file the user keeps: into a temp file beside it,
// synced, then renamed over the target.
func writeAtomic(path string, mode os.FileMode, fill func(f *os.File) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if err = fill(tmp); err != nil {
		return err
	}
	// fill may have closed tmp to let another writer use the path; reopen
	// to sync what is there.
	f, err := os.OpenFile(tmp.Name(), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	tmp.Close()
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
