package recorder

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/store"
)

// HTTPRedactor hides credentials in what the recorders store outside the
// frames (FrameRedactor and ValuePatterns see to those): header values and
// query parameters whose names look secret
// (IsSecretName), plus any names added with --redact, and with Values the
// values that look secret whatever their name (--redact-value). The
// forwarded traffic is never touched; only the stored copy is. The zero
// value redacts the defaults; a nil *HTTPRedactor redacts nothing
// (--no-redact). Each session's upstream, a URL or a server's command line,
// goes through it too (URL, CommandLine), so that a secret hidden in the
// messages is not left in the session's info.
type HTTPRedactor struct {
	extra map[string]bool // lower-case names

	// Values, when set before the redactor is first used, also hides
	// every header value, query parameter value, URL path segment and
	// URL user name or password it matches.
	Values *ValuePatterns

	// known remembers the answer for each header or parameter name seen:
	// the same few names come with every request, and deciding costs a
	// dozen case-folding comparisons. Bounded by maxKnownNames, as names
	// come from clients.
	known  sync.Map // string → bool
	nKnown atomic.Int32
}

const maxKnownNames = 1024

// NewHTTPRedactor redacts the default names and the given extra ones
// (case-insensitive).
func NewHTTPRedactor(extra []string) *HTTPRedactor {
	r := &HTTPRedactor{extra: map[string]bool{}}
	for _, n := range extra {
		r.extra[strings.ToLower(n)] = true
	}
	return r
}

func (r *HTTPRedactor) secret(name string) bool {
	if r == nil {
		return false
	}
	if v, ok := r.known.Load(name); ok {
		return v.(bool)
	}
	secret := IsSecretName(name) || len(r.extra) > 0 && (r.extra[strings.ToLower(name)] || r.extra[strings.ToLower(paramHeaderArgument(name))])
	if r.nKnown.Load() < maxKnownNames {
		if _, loaded := r.known.LoadOrStore(name, secret); !loaded {
			r.nKnown.Add(1)
		}
	}
	return secret
}

// paramHeaderArgument is the argument an Mcp-Param-NAME header carries
// (2026-07-28: a tool input marked x-mcp-header travels in the body and in
// this header alike), so that --redact NAME hides both copies; "" for any
// other name.
func paramHeaderArgument(header string) string {
	const prefix = "mcp-param-"
	if len(header) > len(prefix) && strings.EqualFold(header[:len(prefix)], prefix) {
		return header[len(prefix):]
	}
	return ""
}

// values is r.Values, and none on a nil redactor (--no-redact).
func (r *HTTPRedactor) values() *ValuePatterns {
	if r == nil {
		return nil
	}
	return r.Values
}

// Header returns a copy of h with secret values replaced. The copy's
// values share one backing array: this runs for every recorded message.
func (r *HTTPRedactor) Header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	n := 0
	for _, vs := range h {
		n += len(vs)
	}
	out := make(http.Header, len(h))
	backing := make([]string, n)
	values := r.values()
	for k, vs := range h {
		secret := r.secret(k)
		if len(vs) == 0 && !secret {
			out[k] = nil // as a copy by append would be
			continue
		}
		dst := backing[:len(vs):len(vs)]
		backing = backing[len(vs):]
		if secret {
			for i := range dst {
				dst[i] = Redacted
			}
		} else {
			copy(dst, vs)
			values.blank(dst)
			r.headerURLs(dst)
		}
		out[k] = dst
	}
	return out
}

// headerURLs hides in each header value that is a URL (Referer, Location,
// Content-Location) what the upstream URL loses: its password and the
// query parameters named like credentials. A browser's Referer carries
// the page's query (an OAuth callback's ?access_token=…) into a HAR, and a
// redirect's Location may hold a signed URL.
func (r *HTTPRedactor) headerURLs(vs []string) {
	if r == nil {
		return
	}
	for i, v := range vs {
		if isBareURL(v) {
			vs[i] = r.StoredURL(v)
		}
	}
}

