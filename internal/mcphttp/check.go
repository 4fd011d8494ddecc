package mcphttp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// What a server checks of the headers SetStateless and SetParams set: the
// other end of the same rules, for mcpmock and for lint.

// DecodeValue undoes EncodeValue: the text inside "=?base64?…?=", or the
// value as it stands. ok is false for a sentinel whose inside is not
// Base64.
func DecodeValue(v string) (s string, ok bool) {
	inner, prefixed := strings.CutPrefix(v, base64Prefix)
	inner, suffixed := strings.CutSuffix(inner, base64Suffix)
	if !prefixed || !suffixed {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// NameMatches says whether an Mcp-Name header names want: as it stands,
// or in Base64 form. go-sdk v1.8 sends and expects the name as it stands,
// EncodeValue encodes what is not plain ASCII; a server takes either.
func NameMatches(header, want string) bool {
	if header == want {
		return true
	}
	v, ok := DecodeValue(header)
	return ok && v == want
}

// CheckParams says how a tools/call's Mcp-Param-<Name> headers disagree
// with its arguments, or nil: an argument that is present and not null
// needs its header, with the same value (integers compared as numbers,
// as 42 may travel as 42.0); one absent or null must have none.
func CheckParams(h http.Header, frame []byte, params []ParamHeader) error {
	if len(params) == 0 {
		return nil
	}
	arguments, ok := argumentsOf(frame)
	if !ok {
		return nil // not an object: the JSON-RPC layer says so
	}
	for _, p := range params {
		header := "Mcp-Param-" + p.Name
		// Present but empty is a header too: the empty string's own form,
		// as go-sdk's client sends it (its server takes it for missing).
		values, present := h[textproto.CanonicalMIMEHeaderKey(header)]
		var got string
		if len(values) > 0 {
			got = values[0]
		}
		arg := lookup(arguments, p.Path)
		where := strings.Join(p.Path, ".")
		if len(arg) == 0 || string(arg) == "null" {
			if present {
				return fmt.Errorf("%s is sent, but argument %s is absent or null", header, where)
			}
			continue
		}
		want, ok := headerValue(arg)
		switch {
		case !ok:
			return fmt.Errorf("argument %s is %s; a %s header can carry only a string, integer or boolean", where, shortJSON(arg), header)
		case !present:
			return fmt.Errorf("%s is missing; argument %s is %s", header, where, shortJSON(arg))
		}
		decoded, ok := DecodeValue(got)
		if !ok {
			return fmt.Errorf("%s %q is not valid =?base64?…?= text", header, got)
		}
		if decoded != want && !sameInteger(decoded, want, arg) {
			return fmt.Errorf("%s is %q; argument %s is %s", header, got, where, shortJSON(arg))
		}
	}
	return nil
}

// sameInteger: a number argument whose header names the same integer in
// another form ("42.0" for 42).
func sameInteger(header, want string, arg json.RawMessage) bool {
	if c := arg[0]; c != '-' && (c < '0' || c > '9') {
		return false
	}
	a, errA := strconv.ParseFloat(header, 64)
	b, errB := strconv.ParseFloat(want, 64)
	return errA == nil && errB == nil && a == b
}

// shortJSON is a value for an error message: whole when short.
func shortJSON(v json.RawMessage) string {
	if len(v) > 60 {
		return string(v[:57]) + "…"
	}
	return string(v)
}
