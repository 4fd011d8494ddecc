package recorder

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
)

func TestReadBody(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), (3*bodyProbe)/16+1) // past the probe, not a multiple of it
	tests := []struct {
		name    string
		body    []byte
		length  int64
		limit   int64 // 0: maxBody
		want    []byte
		wantErr error
	}{
		{name: "small", body: []byte(`{"a":1}`), length: 7, want: []byte(`{"a":1}`)},
		{name: "exactly the probe", body: big[:bodyProbe], length: bodyProbe, want: big[:bodyProbe]},
		{name: "past the probe", body: big, length: int64(len(big)), want: big},
		{name: "short, within the probe", body: []byte(`{"a"`), length: 7, want: []byte(`{"a"`), wantErr: io.ErrUnexpectedEOF},
		{name: "short, past the probe", body: big[:2*bodyProbe+5], length: int64(len(big)), want: big[:2*bodyProbe+5], wantErr: io.ErrUnexpectedEOF},
		{name: "unknown length", body: big, length: -1, want: big},
		{name: "over the limit", body: big, length: int64(len(big)), limit: bodyProbe / 2, want: big[:bodyProbe/2]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.limit
			if limit == 0 {
				limit = maxBody
			}
			got, err := readBody(bytes.NewReader(tt.body), tt.length, limit)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("got %d bytes, want %d (equal prefix: %v)", len(got), len(tt.want), bytes.HasPrefix(tt.want, got))
			}
		})
	}
}

// A Content-Length with nothing behind it costs the probe, not the
// length it names.
func TestReadBody_DeclaredLengthAloneCostsLittle(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := readBody(bytes.NewReader(nil), 64<<20, maxBody)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.EOF) || len(got) != 0 {
		t.Fatalf("got %d bytes, err %v; want none and EOF", len(got), err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4*bodyProbe {
		t.Fatalf("reading an empty body declared as 64 MiB allocated %d bytes", grew)
	}
}

// A refusal's note is one line whatever its body held (an HTML page's
// lines), so that show and lint, which print it, keep one line per item.
func TestRefusalNote_OneLine(t *testing.T) {
	page := "<html>\n  <head><title>404</title></head>\n\t<body>Cannot POST /other</body>\n</html>\n"
	if got, want := refusalNote([]byte(page)), "refused without a message: <html> <head><title>404</title></head> <body>Cannot POST /other</body> </html>"; got != want {
		t.Errorf("refusalNote = %q, want %q", got, want)
	}
	if got := refusalNote([]byte(" \n\t")); got != "" {
		t.Errorf("a blank body's note = %q, want none", got)
	}
}
