package recorder

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/store"
)

func TestIsSecretName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"authorization header", "Authorization", true},
		{"proxy authorization", "PROXY-AUTHORIZATION", true},
		{"cookie", "Cookie", true},
		{"set-cookie", "Set-Cookie", true},
		{"token inside", "X-Upstream-Token", true},
		{"key at end", "X-Api-Key", true},
		{"key mixed case", "apiKEY", true},
		{"secret", "client_secret", true},
		{"password flag", "password", true},
		{"password inside an environment variable", "DB_PASSWORD", true},
		{"password at the end of a word", "PGPASSWORD", true},
		{"password in a header", "X-Password", true},
		{"passwd inside a flag", "--db-passwd", true},
		{"auth as a prefix of another word", "author", false},
		{"a short password flag", "pw", true},
		{"pass alone", "PASS", true},
		{"pass inside another word", "bypass", false},
		{"an Azure SAS signature", "sig", true},
		{"sig inside another word", "signal", false},
		{"a signed URL's signature", "X-Amz-Signature", true},
		{"a signed URL's credential", "X-Amz-Credential", true},
		{"word at the very end", "xtoken", true},
		{"content type", "Content-Type", false},
		{"session id", "Mcp-Session-Id", false},
		{"almost a word", "X-Toke", false},
		{"empty", "", false},
		{"authorization as a prefix is not the name", "Authorizations-Count", false},
		{"non-ASCII around a word", "çlé-TOKEN", true},
		{"non-ASCII, no word", "çlé", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsSecretName(tc.in); got != tc.want {
				t.Errorf("IsSecretName(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

// The in-place ASCII comparison must decide as lower-casing would.
func TestIsSecretName_MatchesLowerCasing(t *testing.T) {
	lowered := func(name string) bool {
		n := strings.ToLower(name)
		for _, s := range secretNames {
			if n == s {
				return true
			}
		}
		for _, w := range secretWords {
			if strings.Contains(n, w) {
				return true
			}
		}
		return false
	}
	alphabet := "aeikKnOsStTyY-_zZ"
	for n := range 200000 {
		var b strings.Builder
		for x := n; x > 0; x /= len(alphabet) {
			b.WriteByte(alphabet[x%len(alphabet)])
		}
		name := b.String()
		if IsSecretName(name) != lowered(name) {
			t.Fatalf("IsSecretName(%q) = %v, lower-casing says %v", name, IsSecretName(name), lowered(name))
		}
	}
}

func BenchmarkHTTPRedactor_Header(b *testing.B) {
	r := NewHTTPRedactor(nil)
	h := map[string][]string{
		"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Session-Id": {"abc"}, "Mcp-Protocol-Version": {"2025-11-25"}, "User-Agent": {"Go-http-client/1.1"},
		"Content-Length": {"120"}, "Authorization": {"Bearer x"},
	}
	b.ReportAllocs()
	for b.Loop() {
		r.Header(h)
	}
}

func TestHTTPRedactor_Header(t *testing.T) {
	in := map[string][]string{
		"Authorization": {"Bearer abc"},
		"X-Tenant":      {"acme", "beta"},
		"Accept":        {"application/json", "text/event-stream"},
		"X-Empty":       nil,
		"X-Api-Key":     {},
		// A URL in a header loses what the upstream's URL would.
		"Referer":  {"http://localhost:6274/oauth/callback?access_token=s3cret&state=x#s"},
		"Location": {"https://u:s3cret@h.example/mcp?tenant=acme"},
		"Origin":   {"http://localhost:6274"},
		"Link":     {"<https://h.example/p?token=x>; rel=next"},
	}
	out := NewHTTPRedactor([]string{"x-tenant", "tenant"}).Header(in)
	want := map[string][]string{
		"Authorization": {Redacted},
		"X-Tenant":      {Redacted, Redacted},
		"Accept":        {"application/json", "text/event-stream"},
		"X-Empty":       nil,
		"X-Api-Key":     {},
		"Referer":       {"http://localhost:6274/oauth/callback?access_token=[redacted]&state=x#s"},
		"Location":      {"https://u:[redacted]@h.example/mcp?tenant=[redacted]"},
		"Origin":        {"http://localhost:6274"},
		"Link":          {"<https://h.example/p?token=x>; rel=next"},
	}
	if len(out) != len(want) {
		t.Fatalf("got %d headers, want %d: %v", len(out), len(want), out)
	}
	for k, vs := range want {
		got, ok := out[k]
		if !ok || strings.Join(got, "|") != strings.Join(vs, "|") || (got == nil) != (vs == nil) {
			t.Errorf("%s: got %#v, want %#v", k, got, vs)
		}
	}
	// The copy is the recorder's own: appending to one value must not
	// reach the next header's values or the forwarded header.
	out["Accept"] = append(out["Accept"], "x")
	out["Accept"][0] = "changed"
	if in["Accept"][0] != "application/json" {
		t.Errorf("changing the copy changed the original: %v", in["Accept"])
	}
	for k, vs := range out {
		for _, v := range vs {
			if v == "x" && k != "Accept" {
				t.Errorf("append to Accept reached %s: %v", k, vs)
			}
		}
	}
	if got := (*HTTPRedactor)(nil).Header(in)["Authorization"]; got[0] != "Bearer abc" {
		t.Errorf("--no-redact (nil redactor) stored %v", got)
	}
	if NewHTTPRedactor(nil).Header(nil) != nil {
		t.Error("a nil header must stay nil")
	}
}

// The upstream URL is stored in the session's info: a password in it and
// secret query parameters are hidden; the rest stays as it was, and
// --no-redact (a nil redactor) keeps it all.
// The redactor remembers its answer per name; past maxKnownNames it stops
// remembering, and its answers must be the same either way.
func TestHTTPRedactor_RemembersNamesWithinBound(t *testing.T) {
	r := NewHTTPRedactor([]string{"x-tenant"})
	for round := range 2 { // the second round answers from memory
		for i := range maxKnownNames + 100 {
			for _, tc := range []struct {
				name   string
				secret bool
			}{
				{fmt.Sprintf("X-Plain-%d", i), false},
				{fmt.Sprintf("X-Token-%d", i), true},
				{"X-TENANT", true},
				{"Accept", false},
			} {
				if got := r.secret(tc.name); got != tc.secret {
					t.Fatalf("round %d: secret(%q) = %v, want %v", round, tc.name, got, tc.secret)
				}
			}
		}
	}
	if n := r.nKnown.Load(); n > maxKnownNames {
		t.Errorf("remembers %d names, more than the bound %d", n, maxKnownNames)
	}
	if _, ok := r.known.Load("X-TENANT"); !ok {
		t.Error("a name seen first was not remembered")
	}
}

func TestHTTPRedactor_URL(t *testing.T) {
	tests := []struct {
		name string
		r    *HTTPRedactor
		in   string
		want string
	}{
		{"password", NewHTTPRedactor(nil), "https://bob:hunter2@mcp.example.com/mcp", "https://bob:" + url.PathEscape(Redacted) + "@mcp.example.com/mcp"},
		{"user without password", NewHTTPRedactor(nil), "https://bob@mcp.example.com/mcp", "https://bob@mcp.example.com/mcp"},
		{"secret query", NewHTTPRedactor(nil), "http://127.0.0.1:3001/mcp?api_key=k1&region=eu", "http://127.0.0.1:3001/mcp?api_key=" + Redacted + "&region=eu"},
		{"extra name", NewHTTPRedactor([]string{"region"}), "http://127.0.0.1:3001/mcp?region=eu", "http://127.0.0.1:3001/mcp?region=" + Redacted},
		// The name is judged unescaped, and the piece is kept as written.
		{"escaped name", NewHTTPRedactor([]string{"tenant id"}), "http://127.0.0.1:3001/mcp?pass%77ord=pw&tenant+id=t1&x=%zz", "http://127.0.0.1:3001/mcp?pass%77ord=" + Redacted + "&tenant+id=" + Redacted + "&x=%zz"},
		{"no-redact", nil, "https://bob:hunter2@h/mcp?token=t", "https://bob:hunter2@h/mcp?token=t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.r.URL(u); got != tt.want {
				t.Errorf("URL(%s) = %s, want %s", tt.in, got, tt.want)
			}
			if u.String() != tt.in {
				t.Errorf("the URL itself changed to %s", u)
			}
		})
	}
}

func TestFrameRedactor(t *testing.T) {
	r := NewFrameRedactor([]string{"token", "ID"})
	tests := []struct{ name, in, want string }{
		{"inside params, any depth, any case",
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"Token":"a","deep":[{"token":{"x":1}}]}}`,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"Token":"[redacted]","deep":[{"token":"[redacted]"}]}}`},
		{"the envelope's id is kept, a result's id is not",
			`{"jsonrpc":"2.0","id":7,"result":{"id":"user-42"}}`,
			`{"jsonrpc":"2.0","id":7,"result":{"id":"[redacted]"}}`},
		{"schemas name fields and are kept",
			`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"properties":{"token":{"type":"string"}}}}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"properties":{"token":{"type":"string"}}}}]}}`},
		{"an outputSchema is kept, the structuredContent it describes is not",
			`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","outputSchema":{"properties":{"token":{"type":"string"}}}}],"structuredContent":{"token":"t1"}}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","outputSchema":{"properties":{"token":{"type":"string"}}}}],"structuredContent":{"token":"[redacted]"}}}`},
		{"an elicitation's requestedSchema is kept, the answer is not",
			`{"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"token":{"type":"string"}}}}}`,
			`{"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"token":{"type":"string"}}}}}`},
		{"a batch's envelopes are kept",
			`[{"jsonrpc":"2.0","id":1,"method":"m","params":{"token":"a"}}]`,
			`[{"jsonrpc":"2.0","id":1,"method":"m","params":{"token":"[redacted]"}}]`},
		{"not JSON: as it came", `{"token": oops`, `{"token": oops`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &store.Message{Frame: []byte(tt.in)}
			got := r.Rewrite(m)
			if string(got.Frame) != tt.want {
				t.Errorf("got  %s\nwant %s", got.Frame, tt.want)
			}
			if string(m.Frame) != tt.in {
				t.Errorf("the original message changed: %s", m.Frame)
			}
		})
	}
	if NewFrameRedactor(nil) != nil {
		t.Errorf("no names should give no redactor")
	}
}

