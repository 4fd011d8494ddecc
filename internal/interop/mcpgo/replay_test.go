package mcpgo_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/store"
)

// mock is `mcpmock serve --report` on sources, on stdio or over HTTP, for
// one fresh mcp-go client.
type mock struct {
	tr     transport.Interface
	report string
	http   *peertest.Process // nil on stdio
}

func startMock(t *testing.T, over string, sources ...string) *mock {
	t.Helper()
	m := &mock{report: filepath.Join(t.TempDir(), "report.json")}
	args := append([]string{"serve", "--report", m.report}, sources...)
	bin := peertest.Binary(t, "mcpmock")
	if over == "stdio" {
		m.tr = transport.NewStdio(bin, nil, args...)
		return m
	}
	args = append([]string{"serve", "--http", "127.0.0.1:0"}, args[1:]...)
	m.http = peertest.Start(t, "", nil, nil, nil, append([]string{bin}, args...)...)
	url := m.http.WaitLine(t, "mcpmock: listening on ", 20*time.Second)
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	m.tr = tr
	return m
}

// finish closes the client, stops mcpmock, and returns its report.
func (m *mock) finish(t *testing.T, c *client.Client) replay.Report {
	t.Helper()
	_ = c.Close() // on stdio: waits for mcpmock to exit (see recordStdio)
	if m.http != nil {
		m.http.Stop(t, 15*time.Second)
	}
	b, err := os.ReadFile(m.report)
	if err != nil {
		t.Fatalf("mcpmock wrote no report: %v", err)
	}
	var r replay.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("report %s: %v", b, err)
	}
	return r
}

// checkClean checks that mcpmock's report has matched requests, none
// unmatched and nothing recorded unused.
func checkClean(t *testing.T, r replay.Report, matched int) {
	t.Helper()
	if len(r.Unmatched) > 0 || len(r.Unused) > 0 || r.Matched != matched {
		t.Errorf("report: %d matched (want %d), unmatched %+v, unused %q", r.Matched, matched, r.Unmatched, r.Unused)
	}
}

// A fresh mcp-go client gets from mcpmock, replaying what mcpspy recorded
// of mcp-go's client and server, the answers the live client got, over
// stdio and HTTP, whatever the recording's transport and era; and mcpmock
// reports every request matched and every recorded one used. It replays
// the progress recorded during the call, re-keyed to the fresh client's
// token.
func TestReplay_Recordings(t *testing.T) {
	t.Parallel()
	type recording struct {
		db            string
		live          liveRun
		version       string // what the clients are pinned to
		before, after int    // progress recorded before and after the call's answer
	}
	recordings := map[string]func(t *testing.T) recording{
		"stdio": func(t *testing.T) recording {
			db, live := recordStdio(t)
			return recording{db: db, live: live}
		},
		"HTTP 2026-07-28": func(t *testing.T) recording {
			db, live := recordHTTP(t, "", 1)
			return recording{db: db, live: live[0]}
		},
		"HTTP 2025-11-25": func(t *testing.T) recording {
			db, live := recordHTTP(t, "2025-11-25", 1)
			return recording{db: db, live: live[0], version: "2025-11-25"}
		},
	}
	for name, record := range recordings {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := record(t)
			spy := peertest.Binary(t, "mcpspy")
			tape := load(t, spy, rec.db)
			rec.before, rec.after = progressAround(tape.Sessions[0].Messages, "tok-rec")
			t.Logf("progress recorded: %d before the answer, %d after", rec.before, rec.after)
			replays := []struct{ name, over, version string }{
				{"replayed over stdio", "stdio", rec.version},
				{"replayed over http", "http", rec.version},
			}
			if rec.version != "" {
				// mcp-go's default client probes with server/discover first:
				// mcpmock must send it on to initialize, as the recorded
				// server did.
				replays = append(replays, struct{ name, over, version string }{"replayed over stdio, client probing", "stdio", ""})
			}
			for _, r := range replays {
				t.Run(r.name, func(t *testing.T) {
					t.Parallel()
					m := startMock(t, r.over, rec.db)
					var opts []client.ClientOption
					if r.version != "" {
						opts = append(opts, client.WithProtocolVersion(r.version))
					}
					c, ir, p := connect(t, m.tr, opts...)
					got := scenario(t, c, ir, p, "tok-replay")
					if d := cmp.Diff(rec.live.answers, got); d != "" {
						t.Errorf("replay differs from live (-live +replay):\n%s", d)
					}
					// Progress recorded after the answer is replayed after it,
					// as session-level traffic: over HTTP that goes on a GET
					// stream, which mcp-go's client opens only when told to
					// (and 2026-07-28 has none).
					want := rec.before
					if r.over == "stdio" {
						want += rec.after
					}
					progress := p.wait(t, want)
					checkClean(t, m.finish(t, c), 5) // server/discover or initialize, tools/list, three calls
					if len(progress) != want || !ownSteps(progress) {
						t.Errorf("replayed progress %q, want %d of the recorded, in order, with the client's token", progress, want)
					}
				})
			}
		})
	}
}

// mcp-go's stdio server writes notifications from a goroutine of its own,
// racing its answers: a call's progress can follow the call's answer (on
// stdio nothing is lost, and mcp-go's client takes it). The recording in
// testdata caught all three after the answer. mcpmock replays them where
// they happened, after the answer, re-keyed to the fresh client's token.
func TestReplay_ProgressAfterAnswer(t *testing.T) {
	t.Parallel()
	jsonl := filepath.Join("testdata", "stdio-progress-after-answer.jsonl")
	tape, err := store.Load(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	if before, after := progressAround(tape.Sessions[0].Messages, "tok-rec"); before != 0 || after != 3 {
		t.Fatalf("testdata has %d progress before the answer and %d after, want 0 and 3", before, after)
	}
	m := startMock(t, "stdio", jsonl)
	c, ir, p := connect(t, m.tr)
	if d := cmp.Diff(append(transcript{"server mcpgoserver 1.0.0, protocol 2026-07-28"}, wantAnswers...), scenario(t, c, ir, p, "tok-replay")); d != "" {
		t.Errorf("client saw (-want +got):\n%s", d)
	}
	if d := cmp.Diff(ownProgress, p.wait(t, 3)); d != "" {
		t.Errorf("replayed progress (-want +got):\n%s", d)
	}
	checkClean(t, m.finish(t, c), 5)
}
