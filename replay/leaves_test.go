package replay

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// text is the leaf as a diff line would show it whole.
func (l leaf) text() string {
	if l.path == "" {
		return string(l.value)
	}
	return l.path + "=" + string(l.value)
}

func leafTexts(ls []leaf) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.text()
	}
	return out
}

func TestFlatten(t *testing.T) {
	for _, tc := range []struct {
		name, canon string
		want        []string
	}{
		{"none", ``, nil},
		{"nested", `{"a":{"b":[1,"x",{}],"c":[]},"d":null}`, []string{`params.a.b[0]=1`, `params.a.b[1]="x"`, `params.a.b[2]={}`, `params.a.c=[]`, `params.d=null`}},
		// Sorted as the text sorts: "a.b=" before "a=".
		{"as the text sorts", `{"a":1,"a.b":2,"a-c":3}`, []string{`params.a-c=3`, `params.a.b=2`, `params.a=1`}},
		{"escaped key", `{"\u00e9\n":"v"}`, []string{"params.é\n=\"v\""}},
		{"repeated member: the last counts", `{"a":{"x":1},"a":{"y":2},"b":3}`, []string{`params.a.y=2`, `params.b=3`}},
		{"white space", ` { "a" : [ 1 , 2 ] } `, []string{`params.a[0]=1`, `params.a[1]=2`}},
		{"not JSON", `{"a":`, []string{`{"a":`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := leafTexts(flatten([]byte(tc.canon)))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("flatten(%s):\n%s\nwant:\n%s", tc.canon, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// Past leafCap leaves, the rest of each open array and object is one
// leaf.
func TestFlatten_Cap(t *testing.T) {
	var elems []string
	for k := range leafCap + 2 {
		elems = append(elems, strconv.Itoa(k))
	}
	canon := `{"a":[` + strings.Join(elems, ",") + `],"b":{"x":1},"c":2}`
	got := leafTexts(flatten([]byte(canon)))
	want := []string{
		fmt.Sprintf(`params.a[%d:]=%d,%d`, leafCap, leafCap, leafCap+1),
		`params.{b…}="b":{"x":1},"c":2`,
	}
	if len(got) != leafCap+2 || !slices.Contains(got, want[0]) || !slices.Contains(got, want[1]) || !slices.Contains(got, "params.a[4095]=4095") {
		t.Errorf("flatten of %d elements and two members: %d leaves, want %d with %q", leafCap+2, len(got), leafCap+2, want)
	}
}

// compareLeaves orders leaves as their text does.
func TestCompareLeaves(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pick := func(parts ...string) string { return parts[rng.IntN(len(parts))] }
	random := func() leaf {
		l := leaf{path: pick("", "p", "p.a", "p.a.b", "p.a=", "p.ab", "p.a-b")}
		l.value = []byte(pick("1", "12", "\"x\"", "{}", "=1", "", "(no answer)"))
		if l.path != "" && len(l.value) == 0 {
			l.value = []byte("0")
		}
		return l
	}
	sign := func(n int) int { return min(max(n, -1), 1) }
	for range 20000 {
		a, b := random(), random()
		if got, want := sign(compareLeaves(a, b)), strings.Compare(a.text(), b.text()); got != want {
			t.Fatalf("compareLeaves(%q, %q) = %d, want %d", a.text(), b.text(), got, want)
		}
	}
}

// A value too long to show whole shows its start and length, and where
// it first differs from the value it stands against.
func TestShownValue(t *testing.T) {
	long := `"` + strings.Repeat("A", 1000) + `"`
	changed := func(at int, c string) string { return long[:at] + c + long[at+1:] }
	for _, tc := range []struct {
		name, v, other, want string
	}{
		{"short: whole", long[:leafShown-1] + `"`, "", long[:leafShown-1] + `"`},
		{"long", long, "", long[:64] + "…(1002 bytes)"},
		{"differs in the start", long, `"small"`, long[:64] + "…(1002 bytes)"},
		{"differs just past the start: one piece", long, changed(70, "B"), long[:94] + "…(1002 bytes; first difference at byte 70)"},
		{"differs far in", long, changed(500, "B"), long[:64] + "…" + long[476:524] + "…(1002 bytes; first difference at byte 500)"},
		{"the other is its start", long, long[:600], long[:64] + "…" + long[576:624] + "…(1002 bytes; first difference at byte 600)"},
		{"ends in the difference", long, changed(1000, "B"), long[:64] + "…" + long[976:] + "…(1002 bytes; first difference at byte 1000)"},
		// 63 ASCII bytes, then two-byte characters: the cut at 64 would
		// split one.
		{"no character split", `"` + strings.Repeat("a", 62) + strings.Repeat("é", 200) + `"`, "", `"` + strings.Repeat("a", 62) + "…(464 bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var other []byte
			if tc.other != "" {
				other = []byte(tc.other)
			}
			if got := shownValue([]byte(tc.v), other); got != tc.want {
				t.Errorf("shownValue:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// A diff shows at most a few lines, each short whatever its leaf.
func TestFormatDiff(t *testing.T) {
	long := []byte(`"` + strings.Repeat("x", 1<<20) + `"`)
	longPath := "params." + strings.Repeat("k", 1000)
	minus := []leaf{{path: "params.a", value: []byte("1")}, {path: "params.b", value: long}}
	plus := []leaf{{path: "params.a", value: []byte("2")}, {path: longPath, value: []byte("3")}}
	want := "- params.a=1\n" +
		`- params.b="` + strings.Repeat("x", 63) + "…(1048578 bytes)\n" +
		"+ params.a=2\n" +
		"+ params." + strings.Repeat("k", 57) + "…(1007 bytes)=3"
	if got := formatDiff(minus, plus); got != want {
		t.Errorf("formatDiff:\n%s\nwant:\n%s", got, want)
	}
	var many []leaf
	for i := range 9 {
		many = append(many, leaf{path: "params.a", value: []byte{byte('0' + i)}})
	}
	if got, want := formatDiff(many, nil), "- params.a=0\n- params.a=1\n- params.a=2\n- params.a=3\n- params.a=4\n- params.a=5\n… 3 more"; got != want {
		t.Errorf("formatDiff of nine leaves:\n%s\nwant:\n%s", got, want)
	}
}
