package faults_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

const (
	frameSize = 64 << 20
	// rssLimit is the bound: peak RSS under 3× the frame.
	rssLimit = 3 * frameSize
	// runFrames is how many frames a run sends: twice what the store's
	// 256 MiB backlog holds of them.
	runFrames = 8
	// runRSSLimit bounds a run of frames: a frame is held once, so a run
	// costs about what one frame does (2.5× against 2.3× here on stdio,
	// up to 3× for SSE events, gathered in pieces as they come), where
	// each frame behind a slower store used to add its size and the
	// commit's copy of it (5× to 11×).
	runRSSLimit = 4 * frameSize
)

// bigRequest is a JSON-RPC request of exactly size bytes.
func bigRequest(size int) []byte {
	const head = `{"jsonrpc":"2.0","id":2,"method":"upload","params":{"blob":"`
	const tail = `"}}`
	b := bytes.Repeat([]byte{'B'}, size)
	copy(b, head)
	copy(b[size-len(tail):], tail)
	return b
}

// countLine reads one line without keeping it and returns its length.
func readLineLen(r *bufio.Reader) (int, error) {
	n := 0
	for {
		chunk, err := r.ReadSlice('\n')
		n += len(chunk)
		if err != bufio.ErrBufferFull {
			return n, err
		}
	}
}

// waitRecorded polls the cassette until it holds want frames in all and
// returns the sizes of the frames recorded.
func waitRecorded(t *testing.T, db string, want int) []int {
	t.Helper()
	var sizes []int
	waitFor(t, 60*time.Second, fmt.Sprintf("%d frames in %s", want, db), func() bool {
		sizes = sizes[:0]
		err := store.View(db, func(r *store.Reader) error {
			infos, err := r.Sessions()
			for _, in := range infos {
				err = r.Summaries(in.ID, 1, nil, func(s *store.Summary) error { sizes = append(sizes, s.Size); return nil })
			}
			return err
		})
		return err == nil && len(sizes) >= want
	})
	return sizes
}

func checkPeak(t *testing.T, what string, w *hwmWatcher, sizes []int) {
	t.Helper()
	checkPeakUnder(t, what, w, sizes, frameSize, rssLimit)
}

// checkPeakUnder checks that a frame of recorded bytes is in the cassette
// and that mcpspy's peak RSS stayed under limit.
func checkPeakUnder(t *testing.T, what string, w *hwmWatcher, sizes []int, recorded, limit int) {
	t.Helper()
	if !containsSize(sizes, recorded) {
		t.Errorf("%s: the %d-byte frame is not in the cassette (frame sizes %v)", what, recorded, sizes)
	}
	peak := w.Peak() << 10
	times := float64(limit) / frameSize
	t.Logf("%s: file-backed RSS (the cassette's mmap) peaked at %.1f MiB", what, float64(w.peakFile)/(1<<10))
	t.Logf("%s: peak RSS %.1f MiB for %d MiB frames (%.2f×; limit %g×)", what, float64(peak)/(1<<20), frameSize>>20, float64(peak)/frameSize, times)
	if peak >= limit {
		t.Errorf("%s: peak RSS %d MiB, want under %d MiB (%g× the %d MiB frame)", what, peak>>20, limit>>20, times, frameSize>>20)
	}
}

func containsSize(sizes []int, n int) bool {
	for _, s := range sizes {
		if s == n {
			return true
		}
	}
	return false
}

// A 64 MiB frame passes through mcpspy on stdio, in either direction, with
// mcpspy's peak RSS under 3× the frame. The release binary is measured:
// the race detector's shadow memory would distort the numbers.
func memoryBigFrameStdio(t *testing.T) {
	bin := peertest.ReleaseBinary(t, "mcpspy")
	for _, tc := range []struct {
		name string
		send func(s *spy) error // sends the client's side and reads the answer
	}{
		{"s2c", func(s *spy) error {
			if _, err := io.WriteString(s.in, `{"jsonrpc":"2.0","id":1,"method":"big"}`+"\n"); err != nil {
				return err
			}
			n, err := readLineLen(s.out)
			if err == nil && n != frameSize+1 {
				err = fmt.Errorf("client got a %d-byte line, want %d", n, frameSize+1)
			}
			return err
		}},
		{"c2s", func(s *spy) error {
			errc := make(chan error, 1)
			go func() {
				_, err := s.in.Write(append(bigRequest(frameSize), '\n'))
				errc <- err
			}()
			line, err := s.out.ReadString('\n')
			if err != nil {
				return err
			}
			if want := fmt.Sprintf(`"len":%d`, frameSize+1); !strings.Contains(line, want) {
				return fmt.Errorf("server answered %q, want %s", line, want)
			}
			return <-errc
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "big.db")
			s := startStdioSpy(t, bin, db, "MCPTAPE_FAKE_SERVER=big", fmt.Sprintf("MCPTAPE_BIG_SIZE=%d", frameSize))
			hwm := watchHWM(s.Cmd.Process.Pid)
			if err := tc.send(s); err != nil {
				t.Fatalf("%v; mcpspy stderr:\n%s", err, s.Stderr())
			}
			sizes := waitRecorded(t, db, 2)
			s.in.Close()
			checkPeak(t, "stdio "+tc.name, hwm, sizes)
		})
	}
}

