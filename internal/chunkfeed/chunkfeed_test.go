package chunkfeed_test

import (
	"bufio"
	"io"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/chunkfeed"
)

// TestFeed_PutWaitsForTheParser: Put returns only once the parser has
// handled every line the chunk completed and asks for more, and at once
// after the parser has stopped.
func TestFeed_PutWaitsForTheParser(t *testing.T) {
	f := chunkfeed.New()
	lines := make(chan string, 10)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		defer f.Discard()
		br := bufio.NewReader(f)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			lines <- line
			if line == "stop\n" {
				return
			}
		}
	}()
	buf := []byte("one\ntwo\nth")
	f.Put(buf)
	if n := len(lines); n != 2 {
		t.Fatalf("Put returned with %d lines parsed, want the 2 the chunk completed", n)
	}
	copy(buf, "XXXXXXXXXX") // the chunk is the caller's again
	f.Put([]byte("ree\nstop\nignored\n"))
	<-stopped
	for _, want := range []string{"one\n", "two\n", "three\n", "stop\n"} {
		if got := <-lines; got != want {
			t.Errorf("line %q, want %q", got, want)
		}
	}
	done := make(chan struct{})
	go func() { f.Put([]byte("after the parser stopped\n")); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Put blocked after the parser stopped")
	}
}

// TestFeed_CloseIsEOF: the parser reads what it was given, then io.EOF.
func TestFeed_CloseIsEOF(t *testing.T) {
	f := chunkfeed.New()
	got := make(chan string, 1)
	go func() {
		b, err := io.ReadAll(f)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(b)
	}()
	f.Put([]byte("ab"))
	f.Put([]byte("c"))
	f.Close()
	if s := <-got; s != "abc" {
		t.Errorf("read %q, want abc", s)
	}
}
