package replay

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// bigCallParams are the params of a tools/call of about size bytes, name
// first, as clients write them: one argument, an array of many short
// strings, which canonicalising writes a value at a time.
func bigCallParams(size int) []byte {
	const row = `"a row of the table",`
	rows := strings.Repeat(row, size/len(row))
	return []byte(`{"name":"upload","arguments":{"rows":[` + rows[:len(rows)-1] + `]}}`)
}

// A request's members are put in canonical order where they were written,
// not written again past the end: a buffer with room for the params takes
// the match key of a big tools/call, whose arguments sort before its name,
// without growing.
func TestAppendKey_SortsInPlace(t *testing.T) {
	params := bigCallParams(1 << 20)
	buf := make([]byte, 0, len("tools/call")+1+len(params))
	if n := testing.AllocsPerRun(5, func() { appendKey(buf, "tools/call", params) }); n != 0 {
		t.Errorf("the key of a %d-byte tools/call took %v allocations, want none", len(params), n)
	}
}

// heapBytesAllocated is how many bytes of heap fn allocated.
func heapBytesAllocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Matching a big request copies it once, into its match key: the key is
// not grown to its size a doubling at a time, leaving as much again
// behind, nor are its members written twice to sort them.
func TestPrepare_BigRequestCopiedOnce(t *testing.T) {
	const size = 4 << 20
	params := bigCallParams(size)
	s := store.TapeSession{Info: store.SessionInfo{ID: "s1", Transport: store.TransportStdio}}
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i, frame := range []string{
		fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":%s}`, params),
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"stored"}]}}`,
	} {
		s.Messages = append(s.Messages, &store.Message{Session: "s1", Seq: uint64(i + 1), Dir: []store.Dir{store.C2S, store.S2C}[i], Time: t0, Frame: []byte(frame)})
	}
	c, err := NewCassette("big", &store.Tape{Sessions: []store.TapeSession{s}})
	if err != nil {
		t.Fatal(err)
	}
	sess := c.Open()
	req := &Request{ID: []byte("7"), Method: "tools/call", Params: params}
	var ok bool
	got := heapBytesAllocated(func() { _, ok = sess.(Preparer).Prepare(req) })
	if !ok {
		t.Fatal("the recorded request did not match itself")
	}
	if limit := uint64(size) * 5 / 4; got > limit {
		t.Errorf("matching a %d MiB request allocated %.1f MiB, want at most %.1f MiB (one copy)", size>>20, float64(got)/(1<<20), float64(limit)/(1<<20))
	}
}

// bigBlobTape is a recording of one tools/call of the tool "upload" whose
// argument blob is recorded.
func bigBlobTape(recorded string) *store.Tape {
	return oneCallTape(`{"name":"upload","arguments":{"blob":"` + recorded + `"}}`)
}

// oneCallTape is a recording of one tools/call with these params.
func oneCallTape(params string) *store.Tape {
	s := store.TapeSession{Info: store.SessionInfo{ID: "s1", Transport: store.TransportStdio}}
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i, frame := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"stored"}]}}`,
	} {
		s.Messages = append(s.Messages, &store.Message{Session: "s1", Seq: uint64(i + 1), Dir: []store.Dir{store.C2S, store.S2C}[i], Time: t0, Frame: []byte(frame)})
	}
	return &store.Tape{Sessions: []store.TapeSession{s}}
}

