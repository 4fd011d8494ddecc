package mocktest_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// useAfterClose lists what a closed Server refuses, each as a call.
var useAfterClose = []struct {
	method string
	use    func(*mocktest.Server)
}{
	{"Pipes", func(s *mocktest.Server) { s.Pipes() }},
	{"Transport", func(s *mocktest.Server) { s.Transport() }},
	{"URL", func(s *mocktest.Server) { s.URL() }},
	{"WebSocketURL", func(s *mocktest.Server) { s.WebSocketURL() }},
}

// A closed Server fails the test that goes on using it, as httptest
// refuses a closed server, instead of handing out a session nothing
// serves or a URL nothing listens at; a URL asked for before Close as
// much as one never asked for.
func TestServer_UseAfterClose(t *testing.T) {
	cassette := filepath.Join("..", "..", "cassettes", "everything-stdio.db")
	for _, u := range useAfterClose {
		for _, usedBefore := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s used before Close %v", u.method, usedBefore), func(t *testing.T) {
				f := &fatalTB{failureTB{TB: t}}
				srv := mocktest.NewFromCassette(f, cassette)
				if usedBefore {
					u.use(srv)
				}
				srv.Close()
				done := make(chan struct{})
				go func() {
					defer close(done)
					u.use(srv)
				}()
				<-done
				want := "mocktest: " + u.method + " called after Close: the server has stopped and would answer nothing"
				if got := f.failures(); got != want {
					t.Errorf("%s after Close failed the test with %q, want %q", u.method, got, want)
				}
			})
		}
	}
}

// A Server made by Start has no test to fail: using it after Close
// panics, saying so.
func TestStart_UseAfterClose(t *testing.T) {
	c, err := replay.LoadCassette(filepath.Join("..", "..", "cassettes", "everything-stdio.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range useAfterClose {
		t.Run(u.method, func(t *testing.T) {
			srv, err := mocktest.Start([]replay.Source{c})
			if err != nil {
				t.Fatal(err)
			}
			srv.Close()
			defer func() {
				want := "mocktest: " + u.method + " called after Close: the server has stopped and would answer nothing"
				if got := recover(); got != want {
					t.Errorf("%s after Close panicked with %v, want %q", u.method, got, want)
				}
			}()
			u.use(srv)
		})
	}
}
