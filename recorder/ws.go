package recorder

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/mcptape/mcptape/store"
)

// WSProxy is a recording proxy for an MCP server over WebSocket (the TS
// SDK's WebSocketClientTransport: subprotocol "mcp", one JSON-RPC message
// per text frame).
//
// Each client connection is dialled through to the upstream first, so the
// subprotocol the upstream picks is the one the client gets, and a refused
// handshake reaches the client as the upstream's own status. Frames pass
// one to one, pings and pongs included; close frames pass through with
// their code, which the session's end records.
//
// Per connection there are exactly two goroutines: client→upstream (the
// client's only reader and the upstream's only writer) and the reverse.
// Control frames go through WriteControl, which gorilla allows alongside.
type WSProxy struct {
	Upstream *url.URL
	Writer   *store.Writer
	Info     store.SessionInfo // template: Name, Upstream, Recorder
	Redact   *HTTPRedactor
	Insecure bool
	Log      io.Writer
	// Origins says which browser origins may use the listener.
	Origins OriginPolicy
	// Header is set on the handshake with the upstream, in place of any
	// the client sent under those names (see HTTPProxy.Header). It is
	// never recorded.
	Header http.Header
	// CloseWait bounds how long a side may take to answer a close frame
	// before its connection is dropped. Default 5 s.
	CloseWait time.Duration

	mu       sync.Mutex
	conns    map[*wsPair]bool
	gate     shutdownGate
	authHint authHint
}

type wsPair struct {
	client, upstream *websocket.Conn
}

// Serve answers on ln until ctx ends, then drops every connection, waits
// for them and returns.
func (p *WSProxy) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	err := serveUntil(ctx, srv, ln, func() {
		p.gate.close()
		p.mu.Lock()
		for c := range p.conns {
			c.client.NetConn().Close()
			c.upstream.NetConn().Close()
		}
		p.mu.Unlock()
	})
	p.gate.wait()
	return err
}

func (p *WSProxy) target(in *url.URL) *url.URL { return upstreamURL(p.Upstream, in) }

// wsHandshakeHeaders are made by the dialer itself.
var wsHandshakeHeaders = []string{"Upgrade", "Connection", "Sec-Websocket-Key", "Sec-Websocket-Version",
	"Sec-Websocket-Extensions", "Sec-Websocket-Protocol"}

// ServeHTTP proxies one WebSocket connection.
func (p *WSProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.gate.enter(w) {
		return
	}
	defer p.gate.leave()
	if !p.Origins.Permits(r) { // before the upstream is dialled
		refuseOrigin(w, r)
		return
	}

	target := p.target(r.URL)
	if !websocket.IsWebSocketUpgrade(r) {
		http.Error(w, "mcpspy: this address proxies WebSocket connections to "+p.Info.Upstream+"; connect with a WebSocket client", http.StatusBadRequest)
		return
	}
	hdr := r.Header.Clone()
	for _, k := range wsHandshakeHeaders {
		hdr.Del(k)
	}
	setUpstreamHeader(hdr, p.Header)
	dialer := &websocket.Dialer{
		Subprotocols:     websocket.Subprotocols(r),
		HandshakeTimeout: 30 * time.Second,
		Proxy:            http.ProxyFromEnvironment,
	}
	if p.Insecure {
		dialer.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // explicit --insecure
	}
	up, resp, err := dialer.DialContext(r.Context(), target.String(), hdr)
	if err != nil {
		if resp != nil { // the upstream refused the handshake: pass its answer on
			p.authHint.check(resp, p.Info.Upstream, p.Header, func(format string, a ...any) {
				if p.Log != nil {
					fmt.Fprintf(p.Log, format+"\n", a...)
				}
			})
			copyHeader(w.Header(), resp.Header)
			w.WriteHeader(resp.StatusCode)
			if resp.Body != nil {
				_, _ = io.Copy(w, resp.Body)
				resp.Body.Close()
			}
			return
		}
		hp := &HTTPProxy{Info: p.Info, Log: p.Log}
		hp.badGateway(w, nil, err, nil)
		return
	}
	respHdr := http.Header{}
	if sp := up.Subprotocol(); sp != "" {
		respHdr.Set("Sec-Websocket-Protocol", sp)
	}
	upgrader := websocket.Upgrader{
		// Checked above; the Origin header is also passed on for the
		// upstream to judge, as it would without mcpspy in between.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	cl, err := upgrader.Upgrade(w, r, respHdr)
	if err != nil {
		up.Close()
		return // Upgrade has answered the client
	}
	pair := &wsPair{client: cl, upstream: up}
	p.mu.Lock()
	if p.conns == nil {
		p.conns = map[*wsPair]bool{}
	}
	p.conns[pair] = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, pair)
		p.mu.Unlock()
		cl.Close()
		up.Close()
	}()

	info := p.Info
	info.Transport = store.TransportWebSocket
	sess, err := p.Writer.StartSession(info) // no wait for the file before pumping
	if err != nil {
		if p.Log != nil {
			io.WriteString(p.Log, "mcpspy: cannot record a new session: "+err.Error()+" (traffic still flows)\n")
		}
	}
	base := store.HTTPMeta{Method: r.Method, Path: p.Redact.PathQuery(target), Status: http.StatusSwitchingProtocols,
		RequestHeader: p.Redact.Header(r.Header), ResponseHeader: p.Redact.Header(resp.Header), Stream: store.StreamWS}
	end := p.pump(pair, sess, base)
	if sess != nil {
		// Not End: the deferred close of both connections, which a client
		// waits for after the close handshake, must not wait for a commit.
		sess.Finish(end)
	}
}

