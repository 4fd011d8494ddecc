package script_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const numbersScript = `server: {name: numbers, version: "1"}
tools:
  - name: get
    inputSchema: {type: object, properties: {id: {type: integer}, ratio: {type: number}}}
    answers:
      - when: {exact: {id: 9007199254740993}}
        text: special
      - when: {exact: {id: 18446744073709551617}}
        text: beyond 2^64
      - when: {subset: {ratio: 0.30000000000000000001}}
        text: nearly three tenths
      - when: {subset: {id: 1.0}}
        text: one
      - when: {exact: {ratio: 0.1}}
        text: a tenth
      - text: '{{.args.id}} {{json .args}} {{printf "%.0f" .args.id}} {{printf "%d" .args.id}} {{printf "%.2f" .args.id}}{{if eq .args.id 12345678901234567}} eq{{end}}{{if gt .args.id 10}} gt{{end}}{{if lt .args.id 12345678901234568.0}} lt{{end}}'
`

// TestGoSDK_BigIntegersExact: integers beyond 2^53 that a go-sdk client
// sends are matched and printed with their own digits, not a float64's.
func TestGoSDK_BigIntegersExact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "numbers.yaml")
	if err := os.WriteFile(path, []byte(numbersScript), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"exact above 2^53", map[string]any{"id": int64(9007199254740993)}, "special"},
		{"neighbour of it", map[string]any{"id": int64(9007199254740992)}, `9007199254740992 {"id":9007199254740992} 9007199254740992 9007199254740992 9007199254740992.00 gt lt`},
		{"printed and compared exactly", map[string]any{"id": int64(12345678901234567)}, `12345678901234567 {"id":12345678901234567} 12345678901234567 12345678901234567 12345678901234567.00 eq gt lt`},
		{"exact above 2^64, written in the script", map[string]any{"id": json.Number("18446744073709551617")}, "beyond 2^64"},
		{"its neighbour, the same float64", map[string]any{"id": json.Number("18446744073709551616")}, `18446744073709551616 {"id":18446744073709551616} 18446744073709551616 18446744073709551616 18446744073709551616.00 gt`},
		{"a fraction finer than a float64, written in the script", map[string]any{"ratio": json.Number("0.30000000000000000001")}, "nearly three tenths"},
		{"its float64", map[string]any{"id": 5, "ratio": 0.3}, `5 {"id":5,"ratio":0.3} 5 5 5.00 lt`},
		{"1 matches 1.0", map[string]any{"id": 1}, "one"},
		{"0.1 matches 0.1", map[string]any{"ratio": 0.1}, "a tenth"},
		{"small integer as digits", map[string]any{"id": 12345678}, `12345678 {"id":12345678} 12345678 12345678 12345678.00 gt lt`},
	}
	for _, tc := range []transportCase{transports[0], transports[3]} {
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, tc, path, nil)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "get", Arguments: tt.args})
					if err != nil {
						t.Fatal(err)
					}
					if got := text(t, res); got != tt.want || res.IsError {
						t.Errorf("got %q (isError %v), want %q", got, res.IsError, tt.want)
					}
				})
			}
		})
	}
}
