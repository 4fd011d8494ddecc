package replay

import (
	"slices"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// Ignored members (Ignore, mcpmock serve --ignore): left out of every
// match key, recorded and live, so values a host makes up afresh each run
// do not stop a match.

// ignoredJSON stands in match keys for a member Ignore leaves out.
var ignoredJSON = []byte(`"(ignored)"`)

// blankIgnored returns key (method, NUL, canonical params) with the
// members named in ignore replaced by a placeholder; key itself when there
// is nothing to replace. Canonical params stay canonical: the placeholder
// is a plain string.
func blankIgnored(key []byte, method string, ignore []string) []byte {
	if len(ignore) == 0 || len(key) <= len(method)+1 {
		return key
	}
	canon := key[len(method)+1:]
	out, n, _ := jsonrpc.ReplaceMembers(canon, func(_ []string, name string) bool {
		return slices.Contains(ignore, name)
	}, ignoredJSON)
	if n == 0 {
		return key
	}
	return append(append(make([]byte, 0, len(method)+1+len(out)), key[:len(method)+1]...), out...)
}

// blankMembers returns v with the members named in names replaced by the
// placeholder; v itself when there are none.
func blankMembers(v []byte, names []string) []byte {
	if len(names) == 0 {
		return v
	}
	out, _, _ := jsonrpc.ReplaceMembers(v, func(_ []string, name string) bool {
		return slices.Contains(names, name)
	}, ignoredJSON)
	return out
}
