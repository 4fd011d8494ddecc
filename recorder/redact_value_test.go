package recorder

import (
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/store"
)

const testKey = "sk-ABCDEFGHIJKLMNOPQRSTUVWX"

func mustValuePatterns(tb testing.TB, patterns ...string) *ValuePatterns {
	tb.Helper()
	v, err := NewValuePatterns(patterns)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func TestNewValuePatterns(t *testing.T) {
	tests := []struct {
		name     string
		patterns []string
		wantNil  bool
		wantBad  string // the pattern the error names
		wantErr  error
	}{
		{name: "none", patterns: nil, wantNil: true},
		{name: "several", patterns: []string{`sk-[A-Za-z0-9]{20,}`, `ghp_\w+`}},
		{name: "empty", patterns: []string{`ok`, ``}, wantNil: true, wantBad: "", wantErr: ErrEmptyPattern},
		{name: "does not compile", patterns: []string{`sk-(`}, wantNil: true, wantBad: "sk-("},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := NewValuePatterns(tt.patterns)
			if (v == nil) != tt.wantNil {
				t.Errorf("patterns %v, want nil: %v", v, tt.wantNil)
			}
			failed := tt.wantErr != nil || tt.wantBad != ""
			if !failed {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			var pe *PatternError
			if !errors.As(err, &pe) || pe.Pattern != tt.wantBad || pe.Err == nil {
				t.Fatalf("error %v, want a *PatternError naming %q", err, tt.wantBad)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestOptionError(t *testing.T) {
	tests := []struct {
		name     string
		patterns []string
		want     string
		wantErr  error
	}{
		{name: "empty", patterns: []string{``}, want: `--redact-value "": an empty pattern matches every value`, wantErr: ErrEmptyPattern},
		{name: "does not compile", patterns: []string{`ok`, `sk-(`}, want: `--redact-value "sk-(": error parsing regexp: missing closing )`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewValuePatterns(tt.patterns)
			got := OptionError("--redact-value", err)
			if got == nil || !strings.HasPrefix(got.Error(), tt.want) {
				t.Errorf("OptionError = %v, want %q…", got, tt.want)
			}
			if tt.wantErr != nil && !errors.Is(got, tt.wantErr) {
				t.Errorf("OptionError = %v, want it to wrap %v", got, tt.wantErr)
			}
		})
	}
	other := errors.New("something else")
	if got := OptionError("--redact-value", other); got != other {
		t.Errorf("OptionError changed an error that is no *PatternError: %v", got)
	}
}

// Rewriter blanks by name, then by value, and is nil with neither, so a
// recording without redaction costs the store nothing per message.
func TestRewriter(t *testing.T) {
	if Rewriter(nil, nil) != nil {
		t.Error("Rewriter(nil, nil) is not nil")
	}
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"customer":"acme","text":"` + testKey + `","n":1}}}`
	tests := []struct {
		name   string
		names  []string
		values *ValuePatterns
		want   string
	}{
		{"names", []string{"customer"}, nil,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"customer":"[redacted]","text":"` + testKey + `","n":1}}}`},
		{"values", nil, mustValuePatterns(t, `sk-[A-Z]{20,}`),
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"customer":"acme","text":"[redacted]","n":1}}}`},
		{"both", []string{"customer"}, mustValuePatterns(t, `sk-[A-Z]{20,}`),
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"customer":"[redacted]","text":"[redacted]","n":1}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &store.Message{Frame: []byte(in)}
			got := Rewriter(tt.names, tt.values)(m)
			if string(got.Frame) != tt.want {
				t.Errorf("got  %s\nwant %s", got.Frame, tt.want)
			}
			if string(m.Frame) != in {
				t.Errorf("the message given was changed: %s", m.Frame)
			}
		})
	}
}

func TestValuePatterns_Frame(t *testing.T) {
	v := mustValuePatterns(t, `sk-[A-Z]{20,}`)
	tests := []struct{ name, in, want string }{
		{"a string member anywhere inside params",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"my key is ` + testKey + `"}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"[redacted]"}}}`},
		{"inside a result's content array",
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + testKey + `"}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"[redacted]"}]}}`},
		{"an array holding the string, at any depth, goes whole",
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"argv":["run",["--key","` + testKey + `"]],"n":[1,2]}}`,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"argv":"[redacted]","n":[1,2]}}`},
		{"an escaped string is judged decoded",
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"k":"sk-\u0041BCDEFGHIJKLMNOPQRSTUVWX"}}`,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"k":"[redacted]"}}`},
		{"the envelope is kept, an error's data is not",
			`{"jsonrpc":"2.0","id":"` + testKey + `","error":{"code":-1,"message":"bad key ` + testKey + `"}}`,
			`{"jsonrpc":"2.0","id":"` + testKey + `","error":{"code":-1,"message":"[redacted]"}}`},
		{"schemas are kept",
			`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"properties":{"k":{"default":"` + testKey + `"}}}}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"properties":{"k":{"default":"` + testKey + `"}}}}]}}`},
		{"numbers and short strings stay",
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"k":"sk-SHORT","n":12}}`,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"k":"sk-SHORT","n":12}}`},
		{"not JSON: as it came", `{"k": "` + testKey + `" oops`, `{"k": "` + testKey + `" oops`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &store.Message{Seq: 3, Frame: []byte(tt.in)}
			got := v.Rewrite(m)
			if string(got.Frame) != tt.want {
				t.Errorf("got  %s\nwant %s", got.Frame, tt.want)
			}
			if string(m.Frame) != tt.in {
				t.Errorf("the original message changed: %s", m.Frame)
			}
			if (got == m) != (tt.in == tt.want) || got.Seq != 3 {
				t.Errorf("Rewrite gave %p for %p: a copy is for a changed frame only", got, m)
			}
		})
	}
	var none *ValuePatterns
	if frame, n := none.Frame([]byte(`{"params":{"k":"` + testKey + `"}}`)); n != 0 || !reflect.DeepEqual(frame, []byte(`{"params":{"k":"`+testKey+`"}}`)) {
		t.Errorf("no patterns blanked %d values: %s", n, frame)
	}
}

