package recorder

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"

	"github.com/mcptape/mcptape/internal/frame"
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
			got, err := readBody(bytes.NewReader(tt.body), tt.length, limit, nil)
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
	got, err := readBody(bytes.NewReader(nil), 64<<20, maxBody, nil)
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

// readBody runs beforeLong once for a body of frame.LongLine bytes or
// more, declared or not, before it has read much more than that of it,
// and never for a shorter one; the body is read as without it, and a
// body cut short is still an error.
func TestReadBody_BeforeLong(t *testing.T) {
	long := bytes.Repeat([]byte("0123456789abcdef"), (frame.LongLine+3*longBodyPiece/2)/16)
	cutErr := errors.New("cut")
	tests := []struct {
		name      string
		body      []byte
		length    int64
		limit     int64 // 0: maxBody
		cut       bool  // the body ends in cutErr, not io.EOF
		wantWaits int
		want      []byte
		wantErr   error
	}{
		{name: "short, declared", body: long[:frame.LongLine-1], length: frame.LongLine - 1, want: long[:frame.LongLine-1]},
		{name: "short, unknown length", body: long[:frame.LongLine-1], length: -1, want: long[:frame.LongLine-1]},
		{name: "long, declared", body: long, length: int64(len(long)), wantWaits: 1, want: long},
		{name: "long, unknown length", body: long, length: -1, wantWaits: 1, want: long},
		{name: "exactly long, unknown length", body: long[:frame.LongLine], length: -1, wantWaits: 1, want: long[:frame.LongLine]},
		{name: "long, unknown length, over the limit", body: long, length: -1, limit: frame.LongLine + 5, wantWaits: 1, want: long[:frame.LongLine+5]},
		{name: "long, unknown length, cut", body: long, length: -1, cut: true, wantWaits: 1, want: long, wantErr: cutErr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.limit
			if limit == 0 {
				limit = maxBody
			}
			body := bytes.NewReader(tt.body)
			var in io.Reader = body
			if tt.cut {
				in = io.MultiReader(body, iotest.ErrReader(cutErr))
			}
			waits := 0
			got, err := readBody(in, tt.length, limit, func() {
				waits++
				if read := len(tt.body) - body.Len(); read > frame.LongLine+bodyProbe {
					t.Errorf("beforeLong ran with %d bytes read, want at most %d", read, frame.LongLine+bodyProbe)
				}
			})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if waits != tt.wantWaits {
				t.Errorf("beforeLong ran %d times, want %d", waits, tt.wantWaits)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("got %d bytes, want %d (equal prefix: %v)", len(got), len(tt.want), bytes.HasPrefix(tt.want, got))
			}
		})
	}
}
