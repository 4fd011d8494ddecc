package recorder

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// A handler that panics costs its connection, not the proxy: the panic is
// logged and the next connection is served.
func TestFrontServer_PanicClosesOnlyItsConnection(t *testing.T) {
	var mu sync.Mutex
	var logged []string
	s := &frontServer{
		base: context.Background(),
		handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/boom" {
				panic("boom")
			}
			io.WriteString(w, "fine")
		}),
		logf: func(format string, a ...any) {
			mu.Lock()
			logged = append(logged, fmt.Sprintf(format, a...))
			mu.Unlock()
		},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != http.ErrServerClosed {
			t.Errorf("Serve: %v, want http.ErrServerClosed", err)
		}
	})
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := client.Get(base + "/boom"); err == nil {
		resp.Body.Close()
		t.Fatalf("/boom answered %d; want the connection closed", resp.StatusCode)
	}
	resp, err := client.Get(base + "/ok")
	if err != nil {
		t.Fatalf("after a panic: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "fine" {
		t.Errorf("after a panic: body %q", body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 1 || !strings.Contains(logged[0], "panic serving") || !strings.Contains(logged[0], "boom") {
		t.Errorf("logged %q, want one panic line naming boom", logged)
	}
}
