package mcphttp

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// A server that refuses a POST with a bare 4xx or 5xx status may say more
// in its headers: when to try again, how to authenticate. mcpmock replays
// a recorded refusal's headers a client acts on, and a script's fault may
// give any header the HTTP layer or the session does not own.

// refusalHeaders are the response headers of a refusal a client acts on,
// in canonical form: Retry-After (429, 503), WWW-Authenticate (401, 403:
// an OAuth client reads its resource_metadata and scope), Allow (405),
// Accept-Encoding (415), and the rate-limit headers hosts read with a 429
// (the IETF RateLimit fields and the common X-RateLimit-* ones).
// Content-Type goes only with the body it describes.
var refusalHeaders = []string{
	"Retry-After", "Www-Authenticate", "Allow", "Accept-Encoding",
	"Ratelimit", "Ratelimit-Policy", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset",
}

// ownedHeaders are response headers a refusal never takes from a
// recording or a script: the HTTP server writes them (framing, the date),
// they belong to one connection (hop-by-hop, RFC 9110 7.6.1), the body is
// sent decoded, or the session owns them (Mcp-Session-Id is the live
// session's, and an expired one's is dropped).
var ownedHeaders = []string{
	"Content-Length", "Transfer-Encoding", "Content-Encoding", "Date",
	"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Upgrade",
	"Mcp-Session-Id",
}

// redacted is what a recording holds in place of a secret header value
// (store.Redacted, which this package does not import).
const redacted = "[redacted]"

// RefusalHeader returns the headers of a recorded refusal a replay sends
// with its status: those a client acts on (see refusalHeaders), plus
// Content-Type when withBody. A value the recorder redacted is left out,
// as if it had not been recorded: "[redacted]" would mislead a client
// more than no value (a WWW-Authenticate challenge it cannot parse).
// nil when none is left.
func RefusalHeader(recorded http.Header, withBody bool) http.Header {
	var out http.Header
	for k, vs := range recorded {
		ck := http.CanonicalHeaderKey(k)
		if !(withBody && ck == "Content-Type") && !slices.Contains(refusalHeaders, ck) {
			continue
		}
		for _, v := range vs {
			if v == redacted {
				continue
			}
			if out == nil {
				out = http.Header{}
			}
			out[ck] = append(out[ck], v)
		}
	}
	return out
}

// OwnedHeader says whether a refusal must not set the header name itself
// (see ownedHeaders).
func OwnedHeader(name string) bool {
	return slices.Contains(ownedHeaders, http.CanonicalHeaderKey(name))
}

// CheckRefusalHeader says what is wrong with a header a script gives a
// refusal, or nil: its name must be a token (RFC 9110), not one of the
// headers the server owns, and its value a field value (no control
// characters but tab).
func CheckRefusalHeader(name, value string) error {
	switch {
	case !IsToken(name):
		return fmt.Errorf("%q is not a header name (letters, digits and !#$%%&'*+-.^_`|~ only)", name)
	case OwnedHeader(name):
		return fmt.Errorf("%s is set by mcpmock, not by a fault (it owns %s)", http.CanonicalHeaderKey(name), strings.Join(ownedHeaders, ", "))
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < ' ' && c != '\t' || c == 0x7f {
			return fmt.Errorf("the value of %s holds a control character (%q)", http.CanonicalHeaderKey(name), c)
		}
	}
	return nil
}
