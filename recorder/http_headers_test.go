package recorder_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Hop-by-hop headers (RFC 9110 7.6.1), and those a Connection header
// names, belong to one connection: the proxy drops them both ways. The
// rest pass.
func TestHTTPProxy_HopByHopHeadersDropped(t *testing.T) {
	seen := make(chan http.Header, 1)
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		w.Header().Set("Connection", "X-Upstream-Hop")
		w.Header().Set("X-Upstream-Hop", "1")
		w.Header().Set("X-Upstream-End", "1")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))
	px := startHTTPProxy(t, up)
	resp, _ := post(t, px.URL, rpcBody, map[string]string{
		"Connection":          "X-Client-Hop",
		"X-Client-Hop":        "1",
		"Keep-Alive":          "timeout=5",
		"Te":                  "trailers",
		"Proxy-Authorization": "Basic cHJveHk6cGFzcw==",
		"X-Client-End":        "1",
	})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	upHeader := <-seen
	for _, name := range []string{"X-Client-Hop", "Keep-Alive", "Te", "Proxy-Authorization"} {
		if v := upHeader.Values(name); len(v) > 0 {
			t.Errorf("upstream got hop-by-hop %s: %q", name, v)
		}
	}
	if c := upHeader.Get("Connection"); strings.Contains(strings.ToLower(c), "x-client-hop") {
		t.Errorf("upstream got Connection: %q", c)
	}
	if upHeader.Get("X-Client-End") != "1" {
		t.Errorf("upstream lost the end-to-end header X-Client-End: %v", upHeader)
	}
	if v := resp.Header.Values("X-Upstream-Hop"); len(v) > 0 {
		t.Errorf("client got hop-by-hop X-Upstream-Hop: %q", v)
	}
	if resp.Header.Get("X-Upstream-End") != "1" {
		t.Errorf("client lost the end-to-end header X-Upstream-End: %v", resp.Header)
	}
}

// Inputs a tool marks x-mcp-header travel as Mcp-Param-* headers in the
// 2026-07-28 protocol, and go-sdk's server refuses a call whose headers do
// not match its body. Through the proxy, go-sdk's client calls such a
// tool; the headers reach the server and are recorded with the call.
func TestHTTPProxy_StandardHeadersPassThrough(t *testing.T) {
	h := callHeaderTool(t, "eu-west").HTTP.RequestHeader
	for name, want := range map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "weather", "Mcp-Param-Region": "eu-west", "Mcp-Protocol-Version": "2026-07-28"} {
		if got := h.Get(name); got != want {
			t.Errorf("recorded %s: %q, want %q", name, got, want)
		}
	}
}

// --redact region hides the region argument, and so its copy in the
// Mcp-Param-Region header (2026-07-28), which the server still gets.
func TestHTTPProxy_RedactNameHidesItsParamHeader(t *testing.T) {
	h := callHeaderTool(t, "s3cret-tenant", func(p *recorder.HTTPProxy) {
		p.Redact = recorder.NewHTTPRedactor([]string{"region"})
	}).HTTP.RequestHeader
	if got := h.Get("Mcp-Param-Region"); got != recorder.Redacted {
		t.Errorf("recorded Mcp-Param-Region %q, want %q", got, recorder.Redacted)
	}
	if got := h.Get("Mcp-Name"); got != "weather" {
		t.Errorf("recorded Mcp-Name %q, want weather: only the named parameter's header is hidden", got)
	}
}

// callHeaderTool has go-sdk's client call, through a proxy that configure
// sets up, a go-sdk server's tool whose region input is marked
// x-mcp-header Region, and returns the call as recorded. The call fails
// the test unless the server got the header it wants.
func callHeaderTool(t *testing.T, region string, configure ...func(*recorder.HTTPProxy)) *store.Message {
	t.Helper()
	srv := goSDKServer()
	srv.AddTool(&mcp.Tool{
		Name:        "weather",
		Description: "Says the weather of a region",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + string(req.Params.Arguments)}}}, nil
	})
	up := serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	px := startHTTPProxy(t, up+"/mcp", configure...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "headers", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: px.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil { // the client learns which inputs go in headers
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "weather", Arguments: map[string]any{"region": region}})
	if err != nil {
		t.Fatalf("call through the proxy: %v", err)
	}
	if res.IsError {
		t.Fatalf("call through the proxy: the server refused it: %+v", res.Content[0])
	}
	cs.Close()
	px.Stop()

	for _, s := range readCassette(t, px.Cassette) {
		for _, m := range s.msgs {
			if m.Dir == store.C2S && m.HTTP != nil && strings.Contains(string(m.Frame), `"tools/call"`) {
				return m
			}
		}
	}
	t.Fatal("the tools/call request is not in the cassette")
	return nil
}

// The request reaches the upstream with the client's headers, on both
// upstream paths: in particular Go's transport adds no Accept-Encoding of
// its own (it would then undo the gzip itself, and the client would get
// bytes the server never sent).
func TestHTTPProxy_AddsNoAcceptEncoding(t *testing.T) {
	for _, path := range upstreamPaths {
		t.Run(path.name, func(t *testing.T) {
			seen := make(chan http.Header, 1)
			up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen <- r.Header.Clone()
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
			}))
			px := startHTTPProxy(t, up, path.configure)
			client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			resp, err := client.Post(px.URL, "application/json", strings.NewReader(rpcBody))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if h := <-seen; len(h.Values("Accept-Encoding")) > 0 {
				t.Errorf("upstream got Accept-Encoding %q; the client sent none", h.Values("Accept-Encoding"))
			}
		})
	}
}

// A URL in a header (a browser client's Referer, which carries its page's
// query; an upstream's Content-Location) loses, in the cassette, what the
// upstream's URL would: its password and query parameters named like
// credentials. Both peers still get it as it was.
func TestHTTPProxy_RedactsURLsInHeaders(t *testing.T) {
	const referer = "http://localhost:6274/oauth/callback?access_token=s3cret&state=x"
	const location = "https://u:s3cret@h.example/mcp?page=2"
	seen := make(chan string, 1)
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Get("Referer")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Location", location)
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))
	px := startHTTPProxy(t, up)
	req, err := http.NewRequest(http.MethodPost, px.URL, strings.NewReader(rpcBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Referer", referer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := <-seen; got != referer {
		t.Errorf("upstream got Referer %q, want %q", got, referer)
	}
	if got := resp.Header.Get("Content-Location"); got != location {
		t.Errorf("client got Content-Location %q, want %q", got, location)
	}
	px.Stop()
	var checked int
	for _, s := range readCassette(t, px.Cassette) {
		for _, m := range s.msgs {
			if m.HTTP == nil {
				continue
			}
			if got, want := m.HTTP.RequestHeader.Get("Referer"), "http://localhost:6274/oauth/callback?access_token=[redacted]&state=x"; got != want {
				t.Errorf("%s recorded Referer %q, want %q", m.Dir, got, want)
			}
			if m.Dir == store.S2C {
				if got, want := m.HTTP.ResponseHeader.Get("Content-Location"), "https://u:[redacted]@h.example/mcp?page=2"; got != want {
					t.Errorf("recorded Content-Location %q, want %q", got, want)
				}
			}
			checked++
		}
	}
	if checked != 2 {
		t.Errorf("checked %d recorded messages, want the request and its answer", checked)
	}
}