// isBareURL says whether a header value is an absolute URL and nothing
// else: a list of links (<…>; rel=next) or a sentence that names one is
// left as it is.
func isBareURL(v string) bool {
	scheme, _, ok := strings.Cut(v, "://")
	if !ok || scheme == "" || strings.ContainsAny(v, " \t<>\",") {
		return false
	}
	for i := 0; i < len(scheme); i++ {
		c := scheme[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// Query returns a raw query with secret values replaced. Order, encoding
// and unparseable pieces are kept as they were.
func (r *HTTPRedactor) Query(raw string) string {
	if r == nil || raw == "" {
		return raw
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		if un, err := url.QueryUnescape(name); err == nil {
			name = un
		}
		if !hasValue {
			continue
		}
		at := strings.IndexByte(p, '=') + 1
		if r.secret(name) || r.Values.escaped(p[at:], url.QueryUnescape) {
			parts[i] = p[:at] + Redacted
		}
	}
	return strings.Join(parts, "&")
}

// PathQuery renders a request target (path and query) for the cassette.
func (r *HTTPRedactor) PathQuery(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	p = r.values().path(p)
	if u.RawQuery != "" {
		p += "?" + r.Query(u.RawQuery)
	}
	return p
}

// URL renders a URL for the cassette with its password and secret query
// parameters hidden, and what Values match.
func (r *HTTPRedactor) URL(u *url.URL) string {
	c := *u
	if r != nil {
		if c.User != nil {
			name := c.User.Username()
			if r.Values.Match(name) { // a token given as the user (https://TOKEN@host)
				name = Redacted
			}
			if _, has := c.User.Password(); has {
				c.User = url.UserPassword(name, Redacted)
			} else if name == Redacted {
				c.User = url.User(name)
			}
		}
		if p := r.Values.path(c.EscapedPath()); p != c.EscapedPath() {
			c.Path, _ = url.PathUnescape(p) // unescapes: it came from EscapedPath
			c.RawPath = p
		}
		c.RawQuery = r.Query(c.RawQuery)
	}
	return c.String()
}

// StoredPath is PathQuery for a request target as a cassette holds it
// (HTTPMeta.Path, StreamPriming.Path): export redacts it again with the
// user's names and patterns. It works on the text, and changes no byte
// it does not hide.
func (r *HTTPRedactor) StoredPath(target string) string {
	path, query, hasQuery := strings.Cut(target, "?")
	path = r.values().path(path)
	if hasQuery {
		path += "?" + r.Query(query)
	}
	return path
}

// StoredURL is URL for a URL given as text: an upstream as a cassette
// holds it (SessionInfo.Upstream), which url.Parse may refuse (it refuses
// the user info "user:[redacted]"), or an argument of a server's command
// line. A string with no "://" is returned as it is.
func (r *HTTPRedactor) StoredURL(s string) string {
	rest, fragment, hasFragment := strings.Cut(s, "#")
	u, ok := store.ParseUpstream(rest)
	if r == nil || !ok {
		return s
	}
	auth := u.Authority
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		user, password, hasPassword := strings.Cut(auth[:at], ":")
		if r.Values.escaped(user, url.PathUnescape) { // a token given as the user (https://TOKEN@host)
			user = Redacted
		}
		if hasPassword {
			// URL writes its placeholder escaped; either form stays.
			if un, err := url.PathUnescape(password); err != nil || un != Redacted {
				password = Redacted
			}
			user += ":" + password
		}
		auth = user + auth[at:]
	}
	out := u.Scheme + "://" + auth + r.StoredPath(u.Path)
	if hasFragment {
		if r.Values.escaped(fragment, url.PathUnescape) {
			fragment = Redacted
		}
		out += "#" + fragment
	}
	return out
}

// CommandLine renders a server's command line for the cassette
// (SessionInfo.Upstream) with its secrets hidden: the value of a flag or
// NAME=VALUE word whose name looks like a credential (--api-key X,
// TOKEN=X) or is one of r's names (--redact tenant hides --tenant X), what
// StoredURL hides in a URL argument, and each argument Values match (of a
// NAME=VALUE word only the value, so that the line still says which
// option it was). Export takes a stored line apart at its spaces and
// hides the same again. A nil redactor hides nothing (--no-redact).
func (r *HTTPRedactor) CommandLine(argv []string) string {
	if r == nil {
		return strings.Join(argv, " ")
	}
	out := make([]string, len(argv))
	hideNext, afterHeaderName := false, false
	for i, a := range argv {
		if hideNext {
			if afterHeaderName && isAuthScheme(a) {
				// "Authorization: Bearer X" as a stored line taken apart
				// at its spaces: the scheme stays, the credential goes.
				out[i], afterHeaderName = a, false
				continue
			}
			out[i], hideNext, afterHeaderName = Redacted, false, false
			continue
		}
		if name, value, ok := r.secretHeaderArg(a); ok {
			// A header given to the server as one argument (mcp-remote's
			// --header 'Authorization: Bearer X', curl's -H), or its name
			// alone when a stored line was taken apart at its spaces.
			if strings.TrimSpace(value) == "" {
				out[i], hideNext, afterHeaderName = a, true, true
				continue
			}
			keep := value[:len(value)-len(strings.TrimLeft(value, " \t"))]
			if scheme, _, ok := strings.Cut(value[len(keep):], " "); ok && isAuthScheme(scheme) {
				keep += scheme + " "
			}
			out[i] = name + ":" + keep + Redacted
			continue
		}
		name, value, isPair := strings.Cut(a, "=")
		isPair = isPair && !strings.Contains(name, "://") // a URL's query is no NAME=VALUE
		flag := strings.TrimLeft(name, "-")
		switch {
		case isPair && r.secret(flag):
			a = name + "=" + Redacted
		case isPair:
			a = name + "=" + r.StoredURL(value) // --url=https://…
		case strings.HasPrefix(a, "-"):
			hideNext = r.secret(flag)
		default:
			a = r.StoredURL(a)
		}
		if r.Values.Match(a) {
			if name, value, ok := strings.Cut(a, "="); ok && !r.Values.Match(name) && r.Values.Match(value) {
				a = name + "=" + Redacted
			} else {
				a = Redacted
			}
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// secretHeaderArg splits a command-line argument that is an HTTP header
// ("NAME: VALUE", "NAME:VALUE", or "NAME:" whose value is the next word)
// whose name looks like a credential or is one of r's names.
func (r *HTTPRedactor) secretHeaderArg(a string) (name, value string, ok bool) {
	name, value, ok = strings.Cut(a, ":")
	if !ok || !mcphttp.IsToken(name) || !r.secret(name) {
		return "", "", false
	}
	return name, value, true
}

// isAuthScheme says whether a word is an HTTP authentication scheme that
// comes before the credential in an Authorization header's value.
func isAuthScheme(word string) bool {
	for _, s := range []string{"Bearer", "Basic", "Token", "Digest", "Negotiate", "DPoP"} {
		if strings.EqualFold(word, s) {
			return true
		}
	}
	return false
}
