// Package tsv2 holds interoperability tests with the TypeScript SDK v2
// (npm @modelcontextprotocol/client and @modelcontextprotocol/server 2.4.0,
// pinned in testdata/npm), the first TypeScript peer that speaks the
// stateless 2026-07-28 era: its client records through mcpspy (stdio and
// Streamable HTTP) against its own server, then talks to mcpmock replaying
// that recording, in each of its version negotiation modes (legacy:
// initialize, the default; auto: server/discover, falling back to
// initialize; pin: 2026-07-28 only).
//
// The client is testdata/npm/v2-client.mjs, which prints what it saw as a
// transcript: the replay must show it the same as the live server did.
// Where the SDK behaves unlike the spec, or in a way a recording shows
// (over stdio it probes on a process of its own), a test here pins it, so
// that a new version that changes it is noticed.
//
// It has tests only; nothing may import it.
package tsv2
