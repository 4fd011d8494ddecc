package recorder

import (
	"bytes"
	"net/url"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/sse"
)

// legacyEndpoint reads the endpoint event of a 2024-11-05 SSE stream. It
// returns the upstream endpoint's key, under which the client's POSTs are
// attributed to this connection's session, and the event rewritten to point
// at the proxy when the server sent an absolute URI on the upstream (nil
// when the event passes unchanged). A relative URI needs no rewrite: the
// client resolves it against the proxy URL it used.
func (x *exchange) legacyEndpoint(ev sse.Event) (key string, rewritten []byte) {
	data := strings.TrimSpace(string(ev.Data))
	ref, err := url.Parse(data)
	if err != nil {
		return "", nil
	}
	abs := x.target.ResolveReference(ref)
	up := x.p.Upstream
	if !strings.EqualFold(abs.Host, up.Host) || abs.Scheme != up.Scheme {
		return "", nil // it points elsewhere; the client goes there directly
	}
	key = endpointKey(abs)
	if !ref.IsAbs() {
		return key, nil
	}
	proxied := url.URL{Scheme: "http", Host: x.r.Host, Path: abs.Path, RawPath: abs.RawPath, RawQuery: abs.RawQuery, Fragment: abs.Fragment, RawFragment: abs.RawFragment}
	if x.r.TLS != nil {
		proxied.Scheme = "https"
	}
	// Only the data value changes; ids, comments and line ends stay.
	i := bytes.Index(ev.Raw, []byte(data))
	if i < 0 {
		// Spread over several data lines: it cannot be replaced in place.
		x.p.logf("mcpspy: the endpoint event on %s spans several data lines and is not rewritten: the client may post past the proxy", x.base.Path)
		return key, nil
	}
	return key, slices.Concat(ev.Raw[:i], []byte(proxied.String()), ev.Raw[i+len(data):])
}
