package rerun

import (
	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// Multi round-trip requests (2026-07-28, SEP-2322): a server that needs
// input answers a call with resultType input_required and an opaque
// requestState, and the client sends the call again with the input and
// that requestState. A server may put anything in the state: a signature,
// a time, a key of its own run. The recorded retry carries the state the
// recorded server gave; sent as it stands to today's server it would be
// refused as stale, and every such call would show as changed. So the
// rerun sends a retry with the state the live server gave in its place,
// as a live client would; it changes nothing else of the frame, and
// nothing when the live server gave the same state or none.

// requestStateOf is the raw requestState of a frame's result (what an
// input_required answer gives), or of its params (what a retry echoes);
// nil when it has none.
func requestStateOf(frame []byte, member string) []byte {
	var state []byte
	jsonrpc.RawMembers(frame, func(key, value []byte) {
		if string(key) != `"`+member+`"` {
			return
		}
		jsonrpc.RawMembers(value, func(key, value []byte) {
			if string(key) == `"requestState"` {
				state = value
			}
		})
	})
	return state
}

// inputRequired reports whether an answer asks the client for input.
func inputRequired(frame []byte) bool { return jsonrpc.Classify(frame).InputRequired }

// withRequestState returns frame with params.requestState set to state,
// every other byte as it was.
func withRequestState(frame, state []byte) []byte {
	out, _, _ := jsonrpc.ReplaceMembers(frame, func(path []string, name string) bool {
		return len(path) == 1 && path[0] == "params" && name == "requestState"
	}, state)
	return out
}

// noteLiveState keeps the requestState of a live answer to a request whose
// recorded answer gave one, for the retries that echo it.
func (d *driver) noteLiveState(id string, frame []byte) {
	recorded, ok := d.gaveState[id]
	if !ok {
		return
	}
	delete(d.gaveState, id)
	if live := requestStateOf(frame, "result"); live != nil {
		d.liveState[string(recorded)] = live
	}
}

// retryFrame is what to send for st: its recorded frame, with the live
// server's requestState when st is a retry the live server gave a state
// for.
func (d *driver) retryFrame(st *step) []byte {
	if st.echoesState == nil {
		return st.frame
	}
	d.mu.Lock()
	live := d.liveState[string(st.echoesState)]
	d.mu.Unlock()
	if live == nil || string(live) == string(st.echoesState) {
		return st.frame
	}
	return withRequestState(st.frame, live)
}
