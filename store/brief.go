package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// HTTPBrief is what a filter, or the inspector telling what a frame is,
// reads of a message's HTTPMeta: its status, its stream and its SSE event
// type. Reading it from a record skips the headers, whose decoding costs
// several times more than the rest.
type HTTPBrief struct {
	Status int    // 0 when none was recorded
	Stream string // one of the Stream constants; "" without HTTPMeta
	// EventType is the type of the SSE event that carried the frame
	// ("message", "endpoint": a 2024-11-05 stream's first event, which
	// names the URI to POST to); "" for none.
	EventType string
}

// Brief returns h's HTTPBrief, the zero one for nil (a stdio message).
func (h *HTTPMeta) Brief() HTTPBrief {
	if h == nil {
		return HTTPBrief{}
	}
	return HTTPBrief{Status: h.Status, Stream: h.Stream, EventType: h.EventType}
}

// HTTPBriefs calls fn with the HTTPBrief of each message of a session
// whose seq is in seqs (ascending), the zero one for a message recorded
// without HTTP metadata; a seq not stored is skipped. It reads the
// metadata of those records alone: not their notes or frames, nor the
// records between them.
func (r *Reader) HTTPBriefs(session string, seqs []uint64, fn func(seq uint64, b HTTPBrief) error) error {
	bk := r.sub(bucketMessages, session)
	if bk == nil {
		return nil
	}
	c := bk.Cursor()
	var at uint64 // the cursor's seq; 0 before the first Seek
	for _, seq := range seqs {
		var k, v []byte
		if at != 0 && seq == at+1 {
			k, v = c.Next() // consecutive seqs: no descent from the root
		} else {
			k, v = c.Seek(seqKey(seq))
		}
		if k == nil {
			return nil
		}
		if at = binary.BigEndian.Uint64(k); at != seq {
			continue
		}
		b, err := recordBrief(v)
		if err != nil {
			return fmt.Errorf("%s: %w: session %s seq %d: %v", r.path, ErrCorrupt, session, seq, err)
		}
		if err := fn(seq, b); err != nil {
			return err
		}
	}
	return nil
}

// recordBrief reads the HTTPBrief of a record's metadata. The metadata is
// always appendHTTPMeta's (or json.Marshal's) JSON: names as in HTTPMeta's
// tags, a status that is an int.
func recordBrief(v []byte) (HTTPBrief, error) {
	if len(v) < 10 || (v[0] != codecVersion && v[0] != chunkedVersion) {
		return HTTPBrief{}, errShort
	}
	meta, _, err := readBytes(v[10:])
	if err != nil || len(meta) == 0 {
		return HTTPBrief{}, err
	}
	var b HTTPBrief
	var bad error
	ok := jsonrpc.Members(meta, func(name, value []byte) {
		switch string(name) {
		case "status":
			if b.Status, err = strconv.Atoi(string(value)); err != nil {
				bad = err
			}
		case "stream":
			b.Stream = streamName(value)
		case "event_type":
			b.EventType = eventTypeName(value)
		}
	})
	if !ok {
		return HTTPBrief{}, errors.New("metadata: not a JSON object")
	}
	if bad != nil {
		return HTTPBrief{}, fmt.Errorf("metadata: status: %w", bad)
	}
	return b, nil
}

// Every message recorded over HTTP has a stream, and every SSE event of
// a recording a type: decoding them must not allocate for the names peers
// send. eventTypes are the SSE event types MCP peers send ("endpoint": a
// 2024-11-05 stream's first event).
var eventTypes = []string{"message", "endpoint"}

// streamName decodes a JSON string holding a stream's name.
func streamName(v []byte) string { return knownName(v, streams) }

// eventTypeName decodes a JSON string holding an SSE event type.
func eventTypeName(v []byte) string { return knownName(v, eventTypes) }

// knownName decodes a JSON string; one of known costs no allocation.
func knownName(v []byte, known []string) string {
	if len(v) >= 2 {
		for _, s := range known {
			if string(v[1:len(v)-1]) == s {
				return s
			}
		}
	}
	s, _ := jsonrpc.String(v) // a name this version does not know
	return s
}
