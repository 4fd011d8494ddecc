package inspector

import (
	"bytes"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// shellWords splits a command line as a POSIX shell would, for the forms
// Resend writes: words apart by blanks, '…' taken literally, a backslash
// outside quotes escaping the next byte, | a word of its own, and a # at
// the start of a word beginning a comment. It errs on an unclosed quote.
func shellWords(line string) ([]string, error) {
	var words []string
	var w []byte
	inWord := false
	end := func() {
		if inWord {
			words = append(words, string(w))
		}
		w, inWord = w[:0], false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			end()
		case c == '|':
			end()
			words = append(words, "|")
		case c == '#' && !inWord:
			return words, nil
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unclosed single quote")
			}
			w, inWord = append(w, line[i+1:i+1+j]...), true
			i += j + 1
		case c == '\\' && i+1 < len(line):
			w, inWord = append(w, line[i+1]), true
			i++
		default:
			w, inWord = append(w, c), true
		}
	}
	end()
	return words, nil
}

// Whatever bytes a recorded client frame holds, the command Resend writes
// gives them back to the shell unchanged: curl's --data-raw, and each of
// printf's arguments, as the shell reads them, are the frame. A frame it
// cannot carry is refused, never mangled.
func FuzzResend_Quoting(f *testing.F) {
	f.Add([]byte(trickyFrame), "it's-$x")
	f.Add([]byte(listFrame), "")
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"a\":\"\\u0000'\\\\'\"}}"), "a\tb")
	f.Add([]byte(`{"jsonrpc":"2.0","id":"'|#","method":"m"}`), "#")
	f.Fuzz(func(t *testing.T, frame []byte, header string) {
		sum := jsonrpc.Classify(frame)
		sendable := sum.Kind == jsonrpc.Request || sum.Kind == jsonrpc.Notification
		h := http.Header{"Mcp-Session-Id": {header}}
		cmd, err := Resend{Info: httpInfo, Msg: httpMsg(store.C2S, string(frame), "/mcp", h)}.Command()
		switch {
		case err != nil && sendable && !bytes.ContainsRune(frame, 0) && !strings.ContainsRune(header, 0):
			t.Fatalf("curl form refused %q: %v", frame, err)
		case err == nil:
			words, err := shellWords(cmd.Line)
			if err != nil {
				t.Fatalf("%s: %v", cmd.Line, err)
			}
			i := slices.Index(words, "--data-raw")
			if i < 0 || i+1 >= len(words) || words[i+1] != string(frame) {
				t.Fatalf("curl command %q does not carry the frame %q", cmd.Line, frame)
			}
		}
		if bytes.ContainsAny(frame, "\r\n") {
			return // stdio cannot carry it; TestResend_CommandRefuses covers that
		}
		cmd, err = Resend{Info: stdioInfo, Msg: stdioMsg(store.C2S, string(frame)), Initialize: []byte(initFrame), Initialized: []byte(initedFrame)}.Command()
		if err != nil {
			if sendable && !bytes.ContainsRune(frame, 0) {
				t.Fatalf("stdio form refused %q: %v", frame, err)
			}
			return
		}
		words, err := shellWords(cmd.Line)
		if err != nil {
			t.Fatalf("%s: %v", cmd.Line, err)
		}
		pipe := slices.Index(words, "|")
		if pipe < 2 || words[0] != "printf" || words[pipe-1] != string(frame) {
			t.Fatalf("stdio command %q does not end its printf with the frame %q (words %q)", cmd.Line, frame, words)
		}
	})
}
