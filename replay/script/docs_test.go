package script_test

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay/script"
)

// docBlock is one fenced example of a Markdown file: line is the line of
// its opening fence, counted from 1.
type docBlock struct {
	line int
	lang string
	text string
}

// fencedBlocks returns every ``` block of a Markdown file with its info
// string ("yaml", or "" for a bare fence).
func fencedBlocks(t *testing.T, path string) []docBlock {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		blocks []docBlock
		cur    *docBlock
		body   strings.Builder
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.HasPrefix(line, "```") {
			if cur != nil {
				body.WriteString(line)
				body.WriteByte('\n')
			}
			continue
		}
		if cur == nil {
			cur = &docBlock{line: n, lang: strings.TrimSpace(strings.TrimPrefix(line, "```"))}
			body.Reset()
			continue
		}
		cur.text = body.String()
		blocks = append(blocks, *cur)
		cur = nil
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: code block is never closed", path, cur.line)
	}
	return blocks
}

// TestDocs_ScriptExamples: every yaml, yml or json block of docs/SCRIPTS.md
// is a whole script that `mcpmock check` accepts. Blocks with no language
// (commands, error output) are not scripts and are skipped. A failure
// names the line in SCRIPTS.md.
func TestDocs_ScriptExamples(t *testing.T) {
	const rel = "docs/SCRIPTS.md"
	blocks := fencedBlocks(t, filepath.Join(peertest.ModuleRoot(), rel))
	dir := t.TempDir()
	checked := 0
	for _, b := range blocks {
		switch b.lang {
		case "yaml", "yml", "json":
		case "":
			continue
		default:
			t.Errorf("%s:%d: code block of language %q: use yaml for a script, or no language for anything else", rel, b.line, b.lang)
			continue
		}
		checked++
		// A file, so that the check is exactly mcpmock check's.
		path := filepath.Join(dir, "example."+b.lang)
		if err := os.WriteFile(path, []byte(b.text), 0o600); err != nil {
			t.Fatal(err)
		}
		err := script.Check(path)
		if err == nil {
			continue
		}
		// Script lines count from the line after the opening fence.
		var es script.Errors
		var e *script.Error
		switch {
		case errors.As(err, &es):
			for _, e := range es {
				t.Error(inDoc(e, rel, b.line))
			}
		case errors.As(err, &e):
			t.Error(inDoc(e, rel, b.line))
		default:
			t.Errorf("%s:%d: example does not check: %v", rel, b.line, err)
		}
	}
	if checked == 0 {
		t.Fatalf("%s: no yaml examples found", rel)
	}
}

// inDoc relocates a script error from the example file to the Markdown file
// whose code block opening at line fence held the example.
func inDoc(e *script.Error, doc string, fence int) string {
	moved := *e
	moved.File = doc
	moved.Line += fence
	return moved.Error()
}
