package script_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/replay/script"
)

// TestTSClient_SSEErrorResumes pins what the TypeScript SDK client (1.32.2)
// does when a tools/call is answered with an event stream that carries
// notifications and then a JSON-RPC error.
//
// It reports the error to the caller at once, as an McpError with the code,
// message and data, after the notifications. But its transport also treats
// the stream as cut short: it counts only a result, not an error, as "the
// response", and the stream's events carry ids, so about a second after
// the stream ends (its default first reconnection delay) it resumes it
// with a GET carrying Last-Event-ID, the id of the error's event. A result
// answer of the same shape is not resumed. This was once believed the other
// way round (no resume), from a check that closed the client sooner.
func TestTSClient_SSEErrorResumes(t *testing.T) {
	src, err := script.Load(filepath.Join("testdata", "sse-notify-then-error.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv := mocktest.New(t, []replay.Source{src})
	var reqs requestLog
	hs := httptest.NewUnstartedServer(reqs.wrap(srv.Handler()))
	hs.Config.ConnState = srv.ConnState
	hs.Start()
	t.Cleanup(func() { srv.Server.Close(); hs.Close() }) // Close ends the open GET streams first

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	argv := peertest.NodeScript(t, "sse-error-client.mjs", hs.URL+"/mcp")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var got clientView
	if jerr := json.Unmarshal(out, &got); err != nil || jerr != nil {
		t.Fatalf("client: %v; output %q: %v; stderr:\n%s", err, out, jerr, stderr.String())
	}
	t.Logf("client: %s", out)
	t.Logf("server saw:\n%s", reqs.String())
	if got.Fatal != "" {
		t.Fatalf("client failed: %s", got.Fatal)
	}
	if got.Tokens["succeed"] == "" || got.Tokens["fail"] == "" || got.Tokens["succeed"] == got.Tokens["fail"] {
		t.Fatalf("want an event id per call's stream (were the answers event streams?), got %v", got.Tokens)
	}
	failEnd := got.Tokens["fail"]

	// What the caller saw, in order: the notifications before each answer,
	// the error before any resume, and no resume of the result's stream
	// (it would have come first: both wait the same delay after their
	// stream ends, and the client stops at the first resume).
	want := []string{
		"log succeed starting", "progress 1/2 half way", "result done",
		"log fail starting", "progress 1/2 half way", "error -32000",
		"resume GET Last-Event-ID " + failEnd,
	}
	if d := cmp.Diff(want, got.Timeline); d != "" {
		t.Errorf("timeline (-want +got):\n%s", d)
	}
	wantErr := &clientError{Type: "McpError", Code: -32000, Message: "MCP error -32000: backend said no", Data: map[string]any{"retryable": false}}
	if got.Error == nil {
		t.Fatal("the caller got no error")
	}
	if d := cmp.Diff(wantErr, got.Error, cmpopts.IgnoreFields(clientError{}, "AfterMS")); d != "" {
		t.Errorf("error (-want +got):\n%s", d)
	}

	// What reached the server: each call POSTed once, then exactly one
	// GET with Last-Event-ID, resuming the failed call's stream.
	seen := reqs.all()
	calls := map[string]int{}
	var resumes []string
	for _, r := range seen {
		if r.rpc == "tools/call" {
			calls[r.tool]++
		}
		if r.lastEventID != "" {
			resumes = append(resumes, r.method+" "+r.lastEventID)
		}
	}
	if d := cmp.Diff(map[string]int{"succeed": 1, "fail": 1}, calls); d != "" {
		t.Errorf("tools/call POSTs per tool (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"GET " + failEnd}, resumes); d != "" {
		t.Errorf("requests with Last-Event-ID (-want +got):\n%s", d)
	}
	// The resumed stream stays open, as the TS SDK's own server keeps it:
	// ending it made the client try again with a plain GET (409, the
	// session's GET stream being open) and give up through onerror.
	if len(got.TransportErrors) != 0 {
		t.Errorf("the client reported transport errors after the resume: %q", got.TransportErrors)
	}
}

// clientView is what sse-error-client.mjs prints.
type clientView struct {
	Tokens   map[string]string `json:"tokens"` // each call's last event id
	Timeline []string          `json:"timeline"`
	Error    *clientError      `json:"error"`
	Resume   *struct {
		LastEventID string `json:"lastEventID"`
		AtMS        int64  `json:"atMs"` // from the client's start
		Status      int    `json:"status"`
	} `json:"resume"`
	Fatal           string   `json:"fatal"`
	TransportErrors []string `json:"transportErrors"`
}

type clientError struct {
	Type    string `json:"type"`
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data"`
	AfterMS int64  `json:"afterMs"` // from the call to the error
}

// requestLog records what reaches a handler: the HTTP method, the
// Last-Event-ID header and, for a POST, the JSON-RPC method and tool name.
type requestLog struct {
	mu   sync.Mutex
	reqs []seenRequest
}

type seenRequest struct {
	method, lastEventID, rpc, tool string
}

func (l *requestLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seenRequest{method: r.Method, lastEventID: r.Header.Get("Last-Event-ID")}
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			_ = json.Unmarshal(body, &m)
			s.rpc, s.tool = m.Method, m.Params.Name
		}
		l.mu.Lock()
		l.reqs = append(l.reqs, s)
		l.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (l *requestLog) all() []seenRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]seenRequest(nil), l.reqs...)
}

func (l *requestLog) String() string {
	var b bytes.Buffer
	for _, r := range l.all() {
		fmt.Fprintf(&b, "  %s rpc=%q tool=%q Last-Event-ID=%q\n", r.method, r.rpc, r.tool, r.lastEventID)
	}
	return b.String()
}