func bigBlobCassette(t *testing.T, recorded string) *Cassette {
	t.Helper()
	c, err := NewCassette("big.db", bigBlobTape(recorded))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Loading a recording of a big request holds its match key once: written
// into a buffer of its size, not into an arena block sized four times
// over, and left there by the index, not copied into its record. The
// report's unused requests show its start, not a copy of all of it.
func TestNewCassette_BigRequestKeyOnce(t *testing.T) {
	const size = 4 << 20
	tape := bigBlobTape(strings.Repeat("A", size))
	var c *Cassette
	var err error
	got := heapBytesAllocated(func() { c, err = NewCassette("big.db", tape) })
	if err != nil {
		t.Fatal(err)
	}
	if limit := uint64(size) * 5 / 4; got > limit {
		t.Errorf("loading a recorded %d MiB request allocated %.1f MiB, want at most %.1f MiB (its key, once)", size>>20, float64(got)/(1<<20), float64(limit)/(1<<20))
	}
	var unused []string
	got = heapBytesAllocated(func() { unused = c.Unused() })
	if want := `big.db s1#1 tools/call {"arguments":{"blob":"AAAA`; len(unused) != 1 || !strings.HasPrefix(unused[0], want) || len(unused[0]) > 300 {
		t.Errorf("unused: %.400q, want the one request, shortened", unused)
	}
	if limit := uint64(size) / 8; got > limit {
		t.Errorf("listing a recorded %d MiB request as unused allocated %.1f MiB, want at most %.1f MiB", size>>20, float64(got)/(1<<20), float64(limit)/(1<<20))
	}
	req := &Request{ID: []byte("7"), Method: "tools/call", Params: []byte(`{"name":"upload","arguments":{"blob":"` + strings.Repeat("A", size) + `"}}`)}
	if _, ok := c.Open().(Preparer).Prepare(req); !ok {
		t.Error("the recorded request does not match itself")
	}
}

// A big request nothing matches gets a short error: the diff against the
// nearest recorded request shows the long value's start and its length,
// or, when the recorded value is long too, where the two first differ;
// the log line and the report are as short. Finding the nearest copies
// the request once (its canonical params), not once per step.
func TestUnmatched_BigRequestShortError(t *testing.T) {
	const size = 4 << 20
	long := strings.Repeat("A", size)
	deep := long[:700000] + "Z" + long[700001:] // differs at its byte 700000
	head := `"` + strings.Repeat("A", 63)       // a value's first 64 bytes
	as := strings.Repeat("A", 24)
	for _, tc := range []struct {
		name, recorded, live string
		want                 []string // in the diff
	}{
		{"long against short", "small", long, []string{
			`- params.arguments.blob="small"`,
			`+ params.arguments.blob=` + head + `…(4194306 bytes)`,
		}},
		// Its byte 700001 as JSON, past the opening quote; 24 bytes either
		// side of it.
		{"long against long", long, deep, []string{
			`- params.arguments.blob=` + head + `…` + as + as + `…(4194306 bytes; first difference at byte 700001)`,
			`+ params.arguments.blob=` + head + `…` + as + `Z` + as[1:] + `…(4194306 bytes; first difference at byte 700001)`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := bigBlobCassette(t, tc.recorded)
			req := &Request{ID: []byte("7"), Method: "tools/call", Params: []byte(`{"name":"upload","arguments":{"blob":"` + tc.live + `"}}`)}
			var diff string
			var ok bool
			got := heapBytesAllocated(func() { _, diff, ok = c.Open().(Nearer).Nearest(req) })
			if !ok {
				t.Fatal("no nearest recorded request")
			}
			if limit := uint64(size) * 5 / 4; got > limit {
				t.Errorf("finding the nearest to a %d MiB request allocated %.1f MiB, want at most %.1f MiB (one copy)", size>>20, float64(got)/(1<<20), float64(limit)/(1<<20))
			}
			if want := strings.Join(tc.want, "\n"); diff != want {
				t.Errorf("diff:\n%s\nwant:\n%s", diff, want)
			}

			var log strings.Builder
			srv, err := NewServer([]Source{c}, Options{Log: &log})
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			frame := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":` + string(req.Params) + "}\n"
			if err := srv.ServeStdio(t.Context(), strings.NewReader(frame), &out); err != nil {
				t.Fatal(err)
			}
			const short = 4 << 10
			if !strings.Contains(out.String(), `"code":-32602`) || len(out.String()) > short {
				t.Errorf("the answer is %d bytes, want an unmatched error of at most %d: %.500s", len(out.String()), short, out.String())
			}
			if !strings.Contains(log.String(), "unmatched tools/call") || len(log.String()) > short {
				t.Errorf("the log is %d bytes, want the unmatched request in at most %d: %.500s", len(log.String()), short, log.String())
			}
			if r := srv.Report(); len(r.Unmatched) != 1 || r.Unmatched[0].Diff != diff {
				t.Errorf("report's unmatched = %.500v, want the one request with the diff above", r.Unmatched)
			}
		})
	}
}

// manyItemsParams are the params of a tools/call whose argument is an
// array of n short strings, "r0000000" on; those at the indexes in changed
// start with X instead.
func manyItemsParams(n int, changed ...int) string {
	var b strings.Builder
	b.WriteString(`{"name":"upload","arguments":{"items":[`)
	for k := range n {
		if k > 0 {
			b.WriteByte(',')
		}
		c := 'r'
		if slices.Contains(changed, k) {
			c = 'X'
		}
		fmt.Fprintf(&b, `"%c%07d"`, c, k)
	}
	b.WriteString(`]}}`)
	return b.String()
}

