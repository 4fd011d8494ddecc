package script

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReloadable: a session opened after a reload gets the new script, an
// open one keeps its own; a version that does not load is refused once
// and the last good one serves on.
func TestReloadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fake.yaml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		// A later modification time even on a coarse clock.
		later := time.Now().Add(time.Duration(len(text)) * time.Second)
		if err := os.Chtimes(path, later, later); err != nil {
			t.Fatal(err)
		}
	}
	write("server: {name: s, version: '1'}\ntools: [{name: one, answers: [{text: first}]}]\n")
	r, err := LoadReloadable(path)
	if err != nil {
		t.Fatal(err)
	}
	callOne := func(c *client) string {
		t.Helper()
		return firstText(t, c.result("tools/call", toolCall("one", nil)))
	}
	before := &client{tb: t, ss: r.Open(), peer: &fakePeer{}}
	if changed, err := r.ReloadIfChanged(); changed || err != nil {
		t.Fatalf("unchanged file: changed %v, %v", changed, err)
	}

	write("server: {name: s, version: '2'}\ntools: [{name: one, answers: [{text: second}]}]\n")
	if changed, err := r.ReloadIfChanged(); !changed || err != nil {
		t.Fatalf("edited file: changed %v, %v", changed, err)
	}
	after := &client{tb: t, ss: r.Open(), peer: &fakePeer{}}
	if got := callOne(after); got != "second" {
		t.Errorf("a session opened after the reload got %q", got)
	}
	if got := callOne(before); got != "first" {
		t.Errorf("a session opened before the reload got %q, want its own script's answer", got)
	}

	write("tools: [{name: one, answers: [{text: '{{.args'}]}]\n")
	changed, err := r.ReloadIfChanged()
	if !changed || err == nil || !strings.Contains(err.Error(), "fake.yaml:1:") {
		t.Fatalf("broken file: changed %v, %v; want its error with file:line", changed, err)
	}
	if changed, err := r.ReloadIfChanged(); changed || err != nil {
		t.Errorf("the same broken file again: changed %v, %v; want it said once", changed, err)
	}
	if got := callOne(&client{tb: t, ss: r.Open(), peer: &fakePeer{}}); got != "second" {
		t.Errorf("after a refused reload a new session got %q, want the last good script", got)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if changed, err := r.ReloadIfChanged(); !changed || err == nil {
		t.Errorf("removed file: changed %v, %v", changed, err)
	}
	if changed, err := r.ReloadIfChanged(); changed || err != nil {
		t.Errorf("still removed: changed %v, %v; want it said once", changed, err)
	}
	if r.Name() != "fake.yaml" {
		t.Errorf("name %q", r.Name())
	}
}
