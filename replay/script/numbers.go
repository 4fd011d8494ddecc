package script

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// This file keeps the numbers a client sends exact: a tool's arguments and
// the client's replies are decoded with their digits, never through a
// float64, so 9007199254740993 stays itself for when, templates and json.

// exactNum is a JSON number as the client wrote it. It prints an integer as
// its digits and formats exactly with printf's verbs, and encodes as
// written.
type exactNum string

// decodeObject decodes a JSON object with its numbers exact (as exactNum),
// as encoding/json decodes one into a map with UseNumber: the last of a
// repeated name counts, invalid UTF-8 becomes U+FFFD, null is a nil map.
// It reads raw where it lies: a json.Decoder would first copy it into a
// buffer of its own, grown by doubling, which for a tool's 64 MiB argument
// left 256 MiB of copies behind.
func decodeObject(raw []byte, v *map[string]any) error {
	d := exactDecoder{b: raw}
	x, ok := d.value(0)
	m, isObject := x.(map[string]any)
	switch {
	case !ok:
		return errors.New("not valid JSON")
	case jsonrpc.SkipWS(raw, d.i) != len(raw):
		return errors.New("more after the JSON value")
	case x != nil && !isObject:
		return errors.New("not a JSON object")
	}
	*v = m
	return nil
}

// maxNesting is how deep decodeObject lets arrays and objects nest:
// encoding/json's limit.
const maxNesting = 10000

// exactDecoder decodes the JSON value at b[i], in one pass over it, with
// its numbers as exactNum.
type exactDecoder struct {
	b []byte
	i int
}

// value decodes the value at b[i] (white space before it allowed) inside
// nest arrays and objects, and leaves i just past it.
func (d *exactDecoder) value(nest int) (any, bool) {
	b := d.b
	d.i = jsonrpc.SkipWS(b, d.i)
	if d.i >= len(b) {
		return nil, false
	}
	switch b[d.i] {
	case '{', '[':
		if nest >= maxNesting {
			return nil, false
		}
		if b[d.i] == '{' {
			return d.object(nest + 1)
		}
		return d.array(nest + 1)
	case '"':
		return d.str()
	}
	end, ok := jsonrpc.SkipValue(b, d.i) // a number or a literal
	if !ok {
		return nil, false
	}
	lit := b[d.i:end]
	d.i = end
	switch string(lit) {
	case "true":
		return true, true
	case "false":
		return false, true
	case "null":
		return nil, true
	}
	return exactNum(lit), true
}

// str decodes the string at b[i].
func (d *exactDecoder) str() (string, bool) {
	end, _, ok := jsonrpc.SkipString(d.b, d.i)
	if !ok {
		return "", false
	}
	s, ok := jsonrpc.String(d.b[d.i:end])
	d.i = end
	return s, ok
}

func (d *exactDecoder) object(nest int) (any, bool) {
	b, m := d.b, map[string]any{}
	if d.i = jsonrpc.SkipWS(b, d.i+1); d.i < len(b) && b[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		if d.i >= len(b) || b[d.i] != '"' {
			return nil, false
		}
		key, ok := d.str()
		if !ok {
			return nil, false
		}
		if d.i = jsonrpc.SkipWS(b, d.i); d.i >= len(b) || b[d.i] != ':' {
			return nil, false
		}
		d.i++
		v, ok := d.value(nest)
		if !ok {
			return nil, false
		}
		m[key] = v
		if d.i = jsonrpc.SkipWS(b, d.i); d.i >= len(b) {
			return nil, false
		}
		switch b[d.i] {
		case ',':
			d.i = jsonrpc.SkipWS(b, d.i+1)
		case '}':
			d.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (d *exactDecoder) array(nest int) (any, bool) {
	b, s := d.b, []any{}
	if d.i = jsonrpc.SkipWS(b, d.i+1); d.i < len(b) && b[d.i] == ']' {
		d.i++
		return s, true
	}
	for {
		v, ok := d.value(nest)
		if !ok {
			return nil, false
		}
		s = append(s, v)
		if d.i = jsonrpc.SkipWS(b, d.i); d.i >= len(b) {
			return nil, false
		}
		switch b[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			return s, true
		default:
			return nil, false
		}
	}
}

// plainNumbers is a copy of v with each number as an int64 when it is an
// integer that fits, else a float64: what the schema validator knows.
func plainNumbers(v any) any {
	switch x := v.(type) {
	case exactNum:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		return mustFloat(string(x))
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = plainNumbers(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = plainNumbers(e)
		}
		return s
	}
	return v
}

func (n exactNum) MarshalJSON() ([]byte, error) { return []byte(n), nil }

// rat is the number's exact value; nil for one whose exponent is too
// large to hold (beyond a float64's, 1e400), which equals only itself.
func (n exactNum) rat() *big.Rat {
	if i := strings.IndexAny(string(n), "eE"); i >= 0 && len(strings.TrimLeft(string(n)[i+1:], "+-0")) > 3 {
		// Exact would take up to megabytes: a float64 is as good here.
		return floatRat(mustFloat(string(n)))
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil
	}
	return r
}

func mustFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// String is an integer's digits (up to 21 of them, as JavaScript prints
// one), else the number as written.
func (n exactNum) String() string {
	if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return string(n)
	}
	if r := n.rat(); r != nil && r.IsInt() && len(r.Num().String()) <= 22 {
		return r.Num().String()
	}
	return string(n)
}

// Format prints the number exactly for printf's verbs: %v and %s as
// String, %d (and %x, %o, %b) an integer, %f, %e, %g its value to the
// precision asked, with no float64 rounding first.
func (n exactNum) Format(f fmt.State, verb rune) {
	r := n.rat()
	switch verb {
	case 'v', 's':
		fmt.Fprintf(f, fmt.FormatString(f, verb), n.String())
		return
	case 'q':
		fmt.Fprintf(f, fmt.FormatString(f, verb), string(n))
		return
	case 'd', 'x', 'X', 'o', 'O', 'b':
		if r != nil && r.IsInt() {
			r.Num().Format(f, verb)
			return
		}
	case 'f', 'F', 'e', 'E', 'g', 'G':
		if r != nil {
			prec := uint(64 + r.Num().BitLen() + r.Denom().BitLen())
			new(big.Float).SetPrec(prec).SetRat(r).Format(f, verb)
			return
		}
	}
	fmt.Fprintf(f, "%%!%c(number=%s)", verb, string(n))
}

// floatRat is the value of a float64 as its shortest decimal, the
// number it was written as: a script's 0.1 is one tenth, as a client's is.
func floatRat(f float64) *big.Rat {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil
	}
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return r
}

// numberRat is the exact value of a JSON number in any of the forms a
// script or a client gives it; ok is false for anything else.
func numberRat(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case exactNum:
		r := x.rat()
		return r, r != nil
	case json.Number:
		r := exactNum(x).rat()
		return r, r != nil
	}
	rv := reflect.ValueOf(v)
	switch {
	case !rv.IsValid():
		return nil, false
	case rv.CanInt():
		return new(big.Rat).SetInt64(rv.Int()), true
	case rv.CanUint():
		return new(big.Rat).SetUint64(rv.Uint()), true
	case rv.CanFloat():
		r := floatRat(rv.Float())
		return r, r != nil
	}
	return nil, false
}

