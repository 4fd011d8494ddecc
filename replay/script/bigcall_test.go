package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/replay"
)

// decodeObjectRef is how decodeObject decoded before it read in place:
// encoding/json's Decoder with UseNumber, the numbers then made exactNum.
// (It took a value followed by anything but another value, "{} x"; the
// raw arguments it is given never have anything after them.)
func decodeObjectRef(raw []byte, v *map[string]any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if len(bytes.Trim(raw[dec.InputOffset():], " \t\r\n")) > 0 {
		return errors.New("more than one JSON value")
	}
	*v, _ = exactRef(*v).(map[string]any)
	return nil
}

func exactRef(v any) any {
	switch x := v.(type) {
	case json.Number:
		return exactNum(x)
	case map[string]any:
		for k, e := range x {
			x[k] = exactRef(e)
		}
	case []any:
		for i, e := range x {
			x[i] = exactRef(e)
		}
	}
	return v
}

// decodeObject decodes as encoding/json did: the same values, the same
// numbers kept exact, the same inputs refused.
func TestDecodeObject_AsEncodingJSON(t *testing.T) {
	deep := func(n int) string { return `{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}` }
	for _, in := range decodeSeeds(deep) {
		sameAsDecodeRef(t, []byte(in))
	}
}

// FuzzDecodeObject holds decodeObject to encoding/json on any input.
func FuzzDecodeObject(f *testing.F) {
	for _, in := range decodeSeeds(func(n int) string { return `{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}` }) {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { sameAsDecodeRef(t, in) })
}

func decodeSeeds(deep func(int) string) []string {
	return []string{
		`{}`, ` { } `, `null`, `{"a":1}`,
		`{"n":9007199254740993,"f":-2.5e-3,"z":0,"e":1E400,"s":"abc","b":true,"c":false,"u":null}`,
		`{"o":{"p":{"q":[1,[2,[3,{}]],[]]}},"arr":[{"x":"y"},null,"s",4.0]}`,
		`{"k":1,"k":2}`, `{"esc":"\u00e9\n\"\\\/\ud83d\ude00","\u006bey":"v"}`,
		"{\"bad\":\"\xff\xfe\",\"\xfe\":1}", `{"lone":"\ud800"}`,
		"\t{\r\n\"a\" :\n[ 1 , 2 ]\n}\n",
		deep(9998), deep(10000),
		`[1]`, `"s"`, `1`, `true`,
		`{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":[1,]}`, `{"a":01}`, `{"a":tru}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}", `{a:1}`, ``, ` `,
	}
}

// sameAsDecodeRef fails t unless decodeObject and decodeObjectRef agree on
// in: both refuse it, or both give the same value.
func sameAsDecodeRef(t *testing.T, in []byte) {
	t.Helper()
	var got, want map[string]any
	gotErr, wantErr := decodeObject(in, &got), decodeObjectRef(in, &want)
	name := string(in)
	if len(name) > 40 {
		name = name[:40] + "…"
	}
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%q: error %v, encoding/json's %v", name, gotErr, wantErr)
	}
	if gotErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: got %#v, encoding/json gave %#v", name, got, want)
	}
}

// A tools/call's big argument is decoded into one string, its one copy:
// the params are not copied member by member first, nor the arguments
// into a decoder's buffer grown a doubling at a time.
func TestCall_BigArgumentCopiedOnce(t *testing.T) {
	s, err := Parse("big.yaml", []byte("server: {name: big, version: 1.0.0}\ntools:\n  - name: upload\n    answers:\n      - text: stored\n"))
	if err != nil {
		t.Fatal(err)
	}
	const size = 4 << 20
	req := &replay.Request{ID: json.RawMessage("2"), Method: "tools/call",
		Params: []byte(fmt.Sprintf(`{"name":"upload","arguments":{"blob":"%s"}}`, strings.Repeat("B", size)))}
	sess := s.Open().(replay.Preparer)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p, ok := sess.Prepare(req)
	runtime.ReadMemStats(&after)
	if !ok || !strings.Contains(string(p.Reply.Result), "stored") {
		t.Fatalf("the call was not answered: %v %+v", ok, p)
	}
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(size)*5/4; got > limit {
		t.Errorf("answering a call with a %d MiB argument allocated %.1f MiB, want at most %.1f MiB (one copy)", size>>20, float64(got)/(1<<20), float64(limit)/(1<<20))
	}
}
