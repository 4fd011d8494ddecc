// A TypeScript SDK client given mcpmock's HTTP listener at the wrong
// URL, as a host is by a user who cut the listening line short or picked
// the other transport: it connects the SSE client to /mcp, then the
// Streamable HTTP client to / and to /sse, and prints on stdout one JSON
// array of what each connect threw ("TRANSPORT PATH: message"), for the
// test that mcpmock's refusals name the endpoints.
//
// usage: node wrong-url-client.mjs BASE_URL   (http://HOST:PORT, no path)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const base = process.argv[2];
const seen = [];
for (const [kind, path] of [["sse", "/mcp"], ["http", "/"], ["http", "/sse"]]) {
  const url = new URL(path, base);
  const transport = kind === "sse" ? new SSEClientTransport(url) : new StreamableHTTPClientTransport(url);
  const client = new Client({ name: "wrong-url-client", version: "1.0.0" });
  try {
    await client.connect(transport);
    seen.push(`${kind} ${path}: connected`);
  } catch (e) {
    seen.push(`${kind} ${path}: ${String(e.message).trim()}`);
  }
  await client.close().catch(() => {});
}
console.log(JSON.stringify(seen));