// A header on a server's command line (mcp-remote's --header, curl's -H)
// loses its value as a header would; a stored line, which export takes
// apart at its spaces, loses it too, and an authentication scheme stays.
func TestRedactCommandLine_HeaderArguments(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want string
	}{
		{"NAME: VALUE", []string{"npx", "mcp-remote", "https://h/mcp", "--header", "Authorization: Bearer s3cret"},
			"npx mcp-remote https://h/mcp --header Authorization: Bearer [redacted]"},
		{"NAME:VALUE", []string{"mcp-remote", "--header", "Authorization:Bearer s3cret"}, "mcp-remote --header Authorization:Bearer [redacted]"},
		{"a custom header", []string{"curl", "-H", "X-Api-Key: s3cret"}, "curl -H X-Api-Key: [redacted]"},
		{"a stored line taken apart", strings.Split("mcp-remote --header Authorization: Bearer s3cret --debug", " "),
			"mcp-remote --header Authorization: Bearer [redacted] --debug"},
		{"a stored line, no scheme", strings.Split("x -H X-Auth-Token: s3cret y", " "), "x -H X-Auth-Token: [redacted] y"},
		{"stored already redacted", strings.Split("x Authorization: Bearer [redacted] y", " "), "x Authorization: Bearer [redacted] y"},
		{"a header of no secret name", []string{"x", "-H", "Accept: text/plain"}, "x -H Accept: text/plain"},
		{"a URL is no header", []string{"x", "https://token.example/mcp"}, "x https://token.example/mcp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RedactCommandLine(tc.argv); got != tc.want {
				t.Errorf("RedactCommandLine(%q)\n= %q\nwant %q", tc.argv, got, tc.want)
			}
		})
	}
}

// Credentials under short names: a password flag, and the signature of an
// Azure SAS URL, a server's storage address.
func TestRedactCommandLine_ShortNames(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"srv", "--pw", "hunter2"}, "srv --pw [redacted]"},
		{[]string{"srv", "--pass=hunter2"}, "srv --pass=[redacted]"},
		{[]string{"srv", "https://acct.blob.example/c?sv=2022-11-02&sig=c2lnbmVk"}, "srv https://acct.blob.example/c?sv=2022-11-02&sig=[redacted]"},
		{[]string{"srv", "--bypass-cache", "on"}, "srv --bypass-cache on"},
	} {
		if got := RedactCommandLine(tc.argv); got != tc.want {
			t.Errorf("RedactCommandLine(%q)\n= %q\nwant %q", tc.argv, got, tc.want)
		}
	}
}