// A run of 64 MiB frames through mcpspy on stdio, each side sending as
// fast as the other takes them, costs about what one frame does: a frame
// is held once, not once for each frame that waits behind a slower store
// (DESIGN.md, "Flat memory").
func memoryRunOfBigFramesStdio(t *testing.T) {
	bin := peertest.ReleaseBinary(t, "mcpspy")
	env := []string{fmt.Sprintf("MCPTAPE_BIG_SIZE=%d", frameSize), fmt.Sprintf("MCPTAPE_BIG_N=%d", runFrames)}
	for _, tc := range []struct {
		name   string
		server string
		send   func(s *spy) error // sends the client's side and reads every answer
	}{
		{"s2c", "bigrun", func(s *spy) error {
			for i := range runFrames {
				n, err := readLineLen(s.out)
				if err == nil && n != frameSize+1 {
					err = fmt.Errorf("client got a %d-byte line, want %d", n, frameSize+1)
				}
				if err != nil {
					return fmt.Errorf("frame %d: %w", i+1, err)
				}
			}
			return nil
		}},
		{"c2s", "big", func(s *spy) error {
			errc := make(chan error, 1)
			go func() {
				line := append(bigRequest(frameSize), '\n')
				for range runFrames {
					if _, err := s.in.Write(line); err != nil {
						errc <- err
						return
					}
				}
				errc <- nil
			}()
			for i := range runFrames {
				line, err := s.out.ReadString('\n')
				if err != nil {
					return fmt.Errorf("answer %d: %w", i+1, err)
				}
				if want := fmt.Sprintf(`"len":%d`, frameSize+1); !strings.Contains(line, want) {
					return fmt.Errorf("server answered %q, want %s", line, want)
				}
			}
			return <-errc
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "run.db")
			s := startStdioSpy(t, bin, db, append(env, "MCPTAPE_FAKE_SERVER="+tc.server)...)
			hwm := watchHWM(s.Cmd.Process.Pid)
			if err := tc.send(s); err != nil {
				t.Fatalf("%v; mcpspy stderr:\n%s", err, s.Stderr())
			}
			sizes := waitRecorded(t, db, runFrames)
			s.in.Close()
			checkPeakUnder(t, fmt.Sprintf("stdio %s, %d frames", tc.name, runFrames), hwm, sizes, frameSize, runRSSLimit)
		})
	}
}

