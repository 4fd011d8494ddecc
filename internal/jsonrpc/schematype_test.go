package jsonrpc

import "testing"

func TestSchemaType(t *testing.T) {
	tests := []struct{ name, v, want string }{
		{"object", ` {"a":1}`, "object"},
		{"array", "[1]", "array"},
		{"string", `"x"`, "string"},
		{"true", "true", "boolean"},
		{"false", "false", "boolean"},
		{"null", "null", "null"},
		{"integer", "-42", "integer"},
		{"fraction", "4.2", "number"},
		{"exponent", "42e1", "number"},
		{"nothing", " \n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SchemaType([]byte(tt.v)); got != tt.want {
				t.Errorf("SchemaType(%q) = %q, want %q", tt.v, got, tt.want)
			}
		})
	}
}
