package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

type got struct {
	Raw, ID, Type, Data, Retry string
	HasID, HasData, Complete   bool
}

func readAll(t testing.TB, r io.Reader, max int) ([]got, error) {
	t.Helper()
	rd := NewReader(r, max)
	var out []got
	for {
		ev, err := rd.Next()
		if err != nil {
			if ev.Raw != nil {
				out = append(out, got{Raw: string(ev.Raw)})
			}
			return out, err
		}
		out = append(out, got{string(ev.Raw), ev.ID, ev.Type, string(ev.Data), ev.Retry, ev.HasID, ev.HasData, ev.Complete})
	}
}

func mergeLoneLF(in []got) []got {
	var out []got
	for _, g := range in {
		if g.Raw == "\n" && !g.Complete && len(out) > 0 {
			out[len(out)-1].Raw += "\n"
			continue
		}
		out = append(out, g)
	}
	return out
}

func TestReader_Events(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []got
	}{
		{"one message", "event: message\nid: 1\ndata: {\"a\":1}\n\n",
			[]got{{Raw: "event: message\nid: 1\ndata: {\"a\":1}\n\n", ID: "1", HasID: true, Type: "message", Data: `{"a":1}`, HasData: true, Complete: true}}},
		{"priming event with empty data and retry", "id: p0\nretry: 3000\ndata: \n\n",
			[]got{{Raw: "id: p0\nretry: 3000\ndata: \n\n", ID: "p0", HasID: true, Retry: "3000", HasData: true, Complete: true}}},
		{"multi-line data joined", "data: a\ndata:b\ndata\n\n",
			[]got{{Raw: "data: a\ndata:b\ndata\n\n", Data: "a\nb\n", HasData: true, Complete: true}}},
		{"crlf line ends", "data: x\r\n\r\n",
			[]got{{Raw: "data: x\r\n\r\n", Data: "x", HasData: true, Complete: true}}},
		{"bare cr line ends", "data: x\r\rdata: y\r\r",
			[]got{{Raw: "data: x\r\r", Data: "x", HasData: true, Complete: true}, {Raw: "data: y\r\r", Data: "y", HasData: true, Complete: true}}},
		{"comment kept in raw", ": keepalive\ndata: z\n\n",
			[]got{{Raw: ": keepalive\ndata: z\n\n", Data: "z", HasData: true, Complete: true}}},
		{"only one space dropped", "data:  two\n\n",
			[]got{{Raw: "data:  two\n\n", Data: " two", HasData: true, Complete: true}}},
		{"stream ends mid event", "data: cut",
			[]got{{Raw: "data: cut", Data: "cut", HasData: true}}},
		{"stream ends after a line but before the blank line", "id: 7\ndata: {}\n",
			[]got{{Raw: "id: 7\ndata: {}\n", ID: "7", HasID: true, Data: "{}", HasData: true}}},
		{"stray blank line is an empty event", "\ndata: q\n\n",
			[]got{{Raw: "\n", Complete: true}, {Raw: "data: q\n\n", Data: "q", HasData: true, Complete: true}}},
		{"unknown field ignored", "foo: bar\ndata: 1\n\n",
			[]got{{Raw: "foo: bar\ndata: 1\n\n", Data: "1", HasData: true, Complete: true}}},
		{"empty stream", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []string{"whole", "byte by byte"} {
				var r io.Reader = strings.NewReader(tt.in)
				if mode != "whole" {
					r = iotest.OneByteReader(r)
				}
				out, err := readAll(t, r, 0)
				if !errors.Is(err, io.EOF) {
					t.Fatalf("%s: err = %v, want io.EOF", mode, err)
				}
				if mode != "whole" {
					// Byte by byte, a "\r" ends an event before its "\n" has
					// arrived; the "\n" comes back on its own.
					out = mergeLoneLF(out)
				}
				if d := cmp.Diff(tt.want, out); d != "" {
					t.Errorf("%s: events (-want +got):\n%s", mode, d)
				}
			}
		})
	}
}

// A "\r" at the end of what has arrived dispatches the event at once; the
// "\n" that follows later is kept in the next event's raw bytes.
func TestReader_CRThenLFLater(t *testing.T) {
	pr, pw := io.Pipe()
	rd := NewReader(pr, 0)
	go func() { pw.Write([]byte("data: a\r\n\r")) }()
	ev, err := rd.Next()
	if err != nil || string(ev.Data) != "a" || !ev.Complete {
		t.Fatalf("first event = %+v, %v", ev, err)
	}
	go func() { pw.Write([]byte("\ndata: b\n\n")); pw.Close() }()
	ev, err = rd.Next()
	if err != nil || string(ev.Raw) != "\ndata: b\n\n" || string(ev.Data) != "b" {
		t.Fatalf("second event = %q data %q, %v", ev.Raw, ev.Data, err)
	}
}

func TestReader_TooLong(t *testing.T) {
	in := "data: " + strings.Repeat("x", 100) + "\n\ndata: ok\n\n"
	rd := NewReader(strings.NewReader(in), 50)
	ev, err := rd.Next()
	if !errors.Is(err, ErrTooLong) {
		t.Fatalf("err = %v, want ErrTooLong", err)
	}
	rest, _ := io.ReadAll(io.MultiReader(bytes.NewReader(rd.Buffered()), strings.NewReader("")))
	if got := string(ev.Raw) + string(rest); !strings.HasPrefix(in, got) {
		t.Fatalf("raw+buffered %q is not a prefix of the input", got)
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{"data: x\n\n", "id: 1\r\nretry: 5\r\ndata:\r\n\r\n", "data: a\rdata: b\r\r", ": c\n", "\r\n\r\n\n", "data"} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		var r io.Reader = bytes.NewReader(in)
		if chunk%2 == 1 {
			r = iotest.OneByteReader(r)
		}
		rd := NewReader(r, 0)
		var raw []byte
		for {
			ev, err := rd.Next()
			raw = append(raw, ev.Raw...)
			if err != nil {
				break
			}
			if ev.HasData != (ev.Data != nil || bytes.Contains(ev.Raw, []byte("data"))) && ev.HasData {
				t.Fatalf("HasData without data field in %q", ev.Raw)
			}
			if !ev.HasData && len(ev.Data) > 0 {
				t.Fatalf("data %q without a data field", ev.Data)
			}
		}
		if !bytes.Equal(raw, in) {
			t.Fatalf("events' raw bytes %q differ from the input %q", raw, in)
		}
	})
}

// A released reader's buffer goes to the next reader; events read before
// must not change when it is written over, and the released reader says
// so instead of reading on.
func TestReader_ReleaseKeepsEvents(t *testing.T) {
	first := NewReader(strings.NewReader("id: 1\ndata: first\n\n"), 0)
	a, err := first.Next()
	if err != nil {
		t.Fatal(err)
	}
	first.Release()
	first.Release() // twice is harmless
	if _, err := first.Next(); !errors.Is(err, errReleased) {
		t.Errorf("Next after Release: %v, want errReleased", err)
	}
	for range 10 { // the pool may hand any buffer back: fill many
		rd := NewReader(strings.NewReader("id: 2\ndata: "+strings.Repeat("x", 3000)+"\n\n"), 0)
		if _, err := rd.Next(); err != nil {
			t.Fatal(err)
		}
		rd.Release()
	}
	if string(a.Data) != "first" || a.ID != "1" || string(a.Raw) != "id: 1\ndata: first\n\n" {
		t.Errorf("event read before Release changed: %+v", a)
	}
}
