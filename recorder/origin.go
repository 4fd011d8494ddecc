package recorder

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// OriginPolicy decides which browser origins may use a proxy's listener.
// A web page on another site could otherwise reach the loopback listener
// (cross-site requests, DNS rebinding) and through it the upstream, with
// whatever the upstream trusts loopback for.
//
// Requests without an Origin header (every non-browser client) pass, and
// so do loopback origins (a local web client such as an inspector UI).
// Allowed adds origins ("https://app.example.com"); "*" allows any.
type OriginPolicy struct {
	Allowed []string
}

// Permits says whether r may be proxied.
func (o OriginPolicy) Permits(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || slices.Contains(o.Allowed, "*") || slices.Contains(o.Allowed, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// refuseOrigin answers a request from an origin the policy does not allow:
// 403, with a JSON-RPC error body that says how to allow it.
func refuseOrigin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	msg := "mcpspy: requests from origin " + r.Header.Get("Origin") + " are not proxied (mcpspy record --allow-origin ORIGIN permits one)"
	_, _ = w.Write(rpcErrorBody("null", -32600, msg))
}
