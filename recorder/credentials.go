package recorder

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// setUpstreamHeader puts the proxy's own headers (--header) on a request
// to the upstream, in place of any the client sent under those names.
// They are the proxy's, not the client's: the cassette keeps only what the
// client sent. (gorilla's dialer takes a Host header as the request's
// host; for net/http, setOwnHeader does that itself.)
func setUpstreamHeader(out, own http.Header) {
	for k, vs := range own {
		out[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
}

// UpstreamCredentials takes the user info out of an upstream URL
// (https://user:password@host/mcp) and returns it as the Basic
// Authorization header that own, the proxy's own headers, gains, as
// --header 'Authorization: Basic …' would set it; own's Authorization,
// when it has one, wins. Go's HTTP client sends user info so, but the
// proxy's own way upstream (plain http) writes none, and the WebSocket
// dialer refuses a URL that has one: a server that wanted the credentials
// got none, or no connection was made. u and own are not changed.
func UpstreamCredentials(u *url.URL, own http.Header) (*url.URL, http.Header) {
	if u.User == nil {
		return u, own
	}
	dial := *u
	dial.User = nil
	if own.Get("Authorization") != "" {
		return &dial, own
	}
	h := own.Clone()
	if h == nil {
		h = http.Header{}
	}
	password, _ := u.User.Password()
	h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+password)))
	return &dial, h
}

// setOwnHeader is setUpstreamHeader for an HTTP request, where Host is
// not a header but the request's own field (a server behind a tunnel or
// a virtual host may need it).
func (p *HTTPProxy) setOwnHeader(out *http.Request) {
	setUpstreamHeader(out.Header, p.Header)
	if host := out.Header.Get("Host"); host != "" {
		out.Host = host
		out.Header.Del("Host")
	}
}

// authHint tells the user once, on the first 401 from the upstream, how to
// record a server that wants credentials the client cannot get through
// the proxy. A client doing OAuth fetches the server's protected-resource
// metadata (RFC 9728), and a careful one (the TypeScript SDK) refuses it
// because its "resource" names the upstream URL, not the proxy's address
// the client was given. Rewriting that metadata would not help: the token
// would then be issued for the proxy's address, which the server must
// refuse. What works is giving mcpspy the token to add.
type authHint struct{ once sync.Once }

// check looks at an upstream answer; own is the proxy's Header, and logf
// its log.
func (a *authHint) check(resp *http.Response, upstream string, own http.Header, logf func(string, ...any)) {
	if resp.StatusCode != http.StatusUnauthorized || own.Get("Authorization") != "" {
		return
	}
	a.once.Do(func() {
		why := "it wants credentials"
		if strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata") {
			why = "it wants an OAuth token, and clients that check the server's resource metadata (RFC 9728) will not log in through the proxy's address"
		}
		logf("mcpspy: upstream %s answered 401: %s; to record it, give mcpspy a token: --header 'Authorization: Bearer …' (never recorded)", upstream, why)
	})
}
