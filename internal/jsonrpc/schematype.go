package jsonrpc

import "bytes"

// SchemaType names a JSON value's JSON Schema type by its first byte:
// "object", "array", "string", "integer" (a number without fraction or
// exponent), "number", "boolean", "null"; "" for no value. It does not
// check the rest of the value, so that naming the type of a 64 MiB
// argument costs nothing.
func SchemaType(v []byte) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return ""
	}
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(v, ".eE") {
		return "number"
	}
	return "integer"
}
