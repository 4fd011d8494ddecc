package store

import "strings"

// UpstreamURL is an HTTP session's upstream (SessionInfo.Upstream) in
// parts. It is split by hand: url.Parse refuses the user info
// "user:[redacted]" the recorder stores.
type UpstreamURL struct {
	Scheme string
	// Authority is the user info and host as recorded ("user:[redacted]@
	// host:port"); Host is what follows its last '@'.
	Authority, Host string
	// Path is the path and query, "" when there is none; the fragment is
	// cut.
	Path string
}

// ParseUpstream splits upstream into its parts; ok is false when it has no
// "://". It checks nothing more: callers say what they need.
func ParseUpstream(upstream string) (u UpstreamURL, ok bool) {
	scheme, rest, ok := strings.Cut(upstream, "://")
	if !ok {
		return UpstreamURL{}, false
	}
	u.Scheme, u.Authority = scheme, rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		u.Authority, u.Path = rest[:i], rest[i:]
	}
	u.Path, _, _ = strings.Cut(u.Path, "#")
	u.Host = u.Authority[strings.LastIndexByte(u.Authority, '@')+1:]
	return u, true
}
