package recorder

import (
	"net/url"
	"strings"
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

// Redacted replaces a secret value.
const Redacted = "[redacted]"

// IsSecretName says whether a header, query parameter or flag name usually
// carries a credential.
func IsSecretName(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie", "password", "passwd", "auth":
		return true
	}
	for _, w := range []string{"token", "key", "secret"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
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