// Templates compare numbers by value, exactly, whatever their Go type:
// eq .args.n 1, eq .args.n 1.0 and gt .args.n 10 all work on a client's
// number. Other values compare as text/template's own functions compare
// them.

var errCompare = errors.New("incompatible types for comparison")

// compare orders a and b: numbers by value, strings by bytes; eqOnly also
// allows equal kinds of other comparable values (booleans, nil).
func compare(a, b any, eqOnly bool) (int, error) {
	ra, aNum := numberRat(a)
	rb, bNum := numberRat(b)
	if aNum && bNum {
		return ra.Cmp(rb), nil
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.IsValid() && vb.IsValid() && va.Kind() == reflect.String && vb.Kind() == reflect.String && !aNum && !bNum {
		return strings.Compare(va.String(), vb.String()), nil
	}
	if !eqOnly || aNum || bNum {
		return 0, errCompare
	}
	switch {
	case !va.IsValid() || !vb.IsValid():
		if va.IsValid() == vb.IsValid() {
			return 0, nil
		}
		return 1, nil
	case va.Kind() != vb.Kind() || !va.Comparable():
		return 0, errCompare
	case va.Equal(vb):
		return 0, nil
	}
	return 1, nil
}

func cmpFunc(ok func(int) bool) func(a, b any) (bool, error) {
	return func(a, b any) (bool, error) {
		c, err := compare(a, b, false)
		return err == nil && ok(c), err
	}
}

var compareFuncs = map[string]any{
	"eq": func(a any, bs ...any) (bool, error) {
		if len(bs) == 0 {
			return false, errors.New("missing argument for comparison")
		}
		for _, b := range bs {
			c, err := compare(a, b, true)
			if err != nil {
				return false, err
			}
			if c == 0 {
				return true, nil
			}
		}
		return false, nil
	},
	"ne": func(a, b any) (bool, error) {
		c, err := compare(a, b, true)
		return err == nil && c != 0, err
	},
	"lt": cmpFunc(func(c int) bool { return c < 0 }),
	"le": cmpFunc(func(c int) bool { return c <= 0 }),
	"gt": cmpFunc(func(c int) bool { return c > 0 }),
	"ge": cmpFunc(func(c int) bool { return c >= 0 }),
}

// beyondFloat is a number the script wrote, kept exact when a float64
// would change its value (f, or NaN for an integer too big for an int64):
// 18446744073709551617 stays itself, as a client's does, while 0.1 and 1e3
// stay float64s. ok is false for those, and for text that is no JSON
// number (YAML's 0x1F, +5 or .5), which a float64 holds as YAML means it.
func beyondFloat(text string, f float64) (exactNum, bool) {
	if !json.Valid([]byte(text)) || (text[0] != '-' && (text[0] < '0' || text[0] > '9')) {
		return "", false
	}
	n := exactNum(text)
	r := n.rat()
	if r == nil || (!math.IsNaN(f) && floatRat(f).Cmp(r) == 0) {
		return "", false
	}
	return n, true
}
