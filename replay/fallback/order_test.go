package fallback_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/fallback"
	"github.com/mcptape/mcptape/store"
)

// TestFallback_KeepsClientOrder: a client that writes its handshake and
// forty calls at once, without waiting (as the JSON-RPC it speaks
// allows), has them reach server-everything in the order it wrote them,
// notifications/initialized first. The engine answers each message for
// the fallback on a goroutine of its own; the order comes from the turns
// it hands out as it reads (replay.Sequencer).
func TestFallback_KeepsClientOrder(t *testing.T) {
	const calls = 40
	db := filepath.Join(t.TempDir(), "order.db")
	fb := newFallback(t, fallback.Options{Command: peertest.ServerEverything(t, "stdio"), Record: db, Stderr: io.Discard})
	srv, err := replay.NewServer([]replay.Source{fb}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- srv.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()

	var sent strings.Builder
	sent.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipeliner","version":"1"}}}` + "\n")
	sent.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	var want []string
	for i := range calls {
		fmt.Fprintf(&sent, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m%d"}}}`+"\n", i+1, i)
		want = append(want, fmt.Sprintf("m%d", i))
	}
	go func() { _, _ = io.WriteString(inW, sent.String()) }()

	answered := map[int]string{}
	sc := bufio.NewScanner(outR)
	for len(answered) < calls+1 && sc.Scan() {
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil || m.Method != "" {
			continue // a notification of the server's
		}
		if m.Error != nil {
			t.Errorf("id %d answered an error: %s", *m.ID, m.Error)
		}
		answered[*m.ID] = sc.Text()
	}
	inW.Close()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if len(answered) != calls+1 {
		t.Fatalf("%d of %d requests answered", len(answered), calls+1)
	}
	srv.Close()
	if err := fb.Close(); err != nil {
		t.Fatal(err)
	}

	all := sessions(t, db)
	if len(all) != 1 {
		t.Fatalf("%d sessions recorded, want 1", len(all))
	}
	var methods, echoed []string
	for _, m := range all[0].Messages {
		if m.Dir != store.C2S {
			continue
		}
		var f struct {
			Method string `json:"method"`
			Params struct {
				Arguments struct {
					Message string `json:"message"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(m.Frame, &f) != nil || f.Method == "" {
			continue // a reply to the server
		}
		methods = append(methods, f.Method)
		if f.Method == "tools/call" {
			echoed = append(echoed, f.Params.Arguments.Message)
		}
	}
	if len(methods) < 3 || methods[0] != "initialize" || methods[1] != "notifications/initialized" || slices.Index(methods, "notifications/initialized") != 1 {
		t.Errorf("reached the server: %q…; want initialize, then the client's notifications/initialized, then the calls", methods[:min(len(methods), 5)])
	}
	if !slices.Equal(echoed, want) {
		t.Errorf("the calls reached the server in this order:\n%q\nwant the client's:\n%q", echoed, want)
	}
}
