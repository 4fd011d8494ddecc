// A TypeScript SDK client over WebSocket that calls tools without
// arguments, for vcr's WebSocketURL test. Usage:
//   node ws-call-client.mjs URL TOOL...
// It prints one JSON array on stdout: "server NAME VERSION", then
// "TOOL: TEXT" for each call (" (isError)" added to an error result).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";
import { WebSocket } from "ws";

// Node 20 has no global WebSocket; the SDK's transport expects one.
globalThis.WebSocket ??= WebSocket;

const [url, ...tools] = process.argv.slice(2);
if (!url || tools.length === 0) {
  console.error("usage: node ws-call-client.mjs URL TOOL...");
  process.exit(2);
}
const client = new Client({ name: "ws-call-client", version: "1.0.0" }, { capabilities: {} });
await client.connect(new WebSocketClientTransport(new URL(url)));
const v = client.getServerVersion();
const seen = [`server ${v.name} ${v.version}`];
for (const tool of tools) {
  const res = await client.callTool({ name: tool });
  const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join(" | ");
  seen.push(`${tool}: ${text}${res.isError ? " (isError)" : ""}`);
}
console.log(JSON.stringify(seen));
await client.close();
