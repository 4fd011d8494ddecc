package peertest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// RawHTTP is a Streamable HTTP client that posts frames as they are
// written (a batch, a malformed body, headers no SDK client sends), for
// tests of what is on the wire. Each request carries the headers every
// client sends and, once set, SessionID as Mcp-Session-Id.
type RawHTTP struct {
	T         testing.TB
	URL       string
	SessionID string
}

// Do sends body (none for "") with method and returns the response, for
// the caller to read and close. hdr sets more headers; a value of ""
// deletes one the client would send.
func (c *RawHTTP) Do(method, body string, hdr map[string]string) *http.Response {
	c.T.Helper()
	req, err := http.NewRequest(method, c.URL, strings.NewReader(body))
	if err != nil {
		c.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.SessionID != "" {
		req.Header.Set("Mcp-Session-Id", c.SessionID)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	return resp
}

// Exchange sends body with method, fails the test unless the answer has
// status, and returns the whole answer: an event stream is read to its
// end. It keeps the Mcp-Session-Id the answer gives.
func (c *RawHTTP) Exchange(method, body string, status int) string {
	c.T.Helper()
	resp := c.Do(method, body, nil)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		c.T.Fatal(err)
	}
	if resp.StatusCode != status {
		c.T.Fatalf("%s %s: %d %s, want %d", method, body, resp.StatusCode, got, status)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		c.SessionID = sid
	}
	return string(got)
}
