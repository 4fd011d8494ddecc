// Package mcpgo holds interoperability tests with github.com/mark3labs/mcp-go,
// the second most used Go MCP SDK after go-sdk: its client and server talk
// through mcpspy (recording, stdio and Streamable HTTP) and its client to
// mcpmock (replaying those recordings, and serving a shipped script).
//
// It has tests only; nothing may import it, and mcp-go must stay a
// test-only dependency of the module (the product never imports it).
// Where mcp-go behaves unlike the spec or unlike go-sdk, a test here pins
// it, so that a new mcp-go version that changes it is noticed.
package mcpgo