// bigUpstream answers a POST whose body asks for "big" with a 64 MiB JSON
// response, one asking for "bigsse" with an event stream of runFrames
// 64 MiB events, and any other POST with the body's length. It never
// holds a whole request body.
func bigUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusOK)
			return
		}
		head := make([]byte, 256)
		k, _ := io.ReadFull(r.Body, head)
		rest, _ := io.Copy(io.Discard, r.Body)
		if bytes.Contains(head[:k], []byte(`"method":"bigsse"`)) {
			w.Header().Set("Content-Type", "text/event-stream")
			for id := 1; id <= runFrames; id++ {
				if _, err := fmt.Fprintf(w, "data: %s\n\n", bigFrame(id, frameSize-len(sseFraming))); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if bytes.Contains(head[:k], []byte(`"method":"big"`)) {
			w.Header().Set("Content-Length", fmt.Sprint(frameSize))
			w.Write(bigFrame(1, frameSize))
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":2,"result":{"len":%d}}`, int64(k)+rest)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The same 64 MiB frame through mcpspy's HTTP proxy, as a request body
// and as a response body.
func memoryBigFrameHTTP(t *testing.T) {
	bin := peertest.ReleaseBinary(t, "mcpspy")
	up := bigUpstream(t)
	for _, tc := range []struct {
		name    string
		body    func() []byte
		wantLen int
	}{
		{"s2c", func() []byte { return []byte(`{"jsonrpc":"2.0","id":1,"method":"big"}`) }, frameSize},
		{"c2s", func() []byte { return bigRequest(frameSize) }, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "big.db")
			p := peertest.Start(t, t.TempDir(), nil, nil, nil, bin, "record", "-o", db, "--upstream", up.URL)
			addr := p.WaitLine(t, "mcpspy: listening on ", 30*time.Second)
			hwm := watchHWM(p.Cmd.Process.Pid)
			body := tc.body()
			req, _ := http.NewRequest(http.MethodPost, addr, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("POST through mcpspy: %v\n%s", err, p.Stderr())
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			body = nil
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("response: status %d, %d bytes, %v", resp.StatusCode, n, err)
			}
			if tc.wantLen > 0 && n != int64(tc.wantLen) {
				t.Fatalf("client got %d bytes, want %d", n, tc.wantLen)
			}
			http.DefaultClient.CloseIdleConnections()
			sizes := waitRecorded(t, db, 2)
			if err := p.Cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			checkPeak(t, "http "+tc.name, hwm, sizes)
		})
	}
}

// sseFraming is what an event adds to its data.
const sseFraming = "data: \n\n"

// postThrough posts body to mcpspy at addr, with the headers given as
// name, value pairs, and returns how many bytes the answer's body had.
func postThrough(addr string, body []byte, header ...string) (int64, error) {
	req, err := http.NewRequest(http.MethodPost, addr, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return n, err
}

// A run of 64 MiB frames through mcpspy's HTTP proxy costs about what one
// frame does, whichever way they go: POST bodies one after another, JSON
// answers one after another, and the events of one stream.
func memoryRunOfBigFramesHTTP(t *testing.T) {
	bin := peertest.ReleaseBinary(t, "mcpspy")
	up := bigUpstream(t)
	bigAsk := []byte(`{"jsonrpc":"2.0","id":1,"method":"big"}`)
	httpRuns(t, bin, up.URL, "http", []httpRunCase{
		{"c2s", func(addr string) error {
			body := bigRequest(frameSize)
			for i := range runFrames {
				if _, err := postThrough(addr, body); err != nil {
					return fmt.Errorf("POST %d: %w", i+1, err)
				}
			}
			return nil
		}, frameSize},
		{"s2c json", func(addr string) error {
			for i := range runFrames {
				n, err := postThrough(addr, bigAsk)
				if err == nil && n != frameSize {
					err = fmt.Errorf("client got %d bytes, want %d", n, frameSize)
				}
				if err != nil {
					return fmt.Errorf("POST %d: %w", i+1, err)
				}
			}
			return nil
		}, frameSize},
		{"s2c sse", func(addr string) error {
			n, err := postThrough(addr, []byte(`{"jsonrpc":"2.0","id":1,"method":"bigsse"}`))
			if want := int64(runFrames * frameSize); err == nil && n != want {
				err = fmt.Errorf("client got %d bytes of events, want %d", n, want)
			}
			return err
		}, frameSize - len(sseFraming)},
	})
}

// httpRunCase is a run of big frames through mcpspy's HTTP proxy.
type httpRunCase struct {
	name     string
	send     func(addr string) error // sends the client's side and reads every answer
	recorded int                     // the size of each big frame in the cassette
}

// httpRuns runs each case as a subtest: mcpspy records upstream while
// the case's send runs through it, every frame of the run is recorded,
// each big one of the case's size, and mcpspy's peak RSS stays under
// runRSSLimit. what names the cases in the log.
func httpRuns(t *testing.T, bin, upstream, what string, cases []httpRunCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			httpRun(t, bin, upstream, what+" "+tc.name, tc.send, tc.recorded)
		})
	}
}

