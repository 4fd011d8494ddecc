package recorder_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/recorder"
)

const (
	// fuzzAnswerWait is how long a fuzz client that has sent whole
	// requests waits for their answers before it half-closes anyway. A
	// half-close cancels what is in flight (the front takes it for a
	// client that left), so waiting first lets the requests reach the
	// upstream; over loopback that takes milliseconds.
	fuzzAnswerWait = 2 * time.Second
	// fuzzHangLimit is how long the proxy has to answer and close once
	// the other side has said all it will. Past it the proxy is wedged.
	fuzzHangLimit = 10 * time.Second
)

// FuzzFront_ClientBytes writes arbitrary bytes to the front, which parses
// what any local process sends it. It proves that whatever comes back
// parses as HTTP/1.x answers (1xx only as 100 Continue, nothing after a
// Connection: close), that the proxy closes within fuzzHangLimit once the
// client has half-closed, that no handler panics (the front recovers and
// only logs them), and that the proxy still serves the next client. The
// upstream is well behaved, so a failure is the front's.
//
// A request whose body does not parse (a bad chunk size) never reaches
// the upstream, so a 2xx (which only the upstream gives; the fake one
// sets Date) is an answer made up: it gets 400, or nothing when the
// client has gone.
func FuzzFront_ClientBytes(f *testing.F) {
	for _, seed := range clientSeeds() {
		f.Add([]byte(seed))
	}
	log := &fuzzLog{}
	px := startHTTPProxy(f, mcpishUpstream(f), func(p *recorder.HTTPProxy) { p.Log = log })
	addr := strings.TrimPrefix(px.URL, "http://")
	f.Fuzz(func(t *testing.T, in []byte) {
		methods, whole := requestsIn(in)
		got, err := exchangeRaw(t, addr, in, methods, whole)
		if err != nil {
			t.Errorf("wrong answers: %v\nsent: %q\ngot:  %q", err, clip(in), clip(got))
		}
		log.check(t)
		checkServes(t, addr, "/mcp")
		log.check(t)
	})
}

// FuzzFront_UpstreamBytes answers a well-formed request with arbitrary
// bytes from the upstream: an MCP server is not ours either, and the
// proxy's upstreamConn and relays parse what it sends. It proves the
// client gets, within fuzzHangLimit, one well-framed final answer (a 502
// for garbage) and nothing after it, or a closed connection; that no
// handler panics; and that the proxy still serves the next client.
//
// An answer that breaks off upstream (chunked, SSE or short of its
// Content-Length) must reach the client cut too, the connection closed
// without the chunked terminator, so that it cannot pass for a whole one.
func FuzzFront_UpstreamBytes(f *testing.F) {
	for _, seed := range upstreamSeeds() {
		f.Add([]byte(seed))
	}
	up := serveRawUpstream(f)
	log := &fuzzLog{}
	px := startHTTPProxy(f, up.url, func(p *recorder.HTTPProxy) { p.Log = log })
	addr := strings.TrimPrefix(px.URL, "http://")
	f.Fuzz(func(t *testing.T, reply []byte) {
		r := bytes.Clone(reply) // the upstream may still hold it after this input
		up.reply.Store(&r)
		exchangeOne(t, addr, reply)
		log.check(t)
		checkServes(t, addr, "/fresh")
		log.check(t)
	})
}