func TestValuePatterns_Header(t *testing.T) {
	v := mustValuePatterns(t, `sk-[A-Z]{20,}`)
	in := http.Header{"X-Credential": {"plain", "Bearer " + testKey}, "Accept": {"application/json"}}
	out := v.Header(in)
	want := http.Header{"X-Credential": {"plain", Redacted}, "Accept": {"application/json"}}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("got %v, want %v", out, want)
	}
	if in["X-Credential"][1] != "Bearer "+testKey {
		t.Errorf("the original header changed: %v", in)
	}
	plain := http.Header{"Accept": {"application/json"}}
	if got := v.Header(plain); reflect.ValueOf(got).Pointer() != reflect.ValueOf(plain).Pointer() {
		t.Errorf("a header with nothing to blank was copied")
	}
	if (*ValuePatterns)(nil).Header(in)["X-Credential"][1] != "Bearer "+testKey {
		t.Errorf("no patterns blanked a header")
	}
}

// With Values the HTTP redactor hides what looks secret under any name,
// besides what is named so; forwarding keeps its own header and URL.
func TestHTTPRedactor_Values(t *testing.T) {
	r := NewHTTPRedactor([]string{"x-tenant"})
	r.Values = mustValuePatterns(t, `sk-[A-Z]{20,}`)

	in := http.Header{"X-Credential": {testKey}, "X-Tenant": {"acme"}, "Accept": {"application/json"}}
	want := http.Header{"X-Credential": {Redacted}, "X-Tenant": {Redacted}, "Accept": {"application/json"}}
	if got := r.Header(in); !reflect.DeepEqual(got, want) {
		t.Errorf("Header: got %v, want %v", got, want)
	}
	if in["X-Credential"][0] != testKey {
		t.Errorf("the forwarded header changed: %v", in)
	}

	tests := []struct {
		name, in, wantPath, wantURL string
	}{
		{"query value under any name",
			"http://h/mcp?org=" + testKey + "&region=eu",
			"/mcp?org=" + Redacted + "&region=eu",
			"http://h/mcp?org=" + Redacted + "&region=eu"},
		{"query value judged unescaped, written as it was",
			"http://h/mcp?org=sk%2DABCDEFGHIJKLMNOPQRSTUVWX&x=%zz&flag",
			"/mcp?org=" + Redacted + "&x=%zz&flag",
			"http://h/mcp?org=" + Redacted + "&x=%zz&flag"},
		{"a path segment",
			"https://h/servers/" + testKey + "/mcp",
			"/servers/" + Redacted + "/mcp",
			"https://h/servers/" + Redacted + "/mcp"},
		{"a user name that is a token",
			"https://" + testKey + "@h/mcp",
			"/mcp",
			"https://" + url.PathEscape(Redacted) + "@h/mcp"},
		{"nothing that looks secret",
			"http://h/a%20b/mcp?region=eu",
			"/a%20b/mcp?region=eu",
			"http://h/a%20b/mcp?region=eu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.PathQuery(u); got != tt.wantPath {
				t.Errorf("PathQuery = %s, want %s", got, tt.wantPath)
			}
			if got := r.URL(u); got != tt.wantURL {
				t.Errorf("URL = %s, want %s", got, tt.wantURL)
			}
			if u.String() != tt.in {
				t.Errorf("the URL itself changed to %s", u)
			}
		})
	}
}

