package replay

import (
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestAppendNumber(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0", "0"}, {"-0", "0"}, {"-0.0e5", "0"}, {"7", "7"}, {"-12", "-12"},
		{"2.0", "2"}, {"2.50", "2.5"}, {"1e2", "100"}, {"1E+2", "100"}, {"100.0", "100"},
		{"0.1", "0.1"}, {"1e-1", "0.1"}, {"0.000001", "0.000001"}, {"0.0000001", "1e-7"},
		{"123456789012345678901", "123456789012345678901"}, {"1e21", "1e+21"}, {"12e20", "1.2e+21"},
		{"9007199254740993", "9007199254740993"}, // past float64's integers: kept exact
		{"3.14159265358979323846264338327950288", "3.14159265358979323846264338327950288"},
		{"-1.5e-10", "-1.5e-10"}, {"1e0000000003", "1000"}, {"1e9999999999", "1e9999999999"},
	}
	for _, tt := range tests {
		if got := string(appendNumber(nil, []byte(tt.in))); got != tt.want {
			t.Errorf("appendNumber(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// Random literals: the canonical form has the literal's value, is its own
// canonical form, and two literals have one form exactly when their values
// are equal (big.Rat, exact).
func TestAppendNumber_ValueExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	digits := func(n int, lead bool) string {
		var b strings.Builder
		for k := range n {
			d := rng.IntN(10)
			if k == 0 && lead && d == 0 {
				d = 1
			}
			b.WriteByte(byte('0' + d))
		}
		return b.String()
	}
	literal := func() string {
		s := ""
		if rng.IntN(3) == 0 {
			s = "-"
		}
		if rng.IntN(3) == 0 {
			s += "0"
		} else {
			s += digits(1+rng.IntN(4), true)
		}
		if rng.IntN(2) == 0 {
			s += "." + digits(1+rng.IntN(4), false)
		}
		if rng.IntN(2) == 0 {
			s += []string{"e", "E", "e+", "e-", "E-0"}[rng.IntN(5)] + digits(1+rng.IntN(2), false)
		}
		return s
	}
	rat := func(s string) *big.Rat {
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat cannot read %q", s)
		}
		return r
	}
	var lits []string
	for range 4000 {
		lits = append(lits, literal())
	}
	for _, a := range lits {
		c := string(appendNumber(nil, []byte(a)))
		if rat(c).Cmp(rat(a)) != 0 {
			t.Fatalf("%s → %s: another value", a, c)
		}
		if again := string(appendNumber(nil, []byte(c))); again != c {
			t.Fatalf("%s → %s → %s: not stable", a, c, again)
		}
	}
	for k := range 20000 {
		a, b := lits[k%len(lits)], lits[rng.IntN(len(lits))]
		same := string(appendNumber(nil, []byte(a))) == string(appendNumber(nil, []byte(b)))
		if same != (rat(a).Cmp(rat(b)) == 0) {
			t.Fatalf("%s and %s: same form %v, same value %v", a, b, same, !same)
		}
	}
}
