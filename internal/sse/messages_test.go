package sse

import (
	"io"
	"strings"
	"testing"
)

func TestMessages(t *testing.T) {
	stream := "id: 0\ndata:\n\n: keep-alive\n\nid: 1\ndata: {\"a\":1}\n\nevent: message\ndata: {\"b\"\ndata: :2}\n\n"
	var got []string
	err := Messages(strings.NewReader(stream), 0, func(ev Event) { got = append(got, ev.ID+" "+string(ev.Data)) })
	if err != io.EOF {
		t.Errorf("err %v, want io.EOF", err)
	}
	if want := []string{`1 {"a":1}`, " {\"b\"\n:2}"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}
