package recorder

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/mcptape/mcptape/store"
)

// RedactCommandLine renders a server command line for the cassette with
// secrets hidden: the value of any flag or NAME=VALUE word whose name looks
// like a credential, and passwords in URLs.
func RedactCommandLine(argv []string) string {
	out := make([]string, len(argv))
	hideNext := false
	for i, a := range argv {
		switch {
		case hideNext:
			out[i] = Redacted
			hideNext = false
			continue
		case strings.HasPrefix(a, "-") && !strings.Contains(a, "="):
			hideNext = IsSecretName(strings.TrimLeft(a, "-"))
		case strings.Contains(a, "="):
			name, _, _ := strings.Cut(a, "=")
			if IsSecretName(strings.TrimLeft(name, "-")) {
				a = name + "=" + Redacted
			}
		}
		out[i] = redactURLPassword(a)
	}
	return strings.Join(out, " ")
}

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

var (
	secretNames = []string{"authorization", "proxy-authorization", "cookie", "set-cookie", "password", "passwd", "auth"}
	secretWords = []string{"token", "key", "secret"}
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

func redactURLPassword(s string) string {
	if !strings.Contains(s, "://") || !strings.Contains(s, "@") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), Redacted)
	}
	return u.String()
}
