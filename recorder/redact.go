package recorder

import (
	"strings"
	"unicode/utf8"

	"github.com/mcptape/mcptape/store"
)

// RedactCommandLine renders a server command line for the cassette with
// the credentials hidden that are hidden by default: see
// HTTPRedactor.CommandLine.
func RedactCommandLine(argv []string) string { return NewHTTPRedactor(nil).CommandLine(argv) }

// Redacted replaces a secret value; it is the store's placeholder.
const Redacted = store.Redacted

// IsSecretName says whether a header, query parameter or flag name usually
// carries a credential. It runs for every header of every recorded
// message, so ASCII names (all header names) are compared in place rather
// than lower-cased into a new string.
func IsSecretName(name string) bool {
	for _, s := range secretNames {
		if strings.EqualFold(name, s) {
			return true
		}
	}
	for _, w := range secretWords {
		if containsFold(name, w) {
			return true
		}
	}
	return false
}

// A password is as often part of a longer name (DB_PASSWORD, PGPASSWORD,
// --db-password, X-Password) as alone, so it is a word, not a name; so
// are a signed URL's credential and signature (X-Amz-Credential,
// X-Amz-Signature). "auth" stays a whole name, as a word it would take
// "author" too, and so do the short forms (pass, pw: --pw, ?pw=; sig, an
// Azure SAS URL's signature), which as words would take "bypass",
// "compass" or "signal".
var (
	secretNames = []string{"authorization", "proxy-authorization", "cookie", "set-cookie", "auth", "pass", "pw", "sig"}
	secretWords = []string{"token", "key", "secret", "password", "passwd", "credential", "signature"}
)

// containsFold reports whether s contains word (lower-case ASCII) in any
// case, as strings.Contains(strings.ToLower(s), word) would.
func containsFold(s, word string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf { // Unicode case folding: take the slow road
			return strings.Contains(strings.ToLower(s), word)
		}
	}
	for i := 0; i+len(word) <= len(s); i++ {
		if equalFoldASCII(s[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

// equalFoldASCII compares ASCII s with lower-case ASCII word.
func equalFoldASCII(s, word string) bool {
	for i := 0; i < len(word); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[i] {
			return false
		}
	}
	return true
}