func clientSeeds() []string {
	post := func(proto, extra, body string) string {
		return fmt.Sprintf("POST /mcp %s\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%sContent-Length: %d\r\n\r\n%s",
			proto, extra, len(body), body)
	}
	chunked := func(chunks string) string {
		return "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks
	}
	return []string{
		"",
		post("HTTP/1.1", "", rpcBody),
		post("HTTP/1.1", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`) +
			post("HTTP/1.1", "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`) +
			post("HTTP/1.1", "", `{"jsonrpc":"2.0","id":2,"method":"tools/call"}`) +
			"GET /mcp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n" +
			"HEAD /mcp HTTP/1.1\r\nHost: x\r\n\r\n" +
			post("HTTP/1.1", "Connection: close\r\n", rpcBody),
		chunked(fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(rpcBody), rpcBody)),
		chunked("zz\r\n{}\r\n0\r\n\r\n"),
		chunked("ffffffffffffffffffff\r\n{}\r\n0\r\n\r\n"),
		chunked("2;ext=1\r\n{}\r\n0\r\nTrailer: x\r\n\r\n"),
		chunked("5\r\n{}\r\n0\r\n\r\n"),
		"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
		"POST /mcp HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 1<<20+8<<10) + "\r\n\r\n",
		post("HTTP/1.0", "Connection: keep-alive\r\n", rpcBody) + post("HTTP/1.0", "", rpcBody),
		post("HTTP/1.1", "Expect: 100-continue\r\n", rpcBody),
		post("HTTP/1.1", "Expect: teapot\r\n", rpcBody),
		"HEAD /mcp HTTP/1.1\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"\x00\xff\xfeGARBAGE \r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Le",
		"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" + rpcBody,
		post("HTTP/1.1", "Mcp-Session-Id: s-1\r\n", rpcBody) + "DELETE /mcp HTTP/1.1\r\nHost: x\r\nMcp-Session-Id: s-1\r\n\r\n",
	}
}

func upstreamSeeds() []string {
	const sse = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
	const json = `{"jsonrpc":"2.0","id":1,"result":{}}`
	return []string{
		"",
		fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(json), json),
		fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(sse), sse),
		"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n40\r\nevent: message\ndata: {\"jsonrpc\"",
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n{\"jsonrpc\"",
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n" + json,
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 100 Continue\r\n\r\n",
		"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + sse,
		"HTTP/1.1 202 Accepted\r\nMcp-Session-Id: s-1\r\n\r\n",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\n\x1f\x8b\x08\x00",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 999 Whatever\r\nContent-Length: 2\r\n\r\n{}",
		"garbage\r\n\r\n",
	}
}

// mcpishUpstream answers as a Streamable HTTP server would: JSON to a
// request, SSE to a tool call, 202 to a notification, 405 to a GET, and
// a session id to an initialize.
func mcpishUpstream(tb testing.TB) string {
	tb.Helper()
	var sid atomic.Int64
	return serveHTTP(tb, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method == http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case bytes.Contains(body, []byte(`"notifications/`)):
			w.WriteHeader(http.StatusAccepted)
		case bytes.Contains(body, []byte(`"tools/call"`)):
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
			w.(http.Flusher).Flush()
			io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n")
		default:
			if bytes.Contains(body, []byte(`"initialize"`)) {
				w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s-%d", sid.Add(1)))
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		}
	}))
}

// rawUpstream is an upstream that answers a request to /fresh well and
// any other with reply, as it is, then closes the connection.
type rawUpstream struct {
	url   string
	reply atomic.Pointer[[]byte]
}

func serveRawUpstream(tb testing.TB) *rawUpstream {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	up := &rawUpstream{url: "http://" + ln.Addr().String()}
	var wg sync.WaitGroup
	tb.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { up.answer(c) })
		}
	})
	return up
}

func (up *rawUpstream) answer(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(fuzzHangLimit))
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	// The whole request is read first: closing with it unread would
	// reset the connection and lose the reply.
	if _, err := io.Copy(io.Discard, req.Body); err != nil {
		return
	}
	const good = `{"jsonrpc":"2.0","id":1,"result":{}}`
	reply := fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(good), good)
	if req.URL.Path != "/fresh" {
		if p := up.reply.Load(); p != nil {
			reply = *p
		}
	}
	_, _ = c.Write(reply)
}

// fuzzLog is the proxy's Log. The front recovers a handler's panic and
// reports it only there; only such lines are kept, so that a long run's
// warnings (every 502) cost nothing.
type fuzzLog struct {
	mu     sync.Mutex
	panics []string
}

