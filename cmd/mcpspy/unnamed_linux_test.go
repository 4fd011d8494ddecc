package main

import (
	"os"
	"strconv"
	"testing"
)

// mcpspy show <(mcpspy export x.db): the shell names the pipe /dev/fd/63,
// which says nothing of what it holds; show reads the export in it.
func TestMcpspy_ShowProcessSubstitution(t *testing.T) {
	jsonl := readShipped(t, "everything-stdio.jsonl")
	_, want, _ := runCaptured("show", shippedCassette(t, "everything-stdio.jsonl"))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := w.Write(jsonl)
		w.Close()
		done <- err
	}()
	code, got, stderr := runCaptured("show", "/dev/fd/"+strconv.Itoa(int(r.Fd())))
	r.Close() // a show that did not read the pipe to its end lets the writer go
	<-done
	if code != 0 || got != want || want == "" {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, stderr, got, want)
	}
}
