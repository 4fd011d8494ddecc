package script

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcptape/mcptape/replay"
)

// The 2026-07-28 era has no session-level stream: change notifications
// travel on the long-lived answer to subscriptions/listen.

// listener is an open 2026-07-28 subscriptions/listen stream. It is
// registered when the request arrives, before its stream is live (the
// engine prepares requests in arrival order and plays them later), so
// what is fired in between waits in pending until attach.
type listener struct {
	id                        json.RawMessage
	tools, resources, prompts bool

	mu      sync.Mutex
	peer    replay.Peer // nil until attach
	pending []string
}

func (l *listener) notify(method string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.peer == nil {
		l.pending = append(l.pending, method)
		return
	}
	_ = l.peer.Notify(method, mustJSON(map[string]any{"_meta": map[string]any{metaSubscription: l.id}}))
}

// attach makes the stream live and sends what waited for it.
func (l *listener) attach(peer replay.Peer) {
	l.mu.Lock()
	l.peer = peer
	pending := l.pending
	l.pending = nil
	l.mu.Unlock()
	for _, m := range pending {
		l.notify(m)
	}
}

func (ss *session) listen(ctx context.Context, peer replay.Peer, c *call) replay.Reply {
	l, agreed := ss.subscribe(c)
	return ss.serveListen(ctx, peer, l, agreed)
}

// subscribe registers a listen request's listener, if it agreed to any
// notification, so that events fired by later requests reach it.
func (ss *session) subscribe(c *call) (*listener, map[string]any) {
	var p struct {
		Notifications struct {
			Tools     bool `json:"toolsListChanged"`
			Prompts   bool `json:"promptsListChanged"`
			Resources bool `json:"resourcesListChanged"`
		} `json:"notifications"`
	}
	_ = json.Unmarshal(c.req.Params, &p)
	lc := ss.s.listChanged
	l := &listener{id: c.req.ID,
		tools: p.Notifications.Tools && lc.tools, prompts: p.Notifications.Prompts && lc.prompts,
		resources: p.Notifications.Resources && lc.resources}
	agreed := map[string]any{}
	for k, v := range map[string]bool{"toolsListChanged": l.tools, "promptsListChanged": l.prompts, "resourcesListChanged": l.resources} {
		if v {
			agreed[k] = true
		}
	}
	if len(agreed) > 0 {
		ss.mu.Lock()
		ss.listeners[l] = struct{}{}
		ss.mu.Unlock()
	}
	return l, agreed
}

// serveListen acknowledges the subscription, then holds the stream open
// until the client cancels it.
func (ss *session) serveListen(ctx context.Context, peer replay.Peer, l *listener, agreed map[string]any) replay.Reply {
	meta := map[string]any{metaSubscription: l.id}
	_ = peer.Notify("notifications/subscriptions/acknowledged", mustJSON(map[string]any{"notifications": agreed, "_meta": meta}))
	l.attach(peer)
	if len(agreed) > 0 {
		<-ctx.Done()
		ss.mu.Lock()
		delete(ss.listeners, l)
		ss.mu.Unlock()
	}
	return resultReply(map[string]any{"_meta": meta})
}
