// A TypeScript SDK client that leaves while a call waits for its answer:
// for replay's tests of a client gone mid-call. Usage:
//   node leave-mid-call-client.mjs ws|sse URL TOOL
// It connects over WebSocket or legacy HTTP+SSE, calls TOOL, and once a
// line comes on stdin (the server has the call) closes the client, which
// closes the WebSocket or drops the SSE stream. It prints one JSON array:
// "server NAME VERSION", then how the call ended.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";
import { WebSocket } from "ws";

// Node 20 has no global WebSocket; the SDK's transport expects one.
globalThis.WebSocket ??= WebSocket;

const [kind, url, tool] = process.argv.slice(2);
if (!["ws", "sse"].includes(kind) || !url || !tool) {
  console.error("usage: node leave-mid-call-client.mjs ws|sse URL TOOL");
  process.exit(2);
}
const transport = kind === "ws" ? new WebSocketClientTransport(new URL(url)) : new SSEClientTransport(new URL(url));
const client = new Client({ name: "leave-mid-call-client", version: "1.0.0" }, { capabilities: {} });
await client.connect(transport);
const v = client.getServerVersion();
const seen = [`server ${v.name} ${v.version}`];
const call = client.callTool({ name: tool }).then(
  (res) => `${tool}: answered ${JSON.stringify(res.content)}`,
  (err) => `${tool}: no answer (${err.message})`,
);
await new Promise((resolve) => process.stdin.once("data", resolve));
await client.close();
seen.push(await call);
console.log(JSON.stringify(seen));
process.exit(0);
