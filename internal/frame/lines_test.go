package frame

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t testing.TB, r io.Reader, limit int) ([][]byte, error) {
	t.Helper()
	lr := NewLineReader(r, limit)
	var lines [][]byte
	for {
		l, err := lr.Next()
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return lines, err
		}
		lines = append(lines, l)
	}
}

func TestLineReader_Next(t *testing.T) {
	big := strings.Repeat("x", 200<<10) // longer than the 64 KiB buffer
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"one line", "{}\n", []string{"{}\n"}},
		{"crlf kept", "{}\r\n[]\r\n", []string{"{}\r\n", "[]\r\n"}},
		{"no final newline", "{}\n{\"a\":1}", []string{"{}\n", `{"a":1}`}},
		{"blank lines are frames", "\n\n", []string{"\n", "\n"}},
		{"long line", big + "\n" + "z\n", []string{big + "\n", "z\n"}},
		{"long final line", big, []string{big}},
		{"invalid utf-8", "\xff\xfe\n", []string{"\xff\xfe\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte at a time too: frames must not depend on read sizes.
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				got, err := readAll(t, r, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("%d lines, want %d", len(got), len(tt.want))
				}
				for i := range got {
					if string(got[i]) != tt.want[i] {
						t.Errorf("line %d = %.40q, want %.40q", i, got[i], tt.want[i])
					}
				}
			}
		})
	}
}

func TestLineReader_Limit(t *testing.T) {
	_, err := readAll(t, strings.NewReader(strings.Repeat("x", 300<<10)+"\n"), 100<<10)
	if !errors.Is(err, ErrTooLong) {
		t.Fatalf("err = %v, want ErrTooLong", err)
	}
}

func TestLineReader_OwnsLines(t *testing.T) {
	lr := NewLineReader(strings.NewReader("aaaa\nbbbb\n"), 0)
	first, _ := lr.Next()
	_, _ = lr.Next()
	if string(first) != "aaaa\n" {
		t.Fatalf("first line changed to %q after the next read", first)
	}
}

func TestContent(t *testing.T) {
	for in, want := range map[string]string{"{}\n": "{}", "{}\r\n": "{}\r", "{}": "{}", "": ""} {
		if got := string(Content([]byte(in))); got != want {
			t.Errorf("Content(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzLineReader: concatenating the lines gives back the input, and only
// the last line may lack "\n".
func FuzzLineReader(f *testing.F) {
	for _, s := range []string{"", "{}\n", "a\r\nb", "\n\n\n", strings.Repeat("y", 70000) + "\nq"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		lines, err := readAll(t, bytes.NewReader(in), 0)
		if err != nil {
			t.Fatal(err)
		}
		joined := bytes.Join(lines, nil)
		if !bytes.Equal(joined, in) {
			t.Fatalf("lines do not add up to the input")
		}
		for i, l := range lines {
			if len(l) == 0 {
				t.Fatalf("empty line %d", i)
			}
			if i < len(lines)-1 && l[len(l)-1] != '\n' {
				t.Fatalf("line %d lacks newline", i)
			}
			if bytes.IndexByte(l[:len(l)-1], '\n') >= 0 {
				t.Fatalf("line %d holds a newline inside", i)
			}
		}
	})
}
