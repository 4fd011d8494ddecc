package inspector

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"unicode/utf8"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// Frames from the server that are no JSON-RPC message but no broken one
// either. Their summaries say only that they are malformed; shown so,
// they read as broken messages ("bad", no name), where they are HTTP
// doing its job:
//
//   - Error pages. A server that refuses a POST with a 4xx or 5xx may
//     send a body that is no JSON-RPC message at all (go-sdk's text
//     "session not found", a gateway's HTML), which the recorder keeps as
//     a frame on the POST's stream.
//   - Endpoint events. A legacy HTTP+SSE stream (2024-11-05) begins with
//     an "endpoint" event whose data is the URI the client is to POST to,
//     not JSON, which the recorder keeps as a server frame with its event
//     type.
//
// The model learns the status and the SSE event type of such frames from
// the source, only for the server's malformed frames (few: reading every
// row's metadata would cost a million reads), and shows them as what
// they are.

// frameRole is what a server's malformed frame turned out to be.
type frameRole uint8

const (
	roleMessage  frameRole = iota // what its kind says
	rolePage                      // an HTTP error page
	roleEndpoint                  // a legacy SSE endpoint event
)

// maxEndpointURI bounds what the model keeps of an endpoint event's data:
// a URI is short, and anything longer is a server's odd data, which the
// detail pane shows whole.
const maxEndpointURI = 1 << 10

// noteMalformed remembers row i for resolveMalformed if it may be an
// error page or an endpoint event.
func (m *Model) noteMalformed(i int32, s *store.Summary) {
	if s.Kind == jsonrpc.Malformed && s.Dir == store.S2C {
		m.unresolved = append(m.unresolved, i)
	}
}

// resolveMalformed reads the HTTP status and SSE event type of the
// server's malformed frames added since it last ran: those that are the
// body of a 4xx or 5xx answer (application/json or not) are error pages;
// those that came as an SSE "endpoint" event (as lint's endpointEvent
// says) are endpoint events, whose URI it reads from their frames.
func (m *Model) resolveMalformed(src Source) error {
	if len(m.unresolved) == 0 || src == nil {
		return nil
	}
	bySession := map[uint32][]int32{}
	for _, i := range m.unresolved {
		s := m.rows[i].sess
		bySession[s] = append(bySession[s], i)
	}
	m.unresolved = nil
	for sess, rows := range bySession {
		slices.SortFunc(rows, func(a, b int32) int { return cmp.Compare(m.rows[a].seq, m.rows[b].seq) })
		seqs := make([]uint64, len(rows))
		at := make(map[uint64]int32, len(rows))
		for k, i := range rows {
			seqs[k], at[m.rows[i].seq] = m.rows[i].seq, i
		}
		id := m.Sessions[sess].Info.ID
		var endpoints []int32
		err := src.HTTPBriefs(id, seqs, func(seq uint64, b store.HTTPBrief) error {
			switch {
			case b.Stream == store.StreamJSON && b.Status >= 400 && b.Status <= 599:
				if m.pages == nil {
					m.pages = map[int32]int{}
				}
				m.pages[at[seq]] = b.Status
				m.setRole(at[seq], rolePage)
			case b.EventType == "endpoint":
				endpoints = append(endpoints, at[seq])
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, i := range endpoints {
			frame, err := frameOf(src.Frames, id, m.rows[i].seq)
			if err != nil {
				return err
			}
			if m.endpoints == nil {
				m.endpoints = map[int32]string{}
			}
			m.endpoints[i] = endpointURI(frame)
			m.setRole(i, roleEndpoint)
		}
	}
	return nil
}

// setRole says what row i, a server's malformed frame, is, and counts it
// in its session's errors if that makes it one.
func (m *Model) setRole(i int32, role frameRole) {
	r := &m.rows[i]
	if r.role == role {
		return
	}
	was := countsAsError(r)
	r.role = role
	if countsAsError(r) && !was { // a malformed frame does not count; a page does
		m.Sessions[r.sess].Errors++
	}
}

// endpointURI is what the model keeps of an endpoint event's data.
func endpointURI(data []byte) string {
	if len(data) <= maxEndpointURI {
		return string(data)
	}
	cut := maxEndpointURI
	for cut > 0 && !utf8.RuneStart(data[cut]) {
		cut--
	}
	return string(data[:cut]) + "…"
}

// pageName is what the name column says of an error page.
func pageName(status int) string {
	return fmt.Sprintf("%d %s (error page, no JSON-RPC message)", status, http.StatusText(status))
}

// endpointName is what the name column says of an endpoint event: what it
// tells the client to do.
func endpointName(uri string) string {
	if uri == "" {
		return "endpoint: (no URI to POST to)" // a hand-written export's
	}
	return "endpoint: POST to " + uri
}
