package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcptape/mcptape/replay"
)

// throttled is a Source that refuses every tools/call with 429.
type throttled struct{}

func (throttled) Name() string               { return "throttled" }
func (throttled) Open() replay.SessionSource { return throttled{} }
func (throttled) Unused() []string           { return nil }

func (throttled) Answer(_ context.Context, _ replay.Peer, req *replay.Request) (replay.Reply, bool) {
	switch req.Method {
	case "initialize":
		return replay.Reply{Result: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"busy","version":"1"}}`)}, true
	case "tools/call":
		return replay.Reply{HTTPStatus: http.StatusTooManyRequests, Refusal: &replay.HTTPRefusal{
			Header: http.Header{"Retry-After": {"5"}, "Content-Type": {"application/json"}},
			Body:   []byte(`{"error":"slow down"}`),
		}}, true
	}
	return replay.Reply{}, false
}

// A source refuses a request with an HTTP status, headers and a body: over
// Streamable HTTP the POST gets them instead of a JSON-RPC answer.
func ExampleHTTPRefusal() {
	srv, err := replay.NewServer([]replay.Source{throttled{}}, replay.Options{Log: io.Discard})
	if err != nil {
		log.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer func() { srv.Close(); hs.Close() }()
	post := func(sid, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		return resp
	}
	hello := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`)
	hello.Body.Close()
	resp := post(hello.Header.Get("Mcp-Session-Id"), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search"}}`)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status)
	fmt.Println("Retry-After:", resp.Header.Get("Retry-After"))
	fmt.Println(resp.Header.Get("Content-Type"), string(body))
	// Output:
	// 429 Too Many Requests
	// Retry-After: 5
	// application/json {"error":"slow down"}
}