// A request of very many small values nothing matches costs the nearest
// search a bounded number of leaves, not one leaf and one path per value:
// past leafCap leaves the rest of the array is one leaf, compared by its
// bytes. A difference within the cap is still named by its path; one past
// it by the rest's path and where the two first differ.
func TestUnmatched_ManyLeavesBounded(t *testing.T) {
	const n = 200000
	for _, tc := range []struct {
		name string
		at   int // the element the live request changes
		want []string
	}{
		{"differs within the cap", 7, []string{
			`- params.arguments.items[7]="r0000007"`,
			`+ params.arguments.items[7]="X0000007"`,
		}},
		{"differs past the cap", 150000, []string{
			`- params.arguments.items[` + strconv.Itoa(leafCap) + `:]="r00`,
			`+ params.arguments.items[` + strconv.Itoa(leafCap) + `:]="r00`,
			`"X0150000"`,
			`first difference at byte `,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCassette("many.db", oneCallTape(manyItemsParams(n)))
			if err != nil {
				t.Fatal(err)
			}
			req := &Request{ID: []byte("7"), Method: "tools/call", Params: []byte(manyItemsParams(n, tc.at))}
			size := len(req.Params)
			var diff string
			var ok bool
			sess := c.Open().(Nearer)
			got := heapBytesAllocated(func() { _, diff, ok = sess.Nearest(req) })
			if !ok {
				t.Fatal("no nearest recorded request")
			}
			// The live key, once, and leafCap leaves and paths a side (some
			// 1.7 MiB): 101 MiB when each value was a leaf.
			if limit := uint64(size) * 2; got > limit {
				t.Errorf("finding the nearest to a request of %d values (%.1f MiB) allocated %.1f MiB, want at most %.1f MiB", n, float64(size)/(1<<20), float64(got)/(1<<20), float64(limit)/(1<<20))
			}
			allocs := testing.AllocsPerRun(1, func() { sess.Nearest(req) })
			t.Logf("finding the nearest to a request of %d values (%.1f MiB): %.1f MiB in %v allocations", n, float64(size)/(1<<20), float64(got)/(1<<20), allocs)
			// Some two a leaf (its path and its index) a side, 16k: 800k when
			// each value was a leaf.
			if allocs > 8*leafCap {
				t.Errorf("finding the nearest to a request of %d values took %v allocations, want at most %d", n, allocs, 8*leafCap)
			}
			for _, w := range tc.want {
				if !strings.Contains(diff, w) {
					t.Errorf("diff:\n%.2000s\nwant it to hold %s", diff, w)
				}
			}
			if len(diff) > 1000 {
				t.Errorf("diff is %d bytes, want a short one: %.2000s", len(diff), diff)
			}
		})
	}
}

// progressTokenRef and metaVersionRef are how ProgressToken and
// MetaVersion read params before: encoding/json, decoding it all.
func progressTokenRef(params json.RawMessage) json.RawMessage {
	var p struct {
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil || string(p.Meta.ProgressToken) == "null" {
		return nil
	}
	return p.Meta.ProgressToken
}

func metaVersionRef(params json.RawMessage) string {
	var p struct {
		Meta struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return ""
	}
	return p.Meta.Version
}

// ProgressToken and MetaVersion read what encoding/json read, string and
// integer tokens apart, but by exact name: encoding/json also took
// "ProgressToken" or "_META", which matching (canon.go) does not leave
// out as volatile.
func TestRequest_MetaAsEncodingJSON(t *testing.T) {
	const v = `"io.modelcontextprotocol/protocolVersion"`
	for _, params := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `{"name":"echo"}`, `{`, `{"_meta":}`,
		`{"_meta":null}`, `{"_meta":"x"}`, `{"_meta":[1]}`, `{"_meta":{}}`,
		`{"_meta":{"progressToken":1}}`, `{"_meta":{"progressToken":"1"}}`, `{"_meta":{"progressToken":"tok-7"}}`,
		`{"_meta":{"progressToken":null}}`, `{"_meta":{"progressToken":1.5}}`, `{"_meta":{"progressToken":{"a":1}}}`,
		` { "_meta" : { "progressToken" : 42 } } `,
		`{"name":"upload","arguments":{"blob":"` + strings.Repeat("B", 1000) + `"},"_meta":{"progressToken":3}}`,
		`{"_meta":{"progressToken":3},"arguments":{"_meta":{"progressToken":4}}}`,
		`{"_meta":{"progressToken":1,"progressToken":2}}`,
		`{"\u005fmeta":{"progress\u0054oken":"esc"}}`,
		`{"_meta":{"progressToken":1},"arguments":{"broken":}}`,
		`{"_meta":{` + v + `:"2026-07-28","progressToken":"t"}}`,
		`{"_meta":{` + v + `:"2025-11-25"}}`, `{"_meta":{` + v + `:20260728}}`, `{"_meta":{` + v + `:"\u0032026-07-28"}}`,
	} {
		r := &Request{Params: json.RawMessage(params)}
		if params == "" {
			r.Params = nil
		}
		if got, want := r.ProgressToken(), progressTokenRef(r.Params); string(got) != string(want) || (got == nil) != (want == nil) {
			t.Errorf("ProgressToken of %.80s = %q, want %q", params, got, want)
		}
		if got, want := r.MetaVersion(), metaVersionRef(r.Params); got != want {
			t.Errorf("MetaVersion of %.80s = %q, want %q", params, got, want)
		}
	}
	for _, params := range []string{`{"_meta":{"ProgressToken":1}}`, `{"_META":{"progressToken":1}}`} {
		r := &Request{Params: json.RawMessage(params)}
		if got := r.ProgressToken(); got != nil {
			t.Errorf("ProgressToken of %s = %s, want none: the name is not progressToken", params, got)
		}
	}
}

