package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// TestMcpspy_FilterHTTP: show --filter and export --filter select the
// messages of server-everything's Streamable HTTP recording by the HTTP
// status and stream recorded with them, as the recording's own metadata
// says, from the .db and from its .jsonl twin alike.
func TestMcpspy_FilterHTTP(t *testing.T) {
	db := peertest.CopyShipped(t, "everything-http.db")
	twin := peertest.CopyShipped(t, "everything-http.jsonl")
	msgs := readTape(t, db).Sessions[0].Messages
	pick := func(keep func(m *store.Message) bool) []uint64 {
		var out []uint64
		for _, m := range msgs {
			if keep(m) {
				out = append(out, m.Seq)
			}
		}
		return out
	}
	brief := func(m *store.Message) store.HTTPBrief { return m.HTTP.Brief() }
	clientNotifications := pick(func(m *store.Message) bool {
		return m.Dir == store.C2S && jsonrpc.Classify(m.Frame).Kind == jsonrpc.Notification
	})
	if len(clientNotifications) == 0 {
		t.Fatal("the recording has no client notification (notifications/initialized at least)")
	}
	tests := []struct {
		name, filter string
		want         []uint64
	}{
		{"202s are the client's notifications", "status:202", clientNotifications},
		{"202s by the metadata", "status:202", pick(func(m *store.Message) bool { return brief(m).Status == 202 })},
		{"the server's 200s", "status:2xx dir:s2c", pick(func(m *store.Message) bool { return m.Dir == store.S2C && brief(m).Status/100 == 2 })},
		{"no status", "!status:2xx", pick(func(m *store.Message) bool { return brief(m).Status/100 != 2 })},
		{"refusals", "status:4xx|5xx", pick(func(m *store.Message) bool { s, _ := m.HTTP.Refusal(); return s != 0 })},
		{"the GET stream", "stream:get-sse", pick(func(m *store.Message) bool { return brief(m).Stream == store.StreamGetSSE })},
		{"events on POSTs with text", "stream:post-sse progress", pick(func(m *store.Message) bool {
			return brief(m).Stream == store.StreamPostSSE && strings.Contains(string(m.Frame), "progress")
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{db, twin} {
				code, out, errOut := runCaptured("show", "--filter", tt.filter, path)
				if code != 0 {
					t.Fatalf("show --filter %q %s: exit %d\n%s", tt.filter, filepath.Base(path), code, errOut)
				}
				var got []uint64
				for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
					var seq uint64
					if _, err := fmt.Sscan(line, &seq); err == nil {
						got = append(got, seq)
					}
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("show --filter %q %s shows %v, want %v:\n%s", tt.filter, filepath.Base(path), got, tt.want, out)
				}
				if none := strings.Contains(errOut, "the filter matched no message"); none != (len(tt.want) == 0) {
					t.Errorf("stderr %q for %d messages shown", errOut, len(got))
				}
			}
			var exported []uint64
			out := filepath.Join(t.TempDir(), "out.jsonl")
			if file := exportWithFilter(t, db, tt.filter, nil, out); len(file) > 0 {
				for _, m := range readTape(t, out).Sessions[0].Messages {
					exported = append(exported, noteSeq(t, m.Note, "everything-http.db"))
				}
			}
			if !slices.Equal(exported, tt.want) {
				t.Errorf("export --filter %q keeps %v, want %v", tt.filter, exported, tt.want)
			}
		})
	}
}
