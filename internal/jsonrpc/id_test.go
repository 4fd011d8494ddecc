package jsonrpc

import "testing"

func TestCanonicalID(t *testing.T) {
	tests := []struct{ name, id, want string }{
		{"plain integer", `12`, `12`},
		{"zero", `0`, `0`},
		{"negative integer", `-3`, `-3`},
		{"plain string", `"abc"`, `"abc"`},
		{"escaped string", `"\u0031"`, `"1"`},
		{"escaped quote and slash", `"a\"\/b"`, `"a"/b"`},
		{"non-ASCII string", `"é"`, `"é"`},
		{"escaped non-ASCII", `"\u00e9"`, `"é"`},
		{"fraction of an integer", `1.0`, `1`},
		{"exponent", `1e0`, `1`},
		{"exponent and fraction", `10E-1`, `1`},
		{"positive exponent", `25e+2`, `2500`},
		{"leading zeros in the fraction", `0.0`, `0`},
		{"negative zero", `-0`, `0`},
		{"negative with exponent", `-2.50e1`, `-25`},
		{"not an integer", `1.5`, `15e-1`},
		{"not an integer, other form", `15e-1`, `15e-1`},
		{"too long to write out", `1e100`, `1e100`},
		{"exponent past any id", `1e99999999999`, `1e99999999999`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(CanonicalID([]byte(tt.id))); got != tt.want {
				t.Errorf("CanonicalID(%s) = %s, want %s", tt.id, got, tt.want)
			}
		})
	}
}

// Plain ids, nearly all of them, are keyed as they are: no copy, no
// allocation, so that pairing a long recording costs a scan of its ids.
func TestCanonicalID_PlainIDsDoNotAllocate(t *testing.T) {
	for _, id := range []string{`12`, `0`, `-3`, `"abc"`, `""`} {
		b := []byte(id)
		if n := testing.AllocsPerRun(100, func() { CanonicalID(b) }); n != 0 {
			t.Errorf("CanonicalID(%s) allocates %v times", id, n)
		}
		if got := CanonicalID(b); len(b) > 0 && &got[0] != &b[0] {
			t.Errorf("CanonicalID(%s) copies the id", id)
		}
		if n := testing.AllocsPerRun(100, func() { CanonicalIDString(id) }); n != 0 {
			t.Errorf("CanonicalIDString(%s) allocates %v times", id, n)
		}
	}
}

func TestSameID(t *testing.T) {
	tests := []struct {
		name, a, b string
		want       bool
	}{
		{"escaped string", `"\u0031"`, `"1"`, true},
		{"integer with a fraction", `1.0`, `1`, true},
		{"integer with an exponent", `3e0`, `3`, true},
		{"string and integer", `"1"`, `1`, false},
		{"different integers", `1`, `2`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SameID([]byte(tt.a), []byte(tt.b)); got != tt.want {
				t.Errorf("SameID(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := CanonicalIDString(tt.a) == CanonicalIDString(tt.b); got != tt.want {
				t.Errorf("CanonicalIDString(%s) == CanonicalIDString(%s) is %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}
