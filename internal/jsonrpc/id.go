package jsonrpc

import (
	"strconv"
	"strings"
)

// Ids. JSON-RPC compares ids by value, and peers write the same value
// differently: "\u0031" is the string "1", and 1.0 and 1e0 are the
// integer 1. Whatever pairs a response with its request, a cancel with
// the request it names, or a progress notification with its token,
// compares CanonicalID's text, never the bytes as written.

// maxIDDigits bounds how far CanonicalID writes out an integer given
// with an exponent (1e20 as 1 and twenty zeros): past it, the exponent
// form stays, so that a frame of 1e999999999 costs nothing. No peer writes an
// integer id that long in plain decimal.
const maxIDDigits = 64

// CanonicalID returns the text by which id (its JSON text, as a Summary's
// ID holds it) is compared with other ids: equal values give equal text.
// A string is decoded ("\u0031" is "1") and kept in quotes, which only
// mark it a string: the result is a key, not JSON. A number is written
// by canonicalNumber (1.0 and 1e0 are 1). A string and a number never
// give the same text, as JSON-RPC has "1" and 1 apart. Progress tokens
// (string or number too) compare the same way.
//
// Nearly every id is written the one way its value can be (a string
// without escapes or non-ASCII bytes, an integer in plain decimal): that
// id itself is returned, without a copy or an allocation, so that keying
// a million plain ids costs a scan of their bytes. Callers show and send
// ids as written; only comparisons take this form.
func CanonicalID(id []byte) []byte {
	if plainID(id) {
		return id
	}
	if id[0] == '"' {
		s, ok := stringValue(id)
		if !ok {
			return id // no whole string (the inspector keeps 64 KiB of an id): as written
		}
		return []byte(`"` + s + `"`) // the quotes only mark it a string
	}
	return canonicalNumber(id)
}

// CanonicalIDString is CanonicalID for an id held as a string (a
// Summary's ID): a plain id comes back as it is, without an allocation.
func CanonicalIDString(id string) string {
	if plainID(id) {
		return id
	}
	return string(CanonicalID([]byte(id)))
}

// plainID says whether id is already in the form CanonicalID gives.
func plainID[T string | []byte](id T) bool {
	if len(id) == 0 {
		return true
	}
	if id[0] == '"' {
		for i := 1; i < len(id); i++ {
			if c := id[i]; c == '\\' || c >= 0x80 { // an escape, or UTF-8 to check
				return false
			}
		}
		return true
	}
	digits := id
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || digits[0] == '0' {
		return len(id) == 1 && id[0] == '0' // 0 is plain; -0 and 01 are not
	}
	for i := 0; i < len(digits); i++ {
		if c := digits[i]; c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// canonicalNumber writes the JSON number num so that equal values give
// equal text: an integer in plain decimal (1.0, 1e0 and 10E-1 are 1, -0
// is 0), any other value as its significant digits and a power of ten
// (1.5 and 15e-1 are 15e-1). A text that is no JSON number stays as it
// is.
func canonicalNumber(num []byte) []byte {
	s := string(num)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > 1e9 || e < -1e9 {
			return num // no JSON number, or an exponent past any id
		}
		mant, exp = s[:i], e
	}
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		exp -= len(mant) - i - 1
		mant = mant[:i] + mant[i+1:]
	}
	if strings.Trim(mant, "0123456789") != "" || mant == "" {
		return num
	}
	mant = strings.TrimLeft(mant, "0")
	if mant == "" {
		return []byte("0")
	}
	for strings.HasSuffix(mant, "0") {
		mant, exp = mant[:len(mant)-1], exp+1
	}
	var out strings.Builder
	if neg {
		out.WriteByte('-')
	}
	out.WriteString(mant)
	switch {
	case exp >= 0 && len(mant)+exp <= maxIDDigits:
		out.WriteString(strings.Repeat("0", exp))
	case exp != 0:
		out.WriteString("e" + strconv.Itoa(exp))
	}
	return []byte(out.String())
}

// SameID says whether ids a and b, as written, are the same id.
func SameID(a, b []byte) bool {
	return string(CanonicalID(a)) == string(CanonicalID(b))
}