// A key given on a server's command line is hidden in what the session
// stores; the rest of the line, and the default hiding, stay. --redact's
// names hide a flag's value as the credential names do, and a URL
// argument loses what a recorded URL would.
func TestHTTPRedactor_CommandLine(t *testing.T) {
	r := NewHTTPRedactor([]string{"tenant"})
	r.Values = mustValuePatterns(t, `sk-[A-Z]{20,}`, `org=[a-z]{4}`)
	tests := []struct {
		name string
		argv []string
		want string
	}{
		{"a bare argument", []string{"server", testKey, "--verbose"}, "server " + Redacted + " --verbose"},
		{"NAME=VALUE keeps its name", []string{"server", "--upstream-credential=" + testKey}, "server --upstream-credential=" + Redacted},
		{"a match across the = goes whole", []string{"server", "org=acme"}, "server " + Redacted},
		{"inside a URL's query", []string{"server", "https://h/mcp?k=" + testKey}, "server https://h/mcp?k=" + Redacted},
		{"a URL's path segment", []string{"server", "https://h/" + testKey + "/mcp"}, "server https://h/" + Redacted + "/mcp"},
		{"a URL's query parameter so named", []string{"server", "https://h/mcp?tenant=acme&page=2"}, "server https://h/mcp?tenant=" + Redacted + "&page=2"},
		{"a URL's query parameter named like a credential", []string{"server", "--url=https://h/mcp?api_key=k1"}, "server --url=https://h/mcp?api_key=" + Redacted},
		{"a URL's password", []string{"server", "https://u:pw@h/mcp"}, "server https://u:" + Redacted + "@h/mcp"},
		{"names still hide values", []string{"server", "--api-key", "short"}, "server --api-key " + Redacted},
		{"a flag so named", []string{"server", "--tenant", "acme", "--tenant=acme"}, "server --tenant " + Redacted + " --tenant=" + Redacted},
		{"nothing secret", []string{"server", "--port", "8080"}, "server --port 8080"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := append([]string(nil), tt.argv...)
			if got := r.CommandLine(tt.argv); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if !reflect.DeepEqual(tt.argv, before) {
				t.Errorf("the command line itself changed: %v", tt.argv)
			}
		})
	}
	if got, want := RedactCommandLine([]string{"s", testKey, "--tenant", "acme", "--token", "t"}), "s "+testKey+" --tenant acme --token "+Redacted; got != want {
		t.Errorf("defaults only: %s, want %s", got, want)
	}
	if got, want := (*HTTPRedactor)(nil).CommandLine([]string{"s", "--token", "t"}), "s --token t"; got != want {
		t.Errorf("nil redactor: %s, want %s", got, want)
	}
}

// StoredURL hides in a URL's text what URL hides in a parsed one, and
// leaves a placeholder URL wrote (escaped or not) as it was.
func TestHTTPRedactor_StoredURL(t *testing.T) {
	r := NewHTTPRedactor([]string{"tenant"})
	r.Values = mustValuePatterns(t, `sk-[A-Z]{20,}`)
	tests := []struct{ in, want string }{
		{"https://h/mcp?tenant=acme&x=1", "https://h/mcp?tenant=" + Redacted + "&x=1"},
		{"https://h/mcp/" + testKey + "?token=t#frag", "https://h/mcp/" + Redacted + "?token=" + Redacted + "#frag"},
		{"https://" + testKey + "@h/mcp", "https://" + Redacted + "@h/mcp"},
		{"https://u:%5Bredacted%5D@h/mcp", "https://u:%5Bredacted%5D@h/mcp"},
		{"https://u:[redacted]@h/mcp", "https://u:[redacted]@h/mcp"},
		{"https://u:pw@h", "https://u:" + Redacted + "@h"},
		{"not a url", "not a url"},
	}
	for _, tt := range tests {
		if got := r.StoredURL(tt.in); got != tt.want {
			t.Errorf("StoredURL(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
