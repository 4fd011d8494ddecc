package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// recordNet records an HTTP or WebSocket upstream (o.upstream) behind a
// listener on o.listen until ctx ends.
func recordNet(ctx context.Context, s streams, o *recordOptions) (err error) {
	up, err := cli.Upstream("record", o.upstream)
	if err != nil {
		return err
	}
	scheme := strings.ToLower(up.Scheme)
	red, err := httpRedactor("record", o.redact, o.redactValue, o.values, o.noRedact)
	if err != nil {
		return err
	}
	header, err := cli.Headers("record", o.headers) // checked by parseRecord
	if err != nil {
		return err
	}
	// The session's info keeps up, its password redacted; the proxies
	// dial without user info and send it as a header.
	dial, header := recorder.UpstreamCredentials(up, header)
	// Errors name the upstream as the cassette would, whatever
	// --no-redact says: stderr ends up in CI logs and bug reports.
	shown := red
	if shown == nil {
		shown = recorder.NewHTTPRedactor(nil)
	}
	transport := recorder.NewUpstreamTransport(o.insecure)
	if err := probeUpstream(ctx, dial, shown.URL(up), transport); err != nil {
		return err
	}

	ln, err := cli.Listen(o.listen)
	if err != nil {
		return err
	}
	w, err := newWriter(s, o)
	if err != nil {
		ln.Close()
		return err
	}
	defer func() {
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}()
	info := store.SessionInfo{Name: o.session, Upstream: red.URL(up), Recorder: version}
	var serve func(context.Context, net.Listener) error
	proto := "http"
	if scheme == "ws" || scheme == "wss" {
		proto = "ws"
		p := &recorder.WSProxy{Upstream: dial, Writer: w, Info: info, Redact: red, Insecure: o.insecure, Log: s.Err, Header: header,
			Origins: recorder.OriginPolicy{Allowed: o.origins}}
		serve = p.Serve
	} else {
		p := &recorder.HTTPProxy{Upstream: dial, Writer: w, Info: info, Redact: red, Log: s.Err, Header: header,
			Origins: recorder.OriginPolicy{Allowed: o.origins}}
		if scheme == "https" { // plain http goes over the proxy's own per-connection way
			p.Transport = transport
		}
		serve = p.Serve
	}
	limitProcsForProxy()
	// One line, as DESIGN.md promises scripts: a URL that works here
	// (not http://[::]:PORT for a bind to every interface).
	addr, _ := cli.ReachableAddr(o.listen, ln.Addr())
	fmt.Fprintf(s.Err, "mcpspy: listening on %s://%s\n", proto, addr)
	return serve(ctx, ln)
}

// probeUpstream checks once, before listening, that the upstream speaks
// HTTP, so that a wrong port fails at once with one clear line instead of
// a 502 per request later. OPTIONS has no side effects on MCP servers (a
// GET would open a stream, a HEAD on a legacy /sse route a session). An
// upstream that is down is not an error: it may start later, and clients
// get a 502 naming it meanwhile.
func probeUpstream(ctx context.Context, up *url.URL, shown string, rt http.RoundTripper) error {
	u := *up
	switch strings.ToLower(u.Scheme) {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if u.Scheme == "http" {
		return probePlainHTTP(ctx, &u, shown)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, u.String(), nil)
	if err != nil {
		return usageErrorf("record: --upstream %q: %v", shown, err)
	}
	resp, err := rt.RoundTrip(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		return nil
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return nil // down for now; see above
	}
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) {
		return fmt.Errorf("upstream %s: certificate not trusted: %v (--insecure skips the check)", shown, certErr.Err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("upstream %s does not answer HTTP (no response within 5s); is it an MCP server over HTTP?", shown)
	}
	return fmt.Errorf("upstream %s does not speak HTTP: %v", shown, err)
}

// probePlainHTTP sends the OPTIONS probe over a bare connection and reads
// the status line itself. net/http's transport would log an "unsolicited
// response" line for a server that speaks first (SSH, SMTP) and report a
// garbled error; this way the user gets one line saying what answered.
func probePlainHTTP(ctx context.Context, u *url.URL, shown string) error {
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil // down for now: clients get a 502 per request until it is up
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	if _, err := fmt.Fprintf(conn, "OPTIONS %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", u.RequestURI(), u.Host); err != nil {
		return fmt.Errorf("upstream %s closed the connection before an HTTP request could be sent", shown)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	switch {
	case strings.HasPrefix(line, "HTTP/"):
		return nil
	case line == "" && errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("upstream %s does not answer HTTP (no response within 5s); is it an MCP server over HTTP?", shown)
	case line == "":
		return fmt.Errorf("upstream %s does not speak HTTP: it closed the connection without a response", shown)
	}
	if len(line) > 40 {
		line = line[:40] + "…"
	}
	return fmt.Errorf("upstream %s does not speak HTTP: it answered %q", shown, strings.TrimSpace(line))
}

// limitProcsForProxy gives the network proxy half the cores (at least
// one) unless GOMAXPROCS is set. The proxy is all reads and writes on the
// netpoller; with a P per core, every wake-up also wakes idle threads to
// look for work, and on a small machine that CPU is taken from the client
// and server mcpspy sits between. On 2 cores, one P cut mcpspy's CPU per
// Streamable HTTP round trip by about a quarter (BenchmarkHTTPRoundTrip).
// Not for stdio: there the copy loops block in read(2) on pipes, and with
// one P each handoff waits for the scheduler's monitor (the stdio
// benchmark fell from 0.82 to 0.58 of direct).
func limitProcsForProxy() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(max(1, runtime.NumCPU()/2))
	}
}