// pump runs both directions and says how the connection ended: the first
// close frame's code, or 1006 when a side dropped without one.
func (p *WSProxy) pump(pair *wsPair, sess *store.Session, base store.HTTPMeta) store.EndInfo {
	wait := p.CloseWait
	if wait <= 0 {
		wait = 5 * time.Second
	}
	var once sync.Once
	var end store.EndInfo
	setEnd := func(e store.EndInfo) { once.Do(func() { end = e }) }

	relayControl := func(from, to *websocket.Conn) {
		from.SetPingHandler(func(data string) error {
			return ignoreClosed(to.WriteControl(websocket.PingMessage, []byte(data), time.Now().Add(wait)))
		})
		from.SetPongHandler(func(data string) error {
			return ignoreClosed(to.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(wait)))
		})
		// The reply to a close comes from the other peer, not from us.
		from.SetCloseHandler(func(int, string) error { return nil })
	}
	relayControl(pair.client, pair.upstream)
	relayControl(pair.upstream, pair.client)

	var wg sync.WaitGroup
	run := func(from, to *websocket.Conn, dir store.Dir) {
		defer wg.Done()
		for {
			mt, data, err := readWSMessage(from, func() { waitBacklog(sess) })
			if err != nil {
				var ce *websocket.CloseError
				if errors.As(err, &ce) && (ce.Code == websocket.CloseAbnormalClosure || ce.Code == websocket.CloseTLSHandshake) {
					// gorilla's report of a connection that ended with no
					// close frame. RFC 6455 (7.4.1) reserves these codes
					// for such reports: never sent in a frame, so the
					// other side's connection is dropped alike.
					setEnd(store.EndInfo{Reason: store.EndClosed, CloseCode: ce.Code, Error: ce.Text})
					to.NetConn().Close()
					return
				}
				if errors.As(err, &ce) {
					setEnd(store.EndInfo{Reason: store.EndClosed, CloseCode: ce.Code})
					msg := []byte{}
					if ce.Code != websocket.CloseNoStatusReceived {
						msg = websocket.FormatCloseMessage(ce.Code, ce.Text)
					}
					_ = to.WriteControl(websocket.CloseMessage, msg, time.Now().Add(wait))
					// The other side should answer with its close; if it
					// does not, drop it.
					_ = to.NetConn().SetReadDeadline(time.Now().Add(wait))
					return
				}
				if p.gate.closed() {
					setEnd(interrupted)
				} else {
					setEnd(store.EndInfo{Reason: store.EndClosed, CloseCode: websocket.CloseAbnormalClosure, Error: err.Error()})
				}
				to.NetConn().Close()
				return
			}
			if sess != nil {
				m := base
				m.WSOpcode = mt
				sess.Append(dir, time.Now(), data, &m)
			}
			if err := to.WriteMessage(mt, data); err != nil {
				from.NetConn().Close()
				return
			}
		}
	}
	wg.Add(2)
	go run(pair.client, pair.upstream, store.C2S)
	go run(pair.upstream, pair.client, store.S2C)
	wg.Wait()
	return end
}

// readWSMessage reads the next data message as ReadMessage does, but
// runs beforeLong (a wait for the store: waitBacklog) before it reads on
// into a long one, and fits the message exactly (readGrowing).
func readWSMessage(c *websocket.Conn, beforeLong func()) (int, []byte, error) {
	mt, r, err := c.NextReader()
	if err != nil {
		return mt, nil, err
	}
	data, err := readGrowing(r, math.MaxInt64, beforeLong)
	return mt, data, err
}

func ignoreClosed(err error) error {
	if errors.Is(err, websocket.ErrCloseSent) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
