//go:build linux

package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/internal/peertest/hop"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRelay_RecordsWhatItForwards checks that the experiment is a real
// recording hop, so that its benchmark numbers mean something: a go-sdk
// client's calls through it reach the go-sdk server and come back, and the
// cassette holds every request and answer the client saw.
func TestRelay_RecordsWhatItForwards(t *testing.T) {
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("up") }, nil))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "tee.db")
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() { hop.RecordConn("teerelay", c, strings.TrimPrefix(srv.URL, "http://"), w, relay) })
		}
	}()

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const calls = 5
	for i := range calls {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
	}
	cs.Close()
	srv.CloseClientConnections()
	ln.Close()
	conns.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	var toolCalls, answers int
	err = store.View(path, func(r *store.Reader) error {
		sessions, err := r.Sessions()
		if err != nil {
			return err
		}
		for _, s := range sessions {
			err := r.Messages(s.ID, 1, func(m *store.Message) error {
				switch {
				case m.Dir == store.C2S && strings.Contains(string(m.Frame), `"tools/call"`):
					toolCalls++
				case m.Dir == store.S2C && strings.Contains(string(m.Frame), `"text":"hi"`):
					answers++
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if toolCalls != calls || answers != calls {
		t.Errorf("recorded %d tools/call requests and %d echo answers, want %d of each", toolCalls, answers, calls)
	}
}
