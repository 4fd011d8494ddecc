package replay_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/mcptape/mcptape/replay"
)

// stubbornReader is stdin as a blocking pipe is: Close does not
// interrupt a Read in progress.
type stubbornReader struct{ io.Reader }

func (stubbornReader) Close() error { return nil }

// A host that stops a stdio server with SIGTERM (mcpmock cancels the
// context) may keep its stdin open and silent; ServeStdio must return all
// the same, though its read cannot be interrupted.
func TestServeStdio_ReturnsWhenCancelledDuringABlockedRead(t *testing.T) {
	srv, err := replay.NewServer([]replay.Source{cassetteOf(t,
		`> {"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
	)}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sr, cw := io.Pipe()
	defer cw.Close() // ends the read left behind
	cr, sw := io.Pipe()
	go func() { _, _ = io.Copy(io.Discard, cr) }()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, stubbornReader{sr}, sw) }()
	if _, err := io.WriteString(cw, `{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ServeStdio = %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ServeStdio still running 20s after its context ended")
	}
}