func (l *fuzzLog) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("panic")) {
		l.mu.Lock()
		l.panics = append(l.panics, string(p))
		l.mu.Unlock()
	}
	return len(p), nil
}

// check fails t with the panics logged since the last check. The front
// logs before it closes the connection, so a panic on a connection the
// client has seen closed is already here.
func (l *fuzzLog) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	panics := l.panics
	l.panics = nil
	l.mu.Unlock()
	for _, p := range panics {
		t.Errorf("the proxy recovered a panic:\n%s", p)
	}
}

// requestsIn parses in as the front does: the methods of its requests in
// order (a HEAD's answer has no body, so the client must know), and how
// many of them arrived whole before the front would stop reading.
func requestsIn(in []byte) (methods []string, whole int) {
	br := bufio.NewReader(bytes.NewReader(in))
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return methods, whole
		}
		methods = append(methods, req.Method)
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return methods, whole
		}
		whole++
		if req.Close {
			return methods, whole
		}
	}
}

// exchangeRaw writes in on a new connection to addr, waits (up to
// fuzzAnswerWait) for the answers to its whole requests, half-closes and
// reads to the end. It fails t if the proxy has not closed fuzzHangLimit
// after the half-close; it returns what came back and why that does not
// parse as answers to methods, if it does not.
func exchangeRaw(t *testing.T, addr string, in []byte, methods []string, whole int) ([]byte, error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// The answers are parsed as they come, to know when they are all
	// there, and kept whole for the failure message.
	var got bytes.Buffer
	pr, pw := io.Pipe()
	ended, readErr := make(chan struct{}), error(nil)
	go func() {
		defer close(ended)
		_, readErr = io.Copy(io.MultiWriter(&got, pw), c)
		if errors.Is(readErr, syscall.ECONNRESET) {
			// The front closed with unread input (after a Connection:
			// close answer); what it sent before is all there.
			readErr = nil
		}
		pw.CloseWithError(readErr)
	}()
	answered, parsed := make(chan struct{}), make(chan error, 1)
	go func() {
		err := readAnswers(pr, methods, whole, answered)
		_, _ = io.Copy(io.Discard, pr) // the reader never waits on a parser that stopped
		parsed <- err
	}()
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		_ = c.SetWriteDeadline(time.Now().Add(fuzzHangLimit))
		_, _ = c.Write(in) // fails once the front has closed, as it may
	}()

	wait := time.NewTimer(fuzzAnswerWait)
	defer wait.Stop()
	select {
	case <-answered:
	case <-ended:
	case <-wait.C:
	}
	<-wrote
	_ = c.(*net.TCPConn).CloseWrite()
	_ = c.SetReadDeadline(time.Now().Add(fuzzHangLimit))
	<-ended
	if readErr != nil {
		t.Fatalf("the proxy neither answered nor closed within %v of the half-close: %v\nsent: %q\ngot:  %q",
			fuzzHangLimit, readErr, clip(in), clip(got.Bytes()))
	}
	return got.Bytes(), <-parsed
}

