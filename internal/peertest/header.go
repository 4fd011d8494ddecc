package peertest

import "net/http"

// HeaderTransport sets one header on every request, as a host with its own
// credentials does, and sends it by http.DefaultTransport. The caller's
// request is left as it was.
type HeaderTransport struct{ Name, Value string }

func (h HeaderTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.Name, h.Value)
	return http.DefaultTransport.RoundTrip(r)
}