// The token of a big tools/call is found in about the time one scan of its
// params takes (jsonrpc.SkipValue's): its arguments are stepped over, not
// decoded. encoding/json took about 18 times as long.
func TestProgressToken_BigParamsScannedOnce(t *testing.T) {
	params := json.RawMessage(`{"name":"upload","arguments":{"blob":"` + strings.Repeat("B", 16<<20) + `"},"_meta":{"progressToken":"t"}}`)
	r := &Request{Params: params}
	fastest := func(fn func()) time.Duration {
		best := time.Duration(1<<63 - 1)
		for range 5 {
			start := time.Now()
			fn()
			best = min(best, time.Since(start))
		}
		return best
	}
	var tok json.RawMessage
	took := fastest(func() { tok = r.ProgressToken() })
	scan := fastest(func() { jsonrpc.SkipValue(params, 0) })
	if string(tok) != `"t"` {
		t.Fatalf("ProgressToken = %s, want \"t\"", tok)
	}
	t.Logf("ProgressToken %v, one scan %v (%.1fx)", took, scan, float64(took)/float64(scan))
	if took > 4*scan {
		t.Errorf("ProgressToken of a %d MiB call took %v, %.1f times one scan of its params (%v); want at most 4", len(params)>>20, took, float64(took)/float64(scan), scan)
	}
	if n := testing.AllocsPerRun(3, func() { r.ProgressToken() }); n > 1 {
		t.Errorf("ProgressToken of a %d MiB call took %v allocations, want one (the token's copy)", len(params)>>20, n)
	}
}

// A Request's look-ups in its params skip checking them only while the
// params are the ones the engine validated: a source that copies a
// Request and gives it params of its own gets the checking look-up, which
// finds nothing in bytes that are not JSON.
func TestRequestMember_UncheckedOnlyOnValidatedParams(t *testing.T) {
	valid := json.RawMessage(`{"name":"x","_meta":{"progressToken":5}}`)
	engine := &Request{Method: "tools/call", Params: valid, checked: valid}
	if tok := engine.ProgressToken(); string(tok) != "5" {
		t.Fatalf("progress token %s, want 5", tok)
	}
	copied := *engine
	copied.Params = json.RawMessage(`{"name":"x","_meta":{"progressToken":tru}}`)
	if tok := copied.ProgressToken(); tok != nil {
		t.Errorf("a copy with params of its own (not JSON) gave progress token %s, want none", tok)
	}
}

// BenchmarkRequestProgressToken_BigCall: the progress token of a 16 MiB
// tools/call, as the engine's request looks it up (its params validated
// when the frame was split) and as a request whose params nobody checked
// does, side by side. Answering such a call looks in its _meta several
// times.
func BenchmarkRequestProgressToken_BigCall(b *testing.B) {
	params := json.RawMessage(`{"name":"upload","_meta":{"progressToken":"p"},"arguments":{"blob":"` + strings.Repeat("A", 16<<20) + `"}}`)
	for _, bm := range []struct {
		name string
		req  *Request
	}{
		{"validated-by-engine", &Request{Method: "tools/call", Params: params, checked: params}},
		{"unchecked", &Request{Method: "tools/call", Params: params}},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(params)))
			for b.Loop() {
				if tok := bm.req.ProgressToken(); string(tok) != `"p"` {
					b.Fatalf("%s", tok)
				}
			}
		})
	}
}

// ParamsMembers reads the members of params the engine validated without
// checking them again, and of other params as jsonrpc.Members does: it
// refuses bytes that are no JSON object.
func TestRequestParamsMembers(t *testing.T) {
	valid := json.RawMessage(`{"name":"x","arguments":{"s":"a\"}"},"n\u0061me2":[1]}`)
	for _, req := range []*Request{{Params: valid, checked: valid}, {Params: valid}} {
		var got []string
		if !req.ParamsMembers(func(name, value []byte) { got = append(got, string(name)+"="+string(value)) }) {
			t.Fatalf("ParamsMembers refused %s", valid)
		}
		if want := []string{`name="x"`, `arguments={"s":"a\"}"}`, `name2=[1]`}; !slices.Equal(got, want) {
			t.Errorf("members %q, want %q", got, want)
		}
	}
	copied := &Request{Params: json.RawMessage(`{"name":"x","arguments":{"s":tru}}`)}
	if copied.ParamsMembers(func(name, value []byte) {}) {
		t.Error("ParamsMembers took params that are no JSON as an object")
	}
}
