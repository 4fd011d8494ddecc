// Package mcpinspector holds interoperability tests with the MCP Inspector
// (npm @modelcontextprotocol/inspector, pinned in testdata/npm), the
// reference debugging client, in its scriptable CLI mode
// (`mcp-inspector --cli`): it records through mcpspy (stdio, Streamable
// HTTP, legacy HTTP+SSE) and talks to mcpmock (replaying its own
// recordings, and a shipped cassette another client made).
//
// Each inspector run is one short session: initialize, then
// logging/setLevel "debug" whenever the server declares logging, then the
// one method asked for (a tools/call lists the tools first), then it
// exits. Where the inspector behaves unlike the spec or its own README, a
// test here pins it, so that a new version that changes it is noticed.
//
// It has tests only; nothing may import it.
package mcpinspector
