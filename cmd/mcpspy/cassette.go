package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/atomicfile"
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
	infos, counts, err := listSessions(fs.Arg(0))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(s.Out)
	for i, info := range infos {
		fmt.Fprintln(w, sessionLine(info, counts[i]))
	}
	return w.Flush()
}

// listSessions reads each session's info and message count. From a .db it
// reads no message at all; a .jsonl has to be read whole.
func listSessions(path string) ([]store.SessionInfo, []int, error) {
	var infos []store.SessionInfo
	var counts []int
	if strings.EqualFold(filepath.Ext(path), ".jsonl") {
		tape, err := store.Load(path)
		if err != nil {
			return nil, nil, err
		}
		for _, s := range tape.Sessions {
			infos = append(infos, s.Info)
			counts = append(counts, len(s.Messages))
		}
		return infos, counts, nil
	}
	err := store.View(path, func(r *store.Reader) error {
		var err error
		if infos, err = r.Sessions(); err != nil {
			return err
		}
		for _, info := range infos {
			// seqs are dense from 1, so the last one is the count, found
			// without walking the session.
			counts = append(counts, int(r.LastSeq(info.ID)))
		}
		return nil
	})
	return infos, counts, err
}

// sessionLine is one line of "mcpspy ls": id, name, transport, start,
// message count, server, protocol version, how it ended, upstream.
func sessionLine(info store.SessionInfo, messages int) string {
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
		messages, server, version, end, info.Upstream)
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
	return atomicfile.Write(*out, 0o600, func(f *os.File) error {
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
	return atomicfile.Write(*out, 0o600, func(tmp *os.File) error {
		if err := copyExisting(*out, tmp); err != nil {
			return err
		}
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

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
