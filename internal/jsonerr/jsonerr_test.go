package jsonerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type har struct {
	Log *struct {
		Entries []struct {
			Time float64 `json:"time"`
			Seq  uint64  `json:"seq"`
			Gzip bool    `json:"gzip"`
			Body []byte  `json:"body"`
		} `json:"entries"`
		Pages map[string]string `json:"pages"`
	} `json:"log"`
}

func TestFile(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"syntax error", "{\n  \"a\": 1,\n}", "x.json:3:1: invalid character '}' looking for beginning of object key string"},
		{"syntax error mid-line", `{"log" 1}`, `x.json:1:8: invalid character '1' after object key`},
		{"not JSON at all", "<html>", "x.json:1:1: invalid character '<' looking for beginning of value"},
		{"column in bytes", "{\"é\": 1,}", "x.json:1:10: invalid character '}' looking for beginning of object key string"},
		{"empty", "", "x.json: the file is empty"},
		{"blank", " \n\t", "x.json: the file is empty"},
		{"cut short", "{\"log\": {\"entries\": [", "x.json: the file ends early (cut short?)"},
		{"array for an object", `[1]`, "x.json:1:1: want an object, got an array"},
		{"string for an array", `{"log": {"entries": "nope"}}`, `x.json:1:26: log.entries: want an array, got a string`},
		{"object for a number", "{\"log\": {\"entries\": [\n {\"time\": {}}]}}", "x.json:2:11: log.entries.time: want a number, got an object"},
		{"fraction for a whole number", `{"log": {"entries": [{"seq": 1.5}]}}`, "x.json:1:32: log.entries.seq: want a whole number, got 1.5"},
		{"string for a boolean", `{"log": {"entries": [{"gzip": "yes"}]}}`, `x.json:1:35: log.entries.gzip: want true or false, got a string`},
		{"boolean for a string", `{"log": {"pages": {"a": true}}}`, `x.json:1:28: log.pages: want a string, got true or false`},
		{"number for bytes", `{"log": {"entries": [{"body": 1}]}}`, `x.json:1:31: log.entries.body: want a base64 string, got a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v har
			err := File("x.json", []byte(tt.data), json.Unmarshal([]byte(tt.data), &v))
			if err == nil || err.Error() != tt.want {
				t.Errorf("Unmarshal: %v\nwant %s", err, tt.want)
			}

			// A Decoder streams the file: File reads it again for the
			// line, and the Decoder's own EOF errors say the same.
			path := filepath.Join(t.TempDir(), "x.json")
			if err := os.WriteFile(path, []byte(tt.data), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			err = File(path, nil, json.NewDecoder(f).Decode(&v))
			if want := strings.Replace(tt.want, "x.json", path, 1); err == nil || err.Error() != want {
				t.Errorf("Decoder: %v\nwant %s", err, want)
			}
		})
	}
}

// The context an error was wrapped in stays, before the user's words; the
// json package's error is still there to be found.
func TestFile_Context(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"wrapped syntax error", fmt.Errorf("not a HAR file: %w", json.Unmarshal([]byte(`{,}`), new(any))), "x.har:1:2: not a HAR file: invalid character ',' looking for beginning of object key string"},
		{"wrapped EOF", fmt.Errorf("not a HAR file: %w", io.EOF), "x.har: not a HAR file: the file is empty"},
		{"not a JSON error", errors.New("no log object"), "x.har: no log object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := File("x.har", []byte(`{,}`), tt.err)
			if err.Error() != tt.want || !errors.Is(err, tt.err) {
				t.Errorf("%v, want %s", err, tt.want)
			}
		})
	}
	if File("x", nil, nil) != nil {
		t.Error("nil error: want nil")
	}
}

// A streamed file that cannot be read again, or that is not the one the
// error came from, gets no position rather than a wrong one.
func TestFile_NoPosition(t *testing.T) {
	err := json.NewDecoder(strings.NewReader(`{"a" 1}`)).Decode(new(any))
	for _, name := range []string{filepath.Join(t.TempDir(), "gone.json"), os.DevNull} {
		if got, want := File(name, nil, err).Error(), name+": invalid character '1' after object key"; got != want {
			t.Errorf("%s\nwant %s", got, want)
		}
	}
}

func ExampleFile() {
	data := []byte("{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"node\",}\n  }\n}\n")
	var v any
	fmt.Println(File("mcp.json", data, json.Unmarshal(data, &v)))
	// Output: mcp.json:3:29: invalid character '}' looking for beginning of object key string
}
