package replay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// How a session refuses a request as the recorded server did, with an
// HTTP status (a script's fault, a recorded 4xx or 5xx, an expired
// session), and what stands for that status where there is none to give.

// refuse carries out an HTTP status fault or an expired session. An
// expired session ends before its 404 goes out, so that whatever the
// client sends after reading it finds the session gone; where there is no
// 404 to give, the connection closes (stdio, WebSocket, a legacy POST
// already answered), as it is all the session there is. A 2026-07-28
// request belongs to no session, on any transport: there is nothing to
// expire, nor to close, so the client gets the JSON-RPC error and goes on.
func (s *session) refuse(req *Request, ex exchange, r Reply) {
	status := r.refusalStatus()
	if r.ExpireSession && s.versionOf(req) >= statelessVersion {
		_ = ex.reply(errorMessage(req.ID, statusError(status, true, r.Refusal, errNoSession)), false)
		ex.done()
		return
	}
	err := ex.refuse(status, r.ExpireSession, r.Refusal)
	if r.ExpireSession && (err == nil || s.hangup != nil) {
		if s.hangup != nil {
			s.hangup()
		}
		ex.done()
		return
	}
	if err != nil {
		_ = ex.reply(errorMessage(req.ID, statusError(status, r.ExpireSession, r.Refusal, err)), false)
	}
	ex.done()
}

// refuseNote gives a client notification's POST the refusal r holds, if
// any, in place of 202 Accepted. Where there is no status to give (stdio,
// WebSocket, a legacy POST already answered, 2026-07-28's missing
// session) nothing is sent: no answer is what a notification gets there.
// An expired session ends, as for a request.
func (s *session) refuseNote(ex exchange, r Reply) {
	if !r.refuses() {
		return
	}
	if err := ex.refuse(r.refusalStatus(), r.ExpireSession, r.Refusal); err == nil && r.ExpireSession && s.hangup != nil {
		s.hangup()
	}
}

// errorRefusal is the answer to a POST whose error goes with an HTTP
// status: msg, the error, as its application/json body, with the headers
// more gives (a 401's WWW-Authenticate); any body of more's is not sent.
func errorRefusal(more *HTTPRefusal, msg []byte) *HTTPRefusal {
	h := http.Header{}
	if more != nil && more.Header != nil {
		h = more.Header.Clone()
	}
	h.Set("Content-Type", "application/json")
	return &HTTPRefusal{Header: h, Body: msg}
}

// statusError is the JSON-RPC error that stands for an HTTP status the
// client cannot be given, and says why. Its data has the status, and the
// headers but Content-Type that would have come with it (a recording's
// are those a client acts on, such as Retry-After and WWW-Authenticate; a
// script's, those it gives), each as one value, as HTTP joins a list: a
// host on stdio can still learn when to come back.
func statusError(status int, expire bool, more *HTTPRefusal, why error) *RPCError {
	d := struct {
		HTTPStatus int               `json:"httpStatus"`
		Headers    map[string]string `json:"headers,omitempty"`
	}{HTTPStatus: status}
	if more != nil {
		for name, values := range more.Header {
			if len(values) > 0 && !strings.EqualFold(name, "Content-Type") {
				if d.Headers == nil {
					d.Headers = map[string]string{}
				}
				d.Headers[headerSpelling(name)] = strings.Join(values, ", ")
			}
		}
	}
	data, _ := json.Marshal(d)
	return &RPCError{Code: -32603, Data: data, Message: fmt.Sprintf("HTTP %d %s (fault %s; %v)", status, http.StatusText(status), faultName(status, expire), why)}
}

// headerSpelling writes a canonical header name (Go's: Www-Authenticate)
// as the specs and people spell it, for a reader matching names exactly.
func headerSpelling(name string) string {
	if name == "Www-Authenticate" {
		return "WWW-Authenticate"
	}
	return name
}

// faultName is the script fault that answers with status.
func faultName(status int, expire bool) string {
	if expire {
		return "expire-session"
	}
	return fmt.Sprintf("http-%d", status)
}