func httpRun(t *testing.T, bin, upstream, what string, send func(addr string) error, recorded int) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "run.db")
	p := peertest.Start(t, t.TempDir(), nil, nil, nil, bin, "record", "-o", db, "--upstream", upstream)
	addr := p.WaitLine(t, "mcpspy: listening on ", 30*time.Second)
	hwm := watchHWM(p.Cmd.Process.Pid)
	if err := send(addr); err != nil {
		t.Fatalf("%v; mcpspy stderr:\n%s", err, p.Stderr())
	}
	http.DefaultClient.CloseIdleConnections()
	sizes := waitRecorded(t, db, runFrames)
	if err := p.Cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	checkPeakUnder(t, fmt.Sprintf("%s, %d frames", what, runFrames), hwm, sizes, recorded, runRSSLimit)
}

// bigWSUpstream is a WebSocket server: a text message that asks for
// "big" is answered with runFrames messages of 64 MiB, any other with
// its length.
func bigWSUpstream(t *testing.T) *httptest.Server {
	return wsServer(t, func(c *websocket.Conn, head []byte, n int) bool {
		if bytes.Contains(head, []byte(`"method":"big"`)) {
			for id := 1; id <= runFrames; id++ {
				if c.WriteMessage(websocket.TextMessage, bigFrame(id, frameSize)) != nil {
					return false
				}
			}
			return true
		}
		return c.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":2,"result":{"len":%d}}`, n)) == nil
	})
}

// wsServer is a WebSocket server (subprotocol "mcp") that calls answer
// with each message's first 64 KiB and its length, never holding a whole
// message it reads, until answer says to end the connection (false).
func wsServer(t *testing.T, answer func(c *websocket.Conn, head []byte, n int) bool) *httptest.Server {
	t.Helper()
	up := websocket.Upgrader{Subprotocols: []string{"mcp"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			_, rd, err := c.NextReader()
			if err != nil {
				return
			}
			head := make([]byte, 64<<10)
			k, _ := io.ReadFull(rd, head)
			rest, _ := io.Copy(io.Discard, rd)
			if !answer(c, head[:k], k+int(rest)) {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// readWSLen reads one message without keeping it and returns its length.
func readWSLen(c *websocket.Conn) (int64, error) {
	_, rd, err := c.NextReader()
	if err != nil {
		return 0, err
	}
	return io.Copy(io.Discard, rd)
}

// A run of 64 MiB messages through mcpspy's WebSocket proxy, either way,
// costs about what one message does.
func memoryRunOfBigFramesWebSocket(t *testing.T) {
	bin := peertest.ReleaseBinary(t, "mcpspy")
	up := bigWSUpstream(t)
	for _, tc := range []struct {
		name string
		send func(c *websocket.Conn) error // sends the client's side and reads every answer
	}{
		{"c2s", func(c *websocket.Conn) error {
			errc := make(chan error, 1)
			go func() { // one writer, beside the reader below
				msg := bigRequest(frameSize)
				for range runFrames {
					if err := c.WriteMessage(websocket.TextMessage, msg); err != nil {
						errc <- err
						return
					}
				}
				errc <- nil
			}()
			for i := range runFrames {
				if _, err := readWSLen(c); err != nil {
					return fmt.Errorf("answer %d: %w", i+1, err)
				}
			}
			return <-errc
		}},
		{"s2c", func(c *websocket.Conn) error {
			if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"big"}`)); err != nil {
				return err
			}
			for i := range runFrames {
				n, err := readWSLen(c)
				if err == nil && n != frameSize {
					err = fmt.Errorf("client got %d bytes, want %d", n, frameSize)
				}
				if err != nil {
					return fmt.Errorf("message %d: %w", i+1, err)
				}
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "run.db")
			p := peertest.Start(t, t.TempDir(), nil, nil, nil, bin, "record", "-o", db, "--upstream", "ws"+strings.TrimPrefix(up.URL, "http"))
			addr := strings.TrimSpace(p.WaitLine(t, "mcpspy: listening on ", 30*time.Second))
			hwm := watchHWM(p.Cmd.Process.Pid)
			c, _, err := (&websocket.Dialer{Subprotocols: []string{"mcp"}}).Dial(addr, nil)
			if err != nil {
				t.Fatalf("dial mcpspy: %v\n%s", err, p.Stderr())
			}
			defer c.Close()
			if err := tc.send(c); err != nil {
				t.Fatalf("%v; mcpspy stderr:\n%s", err, p.Stderr())
			}
			sizes := waitRecorded(t, db, runFrames)
			if err := p.Cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			checkPeakUnder(t, fmt.Sprintf("websocket %s, %d frames", tc.name, runFrames), hwm, sizes, frameSize, runRSSLimit)
		})
	}
}
