package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// Multi round-trip requests (SEP-2322, 2026-07-28). A server that needs
// something of the client to finish a tools/call, prompts/get or
// resources/read no longer asks it with a request of its own: it answers
// with resultType "input_required", inputRequests (each an id mapped to a
// method, elicitation/create, sampling/createMessage or roots/list, and
// its params) and an opaque requestState. The client fulfils them itself
// and sends the same request again with inputResponses (the same ids,
// each mapped to that method's result) and the requestState echoed.

// inputAsk is an input_required result, kept for the retries that answer it.
type inputAsk struct {
	seq     uint64
	methods map[string]string // input request id → its method
	// forms are the requestedSchema of its elicitations, by input
	// request id, which the retry's answers are judged by.
	forms map[string]json.RawMessage
}

// inputRequired reports whether f answers r with an input_required
// result, and checks that result. Such a result holds none of what the
// method's complete result must, so the caller skips those checks.
func (c *checker) inputRequired(f *frame, r *request) bool {
	if !f.inputRequired {
		return false
	}
	if !jsonrpc.MayAskForInput(r.method) {
		c.report("input-required", f.seq, r.seq, "%s is answered input_required; only tools/call, prompts/get and resources/read may be", r.method)
		return true
	}
	if !c.atLeast(statelessVersion) {
		c.report("input-required", f.seq, r.seq, "an input_required result in protocol %s; multi round-trip requests came with %s, and an older client cannot retry", c.version, statelessVersion)
	}
	asks := objectMembers(member(f.result, "inputRequests"))
	if asks == nil && jsonType(member(f.result, "inputRequests")) != "object" {
		c.report("input-required", f.seq, r.seq, "the input_required result has no inputRequests object")
		return true
	}
	ask := &inputAsk{seq: f.seq, methods: map[string]string{}, forms: map[string]json.RawMessage{}}
	for _, id := range slices.Sorted(maps.Keys(asks)) {
		method, _ := stringOf(member(asks[id], "method"))
		if !jsonrpc.IsInputRequestMethod(method) {
			c.report("input-required", f.seq, r.seq, "input request %q has method %s; it must be elicitation/create, sampling/createMessage or roots/list", id, orNone(string(member(asks[id], "method"))))
			continue
		}
		ask.methods[id] = method
		if form := member(member(asks[id], "params"), "requestedSchema"); method == "elicitation/create" && form != nil {
			ask.forms[id] = bytes.Clone(form)
		}
		// The input request stands for the request the server would have
		// sent: the same capability and params rules hold.
		asked := &frame{seq: f.seq, dir: store.S2C, method: method, params: member(asks[id], "params")}
		c.capability(asked)
		c.deprecated(asked)
		c.paramsShape(asked)
		c.elicitationSchema(asked)
	}
	key := askKey(r.method, r.target, member(f.result, "requestState"))
	c.asks[key] = ask
	if c.cassette != nil {
		c.cassette.ask(c, key, f.at, ask)
	}
	return true
}

// inputResponses checks a request that retries after input_required: what
// it answers must be what the server asked, each answer shaped as the
// asked method's result.
func (c *checker) inputResponses(f *frame, r *request) {
	if !jsonrpc.MayAskForInput(f.method) {
		return
	}
	responses, state := member(f.params, "inputResponses"), member(f.params, "requestState")
	if responses == nil && state == nil {
		return
	}
	key := askKey(f.method, r.target, state)
	ask := c.asks[key]
	if ask == nil && c.info.Transport == store.TransportHTTP {
		// 2026-07-28 over Streamable HTTP is recorded one session per
		// connection, and a client may send the retry on another
		// connection than the call: its ask is then in another session.
		// Checked with the rest of its cassette (Cassette, Tape), the
		// retry is judged against the other sessions' asks; alone, it
		// cannot be.
		if c.cassette != nil {
			c.cassette.retry(c, &pendingRetry{seq: f.seq, at: f.at, method: f.method, key: key, state: bytes.Clone(state), responses: bytes.Clone(responses)})
		}
		return
	}
	if ask == nil {
		retryOfNothing(c.report, f.seq, f.method, state)
		return
	}
	judgeRetry(c.report, f.seq, ask.seq, "", ask, responses)
}

// reportFunc adds a finding under rule (checker.report's signature).
type reportFunc func(rule string, seq, related uint64, format string, a ...any)

// retryOfNothing reports a retry that answers no input_required result.
func retryOfNothing(report reportFunc, seq uint64, method string, state json.RawMessage) {
	what := "inputResponses"
	if state != nil {
		what = "requestState " + string(state)
	}
	report("input-responses", seq, 0, "%s carries %s, but the server answered no earlier %s with input_required that it could retry", method, what, method)
}

// judgeRetry checks the responses a retry (at seq) gives to ask, which
// is at askSeq in the retry's session, or in session elsewhere ("" for
// the retry's own).
func judgeRetry(report reportFunc, seq, askSeq uint64, elsewhere string, ask *inputAsk, responses json.RawMessage) {
	related, where := askSeq, ""
	if elsewhere != "" {
		related, where = 0, fmt.Sprintf(" (asked in %s:%d)", elsewhere, askSeq)
	}
	got := objectMembers(responses)
	for _, id := range slices.Sorted(maps.Keys(ask.methods)) {
		answer, ok := got[id]
		if !ok {
			report("input-responses", seq, related, "the retry leaves input request %q (%s) unanswered%s", id, ask.methods[id], where)
			continue
		}
		if problem := inputAnswerProblem(ask.methods[id], answer); problem != "" {
			report("input-responses", seq, related, "the answer to input request %q (%s) %s%s", id, ask.methods[id], problem, where)
		} else if a, _ := stringOf(member(answer, "action")); a == "accept" {
			if problem := formContentProblem(ask.forms[id], member(answer, "content")); problem != "" {
				report("elicitation-content", seq, related, "the accepted elicitation %q's content breaks its form: %s%s", id, problem, where)
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(got)) {
		if _, asked := ask.methods[id]; !asked {
			report("input-responses", seq, related, "answers input request %q, which the server did not ask%s", id, where)
		}
	}
}

// askKey is how a retry finds the input_required result it answers: the
// method, what it names (tool, prompt or resource) and the requestState.
func askKey(method, target string, state json.RawMessage) string {
	return method + "\x00" + target + "\x00" + string(state)
}

// inputAnswerProblem says what is wrong with answer as the result of
// method, "" when nothing is.
func inputAnswerProblem(method string, answer json.RawMessage) string {
	for _, p := range shapes[method].result {
		if miss := lacks(answer, p); miss != "" {
			return "lacks " + miss
		}
	}
	if method == "elicitation/create" {
		if a, _ := stringOf(member(answer, "action")); a != "accept" && a != "decline" && a != "cancel" {
			return "has action " + string(member(answer, "action")) + "; it must be accept, decline or cancel"
		}
	}
	return ""
}
