package fallback

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcptape/mcptape/replay"
)

// The handshake-era lifecycle with the real server: mcpmock's own
// initialize, or the live client's passed on, and notifications/initialized
// after it.

// initialize performs the handshake once: the live session's protocol
// version, the live client's capabilities, and mcpmock as clientInfo.
//
// What the server notifies in answer to it is not passed on: the live
// client's own handshake was answered from the recording, with what
// followed it there, and did not cause this one (server-everything sends
// notifications/tools/list_changed right after initialized). So
// notifications are held back until the server has answered a ping sent
// after notifications/initialized: a server takes a session's messages in
// order, and what it sends in reaction to initialized it sends before
// that answer. What later requests cause goes to the client as before.
func (u *upstream) initialize(ctx context.Context, peer replay.Peer) error {
	u.initMu.Lock()
	defer u.initMu.Unlock()
	if u.inited {
		return nil
	}
	if u.initErr != nil {
		return u.initErr
	}
	u.handshaking.Store(true)
	defer u.handshaking.Store(false)
	version := peer.ProtocolVersion()
	if version == "" {
		version = latestVersion
	}
	params, _ := json.Marshal(map[string]any{
		"protocolVersion": version,
		"capabilities":    clientCapabilities(peer),
		"clientInfo":      map[string]string{"name": "mcpmock", "version": Version},
	})
	hctx, cancel := context.WithTimeout(ctx, u.src.opts.StartTimeout)
	defer cancel()
	r, err := u.forward(hctx, peer, &replay.Request{Method: "initialize", Params: params}, nil)
	switch {
	case ctx.Err() != nil:
		return ctx.Err() // the client gave up: a later request tries again
	case hctx.Err() != nil:
		err = fmt.Errorf("no answer to initialize within %s", u.src.opts.StartTimeout)
	case err != nil:
		err = fmt.Errorf("initialize: %w", err)
	case r.Error != nil:
		err = fmt.Errorf("it refused initialize: %d %s", r.Error.Code, r.Error.Message)
	}
	if err != nil {
		u.initErr = err
		return err
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(r.Result, &res)
	if res.ProtocolVersion != "" && res.ProtocolVersion != version {
		u.src.warnf("the live session speaks %s; %s answered %s", version, u.src.target, res.ProtocolVersion)
	}
	if err := u.conn.send(notification("notifications/initialized", nil)); err != nil {
		u.initErr = fmt.Errorf("notifications/initialized: %w", err)
		return u.initErr
	}
	u.inited = true
	u.ownHandshake.Store(true)
	// A server that does not answer ping holds the request up helloWait
	// at most.
	pctx, cancel := context.WithTimeout(ctx, helloWait)
	defer cancel()
	_, _ = u.forward(pctx, peer, &replay.Request{Method: "ping"}, nil)
	return nil
}

// liveInitialize passes the live client's own initialize to the server
// (replay.LiveHandshaker): the server's answer, a refusal included, is the
// client's. Once it succeeded the session needs no handshake of mcpmock's,
// and the client's notifications/initialized goes to the server.
func (u *upstream) liveInitialize(ctx context.Context, peer replay.Peer, req *replay.Request) (replay.Reply, error) {
	u.initMu.Lock()
	defer u.initMu.Unlock()
	if u.initErr != nil {
		return replay.Reply{}, u.initErr
	}
	r, err := u.forwardFirst(ctx, peer, req)
	if err != nil || r.Error != nil || u.inited {
		return r, err
	}
	u.inited = true
	u.helloSent = make(chan struct{})
	u.clientHello.Store(true)
	return r, nil
}

// forwardFirst forwards a request that opens the live session (the live
// client's initialize or server/discover), bounded by StartTimeout: a
// server that does not answer it is not going to.
func (u *upstream) forwardFirst(ctx context.Context, peer replay.Peer, req *replay.Request) (replay.Reply, error) {
	hctx, cancel := context.WithTimeout(ctx, u.src.opts.StartTimeout)
	defer cancel()
	r, err := u.forward(hctx, peer, req, passed(peer))
	switch {
	case ctx.Err() != nil:
		return replay.Reply{}, ctx.Err()
	case hctx.Err() != nil:
		return replay.Reply{}, fmt.Errorf("no answer to %s within %s", req.Method, u.src.opts.StartTimeout)
	}
	return r, err
}

// helloWait bounds how long a request waits for the client's
// notifications/initialized before the fallback sends one in its place (a
// client that never sends it, or whose notification an earlier source
// took).
const helloWait = 2 * time.Second

// passInitialized passes the client's notifications/initialized on, once,
// after a live handshake; it reports whether it did. A client that sends
// it before it has the answer to initialize waits here for that answer.
func (u *upstream) passInitialized(params json.RawMessage) bool {
	u.initMu.Lock()
	pending := u.clientHello.Swap(false)
	u.initMu.Unlock()
	if !pending {
		return false
	}
	_ = u.conn.send(notification("notifications/initialized", params))
	u.helloSentOnce.Do(func() { close(u.helloSent) })
	return true
}

// awaitInitialized holds a request until the client's
// notifications/initialized has gone to the server, after a live
// handshake; past helloWait it sends one itself.
func (u *upstream) awaitInitialized(ctx context.Context) {
	u.initMu.Lock()
	sent := u.helloSent
	u.initMu.Unlock()
	if sent == nil {
		return
	}
	t := time.NewTimer(helloWait)
	defer t.Stop()
	select {
	case <-sent:
	case <-ctx.Done():
	case <-t.C:
		u.passInitialized(nil)
	}
}

// clientCapabilities are those the live client declared in its
// initialize, so that the real server asks it what it would ask it (roots,
// sampling); none when it is not known.
func clientCapabilities(peer replay.Peer) json.RawMessage {
	h, ok := peer.(replay.ClientHello)
	if !ok {
		return json.RawMessage(`{}`)
	}
	var p struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(h.ClientHello(), &p) != nil || len(p.Capabilities) == 0 || p.Capabilities[0] != '{' {
		return json.RawMessage(`{}`)
	}
	return p.Capabilities
}
