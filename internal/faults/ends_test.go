package faults_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// stdioCase is one way a stdio session can go wrong, driven from the
// client's side of an in-process StdioProxy.
type stdioCase struct {
	name   string
	env    []string
	client func(t *testing.T, in io.WriteCloser, out *bufio.Reader, outR io.Closer)
	check  func(t *testing.T, end *store.EndInfo, msgs []*store.Message)
}

func request(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":1}}}`+"\n", id)
}

// Each fault ends the session cleanly: Run returns, the end reason is in
// the cassette, and no goroutine of the proxy or the store is left.
func TestEnds_Stdio(t *testing.T) {
	for _, tc := range []stdioCase{
		{
			name: "server crashes mid-call",
			env:  []string{"MCPTAPE_FAKE_SERVER=crash", "MCPTAPE_CRASH=exit"},
			client: func(t *testing.T, in io.WriteCloser, out *bufio.Reader, _ io.Closer) {
				io.WriteString(in, request(1))
				io.Copy(io.Discard, out) // the progress notification, then EOF
			},
			check: func(t *testing.T, end *store.EndInfo, msgs []*store.Message) {
				if end.Reason != store.EndExit || end.ExitCode == nil || *end.ExitCode != 70 {
					t.Errorf("end %+v, want exit 70", end)
				}
				if len(msgs) != 2 {
					t.Errorf("%d messages, want the request and the progress notification", len(msgs))
				}
			},
		},
		{
			name: "server killed mid-call",
			env:  []string{"MCPTAPE_FAKE_SERVER=crash", "MCPTAPE_CRASH=kill"},
			client: func(t *testing.T, in io.WriteCloser, out *bufio.Reader, _ io.Closer) {
				io.WriteString(in, request(1))
				io.Copy(io.Discard, out)
			},
			check: func(t *testing.T, end *store.EndInfo, msgs []*store.Message) {
				if end.Reason != store.EndSignal || end.Signal != "killed" {
					t.Errorf("end %+v, want signal killed", end)
				}
			},
		},
		{
			name: "server hangs, client gives up",
			env:  []string{"MCPTAPE_FAKE_SERVER=hang"},
			client: func(t *testing.T, in io.WriteCloser, out *bufio.Reader, _ io.Closer) {
				io.WriteString(in, request(1))
				if line, err := out.ReadString('\n'); err != nil || strings.TrimSpace(line) != hangReady {
					t.Errorf("the server said %q, %v; want it deaf to SIGTERM", line, err)
				}
				in.Close() // no answer will come; the client leaves
				io.Copy(io.Discard, out)
			},
			check: func(t *testing.T, end *store.EndInfo, msgs []*store.Message) {
				// It ignores stdin closing and SIGTERM: SIGKILL ends it.
				if end.Reason != store.EndEOF || end.Signal != "killed" {
					t.Errorf("end %+v, want eof with the server killed", end)
				}
				if len(msgs) != 2 {
					t.Errorf("%d messages, want the request and the server's notice", len(msgs))
				}
			},
		},
		{
			name: "client disconnects mid-stream",
			env:  []string{"MCPTAPE_FAKE_SERVER=flood", "MCPTAPE_FLOOD_N=1000000"},
			client: func(t *testing.T, in io.WriteCloser, out *bufio.Reader, outR io.Closer) {
				for range 100 {
					if _, err := out.ReadSlice('\n'); err != nil {
						t.Error(err)
						return
					}
				}
				in.Close()
				outR.Close()
			},
			check: func(t *testing.T, end *store.EndInfo, msgs []*store.Message) {
				if end.Reason != store.EndEOF {
					t.Errorf("end %+v, want eof", end)
				}
				if len(msgs) < 100 {
					t.Errorf("%d messages, the client read 100", len(msgs))
				}
			},
		},
		{
			name: "slow-reading client",
			env:  []string{"MCPTAPE_FAKE_SERVER=flood", "MCPTAPE_FLOOD_N=3000", "MCPTAPE_FLOOD_PAD=4000"},
			client: func(t *testing.T, in io.WriteCloser, out *bufio.Reader, _ io.Closer) {
				for i := range 3000 {
					if _, err := readLineLen(out); err != nil {
						t.Error(err)
						return
					}
					if i%100 == 0 {
						time.Sleep(2 * time.Millisecond) // the slowness under test, not synchronisation
					}
				}
				in.Close()
				io.Copy(io.Discard, out)
			},
			check: func(t *testing.T, end *store.EndInfo, msgs []*store.Message) {
				// The client closes first. (The server then exits, or,
				// slowed by -race, is stopped after the 200 ms grace.)
				if end.Reason != store.EndEOF {
					t.Errorf("end %+v, want eof", end)
				}
				if len(msgs) != 3000 {
					t.Errorf("%d messages, want 3000", len(msgs))
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { runStdioCase(t, tc) })
	}
}

func runStdioCase(t *testing.T, tc stdioCase) {
	for _, kv := range tc.env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	before := runtime.NumGoroutine()
	db := filepath.Join(t.TempDir(), "c.db")
	pp := startPipedProxy(t, db, store.WriterOptions{NoSync: true}, "fake", 200*time.Millisecond)
	tc.client(t, pp.In, bufio.NewReader(pp.Out), pp.Out)
	pp.end(t, 30*time.Second)
	tape := loadTape(t, db)
	s := tape.Sessions[0]
	if s.Info.End == nil {
		t.Fatal("no end recorded")
	}
	tc.check(t, s.Info.End, s.Messages)
	waitGoroutines(t, before)
}

// httpProxy serves an in-process HTTPProxy in front of upstream until the
// returned stop is called; stop returns the cassette's sessions.
func httpProxy(t *testing.T, upstream string) (addr string, stop func() []store.TapeSession) {
	t.Helper()
	u, _ := url.Parse(upstream)
	db := filepath.Join(t.TempDir(), "h.db")
	w, err := store.NewWriter(db, store.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	tr := recorder.NewUpstreamTransport(false)
	p := &recorder.HTTPProxy{Upstream: u, Writer: w, Transport: tr, Info: store.SessionInfo{Upstream: upstream}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), func() []store.TapeSession {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		tr.CloseIdleConnections() // the transport is ours, so are its idle connections
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return loadTape(t, db).Sessions
	}
}

// An upstream that fails with 500, or never answers: the client gets the
// 500 (or its own timeout), the session ends when the client's connection
// closes, and nothing is left running.
func TestEnds_HTTPUpstreamFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		status  int // 0: the client times out
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`)
		}, http.StatusInternalServerError},
		{"hangs", func(w http.ResponseWriter, r *http.Request) {
			// Read the body first: only then does net/http watch the
			// connection and cancel the context when the proxy hangs up.
			io.Copy(io.Discard, r.Body)
			<-r.Context().Done() // never answers; ends when the proxy gives up
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			up := httptest.NewServer(tc.handler)
			addr, stop := httpProxy(t, up.URL)
			client := &http.Client{Timeout: 300 * time.Millisecond, Transport: &http.Transport{}}
			req, _ := http.NewRequest(http.MethodPost, addr, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := client.Do(req)
			switch {
			case tc.status == 0 && err == nil:
				t.Fatalf("got status %d from an upstream that never answers", resp.StatusCode)
			case tc.status != 0 && err != nil:
				t.Fatal(err)
			case tc.status != 0:
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.status {
					t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
				}
			}
			client.CloseIdleConnections()
			sessions := stop()
			up.Close()
			if len(sessions) != 1 {
				t.Fatalf("%d sessions, want 1", len(sessions))
			}
			s := sessions[0]
			if s.Info.End == nil {
				t.Fatal("no end recorded")
			}
			want := 2
			if tc.status == 0 {
				want = 1
			}
			if len(s.Messages) != want {
				t.Errorf("%d messages, want %d", len(s.Messages), want)
			}
			// EOF when the client's connection closed first, signal when
			// the proxy was stopped first: both are clean ends.
			if r := s.Info.End.Reason; r != store.EndEOF && r != store.EndSignal {
				t.Errorf("end %+v, want eof or signal", *s.Info.End)
			}
			waitGoroutines(t, before)
		})
	}
}
