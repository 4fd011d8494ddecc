package jsonrpc

import "bytes"

// Multi round-trip requests (2026-07-28, SEP-2322): a server that needs
// input to finish a request answers it with resultType "input_required"
// and inputRequests, each naming a method the client fulfils itself; the
// client then sends the request again with inputResponses and the
// server's requestState. lint, replay, rerun and the fallback all need to
// know which requests and methods take part.

// MayAskForInput reports whether a request of method may be answered
// input_required.
func MayAskForInput(method string) bool {
	switch method {
	case "tools/call", "prompts/get", "resources/read":
		return true
	}
	return false
}

// IsInputRequestMethod reports whether an input request may name method.
func IsInputRequestMethod(method string) bool {
	switch method {
	case "elicitation/create", "sampling/createMessage", "roots/list":
		return true
	}
	return false
}

// AsksForInput reports whether result (a response's result member, as
// written) has resultType "input_required".
func AsksForInput(result []byte) bool {
	// Replay asks this of every recorded result, nearly all of them
	// without the word: a byte search rules those out faster than a
	// scan, unless an escape could spell it.
	if !containsInputRequired(result) && !bytes.Contains(result, unicodeEscape) {
		return false
	}
	asks := false
	members(result, func(key []byte, escaped bool, v []byte) {
		if keyIs(key, escaped, "resultType") {
			asks = isInputRequired(v)
		}
	})
	return asks
}

var (
	inputRequiredWord = []byte("input_required")
	unicodeEscape     = []byte(`\u`)
)

// containsInputRequired is bytes.Contains(b, inputRequiredWord), looking
// for its '_' only: most results have none, and a byte is found with SIMD
// where a word is compared at every 'i' (replay's load spent more on
// bytes.Contains than on the scan of the results).
func containsInputRequired(b []byte) bool {
	const before = len("input")
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '_')
		if j < 0 {
			return false
		}
		at := i + j - before // where the word would start
		if at >= 0 && len(b)-at >= len(inputRequiredWord) && string(b[at:at+len(inputRequiredWord)]) == string(inputRequiredWord) {
			return true
		}
		i += j + 1
	}
}

func isInputRequired(resultType []byte) bool {
	rt, _ := stringValue(resultType)
	return rt == "input_required"
}
