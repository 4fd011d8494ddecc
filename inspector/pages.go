package inspector

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// Error pages. A server that refuses a POST with a 4xx or 5xx may send a
// body that is no JSON-RPC message at all (go-sdk's text "session not
// found", a gateway's HTML), which the recorder keeps as a frame on the
// POST's stream. Its summary says only that it is malformed; shown so it
// read as a broken message ("bad", no name), where it is an HTTP answer
// HTTP allows. The model learns the status of such frames from the
// source, only for the server's malformed frames (few: reading every
// row's metadata would cost a million reads), and shows them as what
// they are.

// notePage remembers row i for resolvePages if it may be an error page.
func (m *Model) notePage(i int32, s *store.Summary) {
	if s.Kind == jsonrpc.Malformed && s.Dir == store.S2C {
		m.unresolvedPages = append(m.unresolvedPages, i)
	}
}

// resolvePages reads the HTTP status of the server's malformed frames
// added since it last ran: those that are the body of a 4xx or 5xx
// answer (application/json or not) are error pages.
func (m *Model) resolvePages(src Source) error {
	if len(m.unresolvedPages) == 0 || src == nil {
		return nil
	}
	bySession := map[uint32][]int32{}
	for _, i := range m.unresolvedPages {
		s := m.rows[i].sess
		bySession[s] = append(bySession[s], i)
	}
	m.unresolvedPages = nil
	for sess, rows := range bySession {
		slices.SortFunc(rows, func(a, b int32) int { return cmp.Compare(m.rows[a].seq, m.rows[b].seq) })
		seqs := make([]uint64, len(rows))
		at := make(map[uint64]int32, len(rows))
		for k, i := range rows {
			seqs[k], at[m.rows[i].seq] = m.rows[i].seq, i
		}
		err := src.HTTPBriefs(m.Sessions[sess].Info.ID, seqs, func(seq uint64, b store.HTTPBrief) error {
			if b.Stream == store.StreamJSON && b.Status >= 400 && b.Status <= 599 {
				if m.pages == nil {
					m.pages = map[int32]int{}
				}
				m.pages[at[seq]] = b.Status
				r := &m.rows[at[seq]]
				if !r.page {
					r.page = true
					if countsAsError(r) { // a malformed frame does not count; a page does
						m.Sessions[sess].Errors++
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// pageName is what the name column says of an error page.
func pageName(status int) string {
	return fmt.Sprintf("%d %s (error page, no JSON-RPC message)", status, http.StatusText(status))
}
