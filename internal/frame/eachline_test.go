package frame

import (
	"io"
	"strings"
	"testing"
)

func TestEachLine(t *testing.T) {
	var got []string
	err := EachLine(strings.NewReader("{\"a\":1}\n{\"b\":2}\r\n\n{\"c\":3}"), func(c []byte) { got = append(got, string(c)) })
	if err != io.EOF {
		t.Errorf("err %v, want io.EOF", err)
	}
	// The "\r" is the peer's; an empty line is handed on as one.
	if want := []string{`{"a":1}`, "{\"b\":2}\r", "", `{"c":3}`}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}
