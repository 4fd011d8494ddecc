package script_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/internal/peertest"
)

// tsv2Scenario is one scenario of testdata/npm/v2-script-client.mjs and
// what it should see in each era and over each transport.
type tsv2Scenario struct {
	name, script string // the script: a file in cassettes/, or one written for the test
	server       string
	want         func(modern, http bool) []string // the transcript after its version line
}

// TestTSv2Client_Scripts runs the TypeScript SDK v2 client
// (@modelcontextprotocol/client 2.4.0, testdata/npm/v2-script-client.mjs)
// through script-client.mjs's scenarios against mcpmock serving the
// example scripts, in the 2026-07-28 era (pin) and the handshake era
// (legacy), over stdio and Streamable HTTP. In 2026-07-28 the client
// validates every answer against that era's schema, gets change
// notifications on a subscriptions/listen stream it opens for its
// listChanged handlers, sends its log level in each request's _meta, and
// fulfils input_required rounds through the same handlers that take a
// handshake-era server's requests.
//
// The client departs from the spec here and there, and the transcripts
// pin what it does rather than what it should:
//   - It rewrites a -32002 it receives to -32602 (it takes either, with
//     data.uri, as resource not found), so the wire code is printed too.
//   - In 2026-07-28 it drops fields and notifications that era lacks (an
//     elicitationId, notifications/elicitation/complete) without a word,
//     so those are printed off the wire too.
//   - Over Streamable HTTP in the handshake era it does not start a new
//     session when a request with its Mcp-Session-Id gets 404, as
//     2025-11-25 says a client MUST: after expire-session every call
//     fails.
//   - It hands notifications to their handlers a microtask later but
//     settles a response at once, dropping the request's progress
//     handler: progress read in the same chunk as the answer is lost.
//     mcpmock pings a handshake-era client before the answer, which
//     keeps them apart; 2026-07-28 has no ping, and a real server could
//     do no better, so there progress is read off the wire.
//   - It has no tasks API (v1's experimental.tasks is gone, and
//     2026-07-28 moved tasks to an extension), so script-tasks.yaml is
//     not run.
func TestTSv2Client_Scripts(t *testing.T) {
	mock := peertest.Binary(t, "mcpmock")
	urlScript := filepath.Join(t.TempDir(), "login.yaml")
	if err := os.WriteFile(urlScript, []byte(urlElicitScript), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sc := range tsv2Scenarios(urlScript) {
		for _, transport := range []string{"stdio", "http"} {
			for _, mode := range []string{"legacy", "pin"} {
				t.Run(sc.name+"/"+transport+"/"+mode, func(t *testing.T) {
					t.Parallel()
					script := sc.script
					if !filepath.IsAbs(script) {
						script = filepath.Join(peertest.ModuleRoot(), "cassettes", script)
					}
					args := []string{sc.name, "--", mock, "serve", script}
					if transport == "http" {
						args = []string{sc.name, "--url", serveHTTP(t, mock, script)}
					}
					modern := mode == "pin"
					version := "2025-11-25"
					if modern {
						version = "2026-07-28"
					}
					want := append([]string{"version " + version + " server " + sc.server}, sc.want(modern, transport == "http")...)
					got := peertest.NodeTranscript(t, 60*time.Second, []string{"MODE=" + mode}, "v2-script-client.mjs", args...)
					if d := cmp.Diff(want, got); d != "" {
						t.Errorf("v2 client saw (-want +got):\n%s", d)
					}
				})
			}
		}
	}
}

func tsv2Scenarios(urlScript string) []tsv2Scenario {
	same := func(lines ...string) func(bool, bool) []string {
		return func(bool, bool) []string { return lines }
	}
	return []tsv2Scenario{
		{"pages", "script-basic.yaml", "demo-tools", same(
			"tools greet,weather,picture,add,shout",
			"pages greet,weather | picture,add | shout",
			`badCursor error -32602 tools/list: invalid cursor "not-a-cursor"`,
			`weather {"celsius":21.5,"city":"Paris"}`,
		)},
		{"events", "script-events.yaml", "events-demo", func(modern, _ bool) []string {
			sub := "subscription none"
			if modern {
				sub = `subscription {"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true}`
			}
			return []string{sub,
				"unlock: unlock call 1", "unlock: unlock call 2",
				"tools changed unlock,status,secret", "tools unlock,status,secret", "status: v2",
				"prompts changed summarize,late", "resources changed readme.txt,late.txt",
			}
		}},
		{"progress", "script-progress.yaml", "progress-demo", func(modern, _ bool) []string {
			// Only info: the client asks for info and above, in _meta
			// (2026-07-28) or with logging/setLevel.
			lines := []string{`log info "building app"`}
			if !modern {
				// What the SDK's onprogress saw: in 2026-07-28 it misses
				// progress it reads together with the answer (see the
				// client), as may happen on a busy machine.
				lines = append(lines, "progress 1/3 compiling", "progress 2/3 linking", "progress 3/3 done")
			}
			return append(lines,
				"wire progress 1/3 compiling", "wire progress 2/3 linking", "wire progress 3/3 done",
				"build: built app")
		}},
		{"errors", "script-errors.yaml", "errors-demo", same(
			"divide: isError division by zero",
			`invalid: isError invalid arguments for tool "divide": validating root: required: missing properties: ["b"]`,
			`strict: error -32602 invalid arguments for tool "strict": validating root: validating /properties/count: minimum: 0/1 is less than 1.000000`,
			`broken: error -32000 upstream said no to {"q":1}`,
			`broken data {"retryAfterMs":500,"upstream":"inventory"}`,
			`nosuch: error -32602 tools/call: unknown tool "nosuch"`,
		)},
		{"elicit", "script-elicit.yaml", "elicit-demo", func(modern, _ bool) []string {
			// 2026-07-28 retired -32002 for -32602: the client shows
			// -32602 either way, the wire tells.
			wire := "-32002"
			if modern {
				wire = "-32602"
			}
			return []string{
				"asked: Deploy web to production?", "deploy: deployed web (from ts v2)",
				"asked: Translate hello into which language?", "translate: Translate into French: hello",
				"asked: Let the assistant read file:///secrets.env?", "secrets: API_KEY=not-a-real-key",
				`nowhere: error -32602 resource not found: "file:///nowhere.txt" (wire ` + wire + `, data {"uri":"file:///nowhere.txt"})`,
				`nosuch: error -32602 prompts/get: unknown prompt "nosuch"`,
			}
		}},
		{"url", urlScript, "login-demo", func(modern, _ bool) []string {
			if modern {
				// 2026-07-28's URL elicitation has no elicitationId and no
				// complete notification.
				return []string{
					"asked: Sign in to mail", "connect: connected to mail",
					"asked: Sign in to read mcpmock://inbox", "inbox: no new mail",
					"wire input request elicitation/create message,mode,url",
					"wire input request elicitation/create message,mode,url",
				}
			}
			return []string{
				"asked: Sign in to mail", "complete with id", "connect: connected to mail",
				"asked: Sign in to read mcpmock://inbox", "complete with id", "inbox: no new mail",
				"wire notifications/elicitation/complete", "wire notifications/elicitation/complete",
			}
		}},
		{"sample", "script-sample.yaml", "sample-demo", same(
			"sampled: You summarize in one sentence. | Summarize: a long story | 100",
			"summarize: summary by ts-v2-model: short",
			"workspace: roots: file:///ts/v2",
		)},
		{"hang", "script-faults.yaml", "faults-demo", same(
			// The client gives up (a notifications/cancelled, or over
			// HTTP in 2026-07-28 the closed stream), and mcpmock goes on.
			"hang: error REQUEST_TIMEOUT Request timed out",
			"ok: fine",
		)},
		{"faults", "script-faults.yaml", "faults-demo", tsv2Faults},
	}
}

// tsv2Faults is what the faults scenario sees of script-faults.yaml's
// faults, each followed by a call that works.
func tsv2Faults(modern, http bool) []string {
	lines := func(pairs ...string) []string {
		var out []string
		names := []string{"unavailable", "unauthorized", "forbidden", "wrong-id", "duplicate", "malformed", "expire", "close"}
		for i, p := range pairs {
			name := "ok"
			if i%2 == 0 {
				name = names[i/2]
			}
			out = append(out, name+": "+p)
		}
		return out
	}
	const fine = "fine"
	const noSession = "error -32603 HTTP 404 Not Found (fault expire-session; 2026-07-28 has no session to expire)"
	if !http {
		// No HTTP status over stdio: http-NNN is a -32603 saying so, or
		// the error the fault carries. A half frame is a line that does
		// not parse, which the client passes over. In the handshake era
		// expire-session closes the connection as close does, for good;
		// in 2026-07-28 there is no session to expire, as over HTTP.
		const gone = "error - Not connected"
		head := []string{
			"error -32603 HTTP 503 Service Unavailable (fault http-503; this transport has no HTTP status)", fine,
			"error -32603 HTTP 401 Unauthorized (fault http-401; this transport has no HTTP status)", fine,
			"error -32001 this call needs the admin scope", fine,
			"error REQUEST_TIMEOUT Request timed out", fine,
			"twice", fine,
			"error REQUEST_TIMEOUT Request timed out", fine,
		}
		if modern {
			return lines(append(head, noSession, fine, "error CONNECTION_CLOSED Connection closed", gone)...)
		}
		return lines(append(head, "error CONNECTION_CLOSED Connection closed", gone, gone, gone)...)
	}
	head := []string{
		"error CLIENT_HTTP_NOT_IMPLEMENTED Error POSTing to endpoint: Service Unavailable (mcpmock fault http-503)\n", fine,
		`error CLIENT_HTTP_NOT_IMPLEMENTED Error POSTing to endpoint: {"error":"invalid_token","error_description":"the access token expired"}`, fine,
		`error - Insufficient scope: required "admin"`, fine,
		"error REQUEST_TIMEOUT Request timed out", fine,
		"twice", fine,
		"error SyntaxError", fine,
	}
	if modern {
		// No session to expire; a dropped connection costs one call.
		return lines(append(head, noSession, fine, "error - fetch failed", fine)...)
	}
	// The client does not start a new session after the 404.
	const gone = "error CLIENT_HTTP_NOT_IMPLEMENTED Error POSTing to endpoint: Not Found: no such session (it ended, expired, or was never issued)\n"
	return lines(append(head,
		"error CLIENT_HTTP_NOT_IMPLEMENTED Error POSTing to endpoint: Not Found: session expired (mcpmock fault expire-session)\n", gone,
		gone, gone)...)
}