// readAnswers parses r as HTTP/1.x answers to requests of methods, in
// order, and closes answered once want final answers have come. Strict,
// it also requires each 2xx to come from the upstream, which dates its
// answers (the front does not).
func readAnswers(r io.Reader, methods []string, want int, answered chan<- struct{}) error {
	br := bufio.NewReader(r)
	finals := 0
	if want == 0 {
		close(answered)
	}
	for {
		if _, err := br.Peek(1); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		var req *http.Request
		if finals < len(methods) {
			req = &http.Request{Method: methods[finals]}
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return fmt.Errorf("answer %d: %w", finals+1, err)
		}
		if resp.ProtoMajor != 1 || resp.StatusCode > 599 || resp.StatusCode < 200 && resp.StatusCode != http.StatusContinue {
			return fmt.Errorf("answer %d: %s %s", finals+1, resp.Proto, resp.Status)
		}
		if resp.StatusCode == http.StatusContinue {
			continue
		}
		if resp.StatusCode/100 == 2 && resp.Header.Get("Date") == "" {
			return fmt.Errorf("answer %d: %s that the upstream did not send", finals+1, resp.Status)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		finals++
		if finals == want {
			close(answered)
		}
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil // cut off, and the connection ended to say so
		case err != nil:
			return fmt.Errorf("answer %d (%s): body: %w", finals, resp.Status, err)
		case !resp.Close:
			continue
		case req != nil && req.Method == http.MethodHead:
			// The front's refusals carry their status as text even to a
			// HEAD, as net/http's 400s do; the connection ends with them,
			// so no later answer is misread.
			_, err := io.Copy(io.Discard, br)
			return err
		}
		if _, err := br.Peek(1); !errors.Is(err, io.EOF) {
			return fmt.Errorf("answer %d (%s) says Connection: close, but more follows (%v)", finals, resp.Status, err)
		}
		return nil
	}
}

// exchangeOne sends a well-formed POST on a new connection to addr and
// checks its answer; reply is what the upstream sent, for messages.
func exchangeOne(t *testing.T, addr string, reply []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(fuzzHangLimit))
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
		len(rpcBody), rpcBody)
	br := bufio.NewReader(c)
	if _, err := br.Peek(1); errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
		return // closed without an answer: allowed
	} else if err != nil {
		t.Fatalf("no answer and no close: %v\nupstream sent: %q", err, clip(reply))
	}
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodPost})
	if err != nil {
		t.Fatalf("answer does not parse: %v\nupstream sent: %q", err, clip(reply))
	}
	if resp.StatusCode < 200 {
		t.Fatalf("interim answer %s relayed to a client that asked for none\nupstream sent: %q", resp.Status, clip(reply))
	}
	if _, err := io.Copy(io.Discard, resp.Body); errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return // cut off, and the connection ended to say so
	} else if err != nil {
		t.Fatalf("answer %s: body: %v\nupstream sent: %q", resp.Status, err, clip(reply))
	}
	if bodyBreaksOff(reply) {
		t.Fatalf("the upstream's answer broke off, but the client's %s ends as if whole\nupstream sent: %q", resp.Status, clip(reply))
	}
	_ = c.(*net.TCPConn).CloseWrite()
	rest, err := io.ReadAll(br)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("after the answer, no close: %v\nupstream sent: %q", err, clip(reply))
	}
	if len(rest) > 0 {
		t.Fatalf("bytes after the answer %s: %q\nupstream sent: %q", resp.Status, clip(rest), clip(reply))
	}
}

// bodyBreaksOff reports whether reply, read as upstreamConn reads the
// answer to a POST, has a final head and then a body that breaks off or
// does not parse.
func bodyBreaksOff(reply []byte) bool {
	br := bufio.NewReader(bytes.NewReader(reply))
	for {
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodPost})
		if err != nil {
			return false
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			_, err := io.Copy(io.Discard, resp.Body)
			return err != nil
		}
	}
}

// checkServes proves the proxy still answers a well-formed request on a
// new connection. Connection: close makes the proxy end the connection,
// so any panic serving it has been logged when this returns.
func checkServes(t *testing.T, addr, path string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("the proxy no longer accepts connections: %v", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(fuzzHangLimit))
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		path, len(rpcBody), rpcBody)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the proxy no longer serves a new connection: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"result"`)) {
		t.Fatalf("the proxy no longer serves a new connection: %s %q (%v)", resp.Status, body, err)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatalf("the proxy did not close after Connection: close: %v", err)
	}
}

// clip shortens b for a failure message.
func clip(b []byte) []byte {
	const n = 2048
	if len(b) <= n {
		return b
	}
	return append(b[:n:n], "..."...)
}
