package store

import (
	"bytes"
	"encoding/json"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// Unbatched returns msgs with each JSON-RPC batch (a frame that is a JSON
// array; protocol 2025-03-26 only) replaced by its elements, in order:
// one Message per element, sharing the batch's session, seq, direction,
// time, HTTP metadata and note. A reader that pairs requests with answers
// (replay's matcher, diff) then sees a batch's requests and its array of
// answers as the messages they carry, however the server sent them back
// (as one array, or, as server-everything does over HTTP, one SSE event
// each). msgs itself is returned, unchanged, when it holds no batch, as
// nearly every recording does; the cassette is never altered. An empty
// batch (an invalid request) and an element that is not an object stay as
// they are, for the reader to skip as it skips any frame it cannot use.
func Unbatched(msgs []*Message) []*Message {
	first := -1
	for i, m := range msgs {
		if isBatch(m.Frame) {
			first = i
			break
		}
	}
	if first < 0 {
		return msgs
	}
	out := make([]*Message, first, len(msgs)+8)
	copy(out, msgs[:first])
	for _, m := range msgs[first:] {
		var elems []json.RawMessage
		if !isBatch(m.Frame) || json.Unmarshal(m.Frame, &elems) != nil || len(elems) == 0 {
			out = append(out, m)
			continue
		}
		for _, el := range elems {
			out = append(out, &Message{
				Session: m.Session, Seq: m.Seq, Dir: m.Dir, Time: m.Time,
				Frame: bytes.TrimSpace(el), HTTP: m.HTTP, Note: m.Note,
			})
		}
	}
	return out
}

// isBatch says whether frame looks like a batch: its first byte past any
// white space opens an array. Classify has the last word on whether it is
// valid JSON; this is the quick test every frame of a recording takes.
func isBatch(frame []byte) bool {
	i := 0
	for i < len(frame) && (frame[i] == ' ' || frame[i] == '\t' || frame[i] == '\n' || frame[i] == '\r') {
		i++
	}
	return i < len(frame) && frame[i] == '[' && jsonrpc.Classify(frame).Kind == jsonrpc.Batch
}
