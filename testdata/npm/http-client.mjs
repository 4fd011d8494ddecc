// An MCP client on the TypeScript SDK, for mcpspy's HTTP/WebSocket
// recording tests. Usage:
//   node http-client.mjs streamable|sse|ws URL ECHO_TOOL ECHO_ARGS_JSON [PROGRESS_TOOL PROGRESS_ARGS_JSON]
// It connects, lists tools, calls the echo tool, optionally calls a tool
// that reports progress, waits for the notifications it expects, closes
// (a Streamable HTTP session is terminated with DELETE) and prints one JSON
// line with what it saw.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";
import { WebSocket } from "ws";

const [mode, url, echoTool, echoArgs, progressTool, progressArgs] = process.argv.slice(2);

// Node 20 has no global WebSocket; the SDK's transport expects one.
globalThis.WebSocket ??= WebSocket;

let transport;
switch (mode) {
  case "streamable": transport = new StreamableHTTPClientTransport(new URL(url)); break;
  case "sse": transport = new SSEClientTransport(new URL(url)); break;
  case "ws": transport = new WebSocketClientTransport(new URL(url)); break;
  default: console.error(`unknown mode ${mode}`); process.exit(2);
}

const client = new Client({ name: "ts-client", version: "1.0.0" }, { capabilities: {} });
const out = { mode };
await client.connect(transport);
out.sessionId = transport.sessionId ?? null;
out.server = client.getServerVersion()?.name;
out.tools = (await client.listTools()).tools.length;
const echo = await client.callTool({ name: echoTool, arguments: JSON.parse(echoArgs) });
out.echo = echo.content?.[0]?.text;
if (progressTool) {
  let progress = 0;
  const res = await client.callTool(
    { name: progressTool, arguments: JSON.parse(progressArgs) },
    undefined,
    { onprogress: () => { progress++; } },
  );
  // Progress callbacks may run after the result has resolved: let pending
  // tasks run before counting.
  await new Promise((r) => setImmediate(r));
  out.progress = progress;
  out.progressResult = res.content?.[0]?.text;
}
if (mode === "streamable") {
  await transport.terminateSession();
}
await client.close();
console.log(JSON.stringify(out));
