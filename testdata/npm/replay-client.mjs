// A TypeScript SDK client for mcpmock's interop tests. It runs one fixed
// scenario against server-everything (live or replayed) and prints what it
// saw as one JSON array on stdout.
//
// usage: node replay-client.mjs stdio COMMAND [ARG...]
//        node replay-client.mjs http|sse|ws URL
// env:   TOKEN  the progress token to send (default "tok")
//        WAIT_LIST_CHANGED=0  do not wait for list_changed after initialized
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";
import {
  ListRootsRequestSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import WebSocket from "ws";

const [mode, ...rest] = process.argv.slice(2);
const token = process.env.TOKEN || "tok";

function transportFor() {
  switch (mode) {
    case "stdio":
      return new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" });
    case "http":
      return new StreamableHTTPClientTransport(new URL(rest[0]));
    case "sse":
      return new SSEClientTransport(new URL(rest[0]));
    case "ws":
      globalThis.WebSocket = WebSocket; // Node 20 has none
      return new WebSocketClientTransport(new URL(rest[0]));
  }
  throw new Error(`unknown mode ${mode}`);
}

const seen = [];
const client = new Client({ name: "replay-client", version: "1.0.0" }, { capabilities: { roots: { listChanged: true } } });
let listChanged;
const listChangedSeen = new Promise((resolve) => (listChanged = resolve));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => listChanged());
client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///tmp/replay", name: "replay" }] }));

function within(p, what, ms = 10000) {
  return Promise.race([p, new Promise((_, reject) => setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms))]);
}

const text = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join(" | ") + (r.isError ? " (isError)" : "");

try {
  await client.connect(transportFor());
  const v = client.getServerVersion();
  seen.push(`server ${v.name} ${v.version}`);
  // server-everything sends list_changed right after initialized on stdio;
  // over Streamable HTTP it does not (WAIT_LIST_CHANGED=0): then the
  // transcript only says, at the end, whether one came.
  let gotListChanged = false;
  listChangedSeen.then(() => (gotListChanged = true));
  if (process.env.WAIT_LIST_CHANGED !== "0") {
    await within(listChangedSeen, "tools/list_changed after initialized");
  }
  const tools = await client.listTools();
  seen.push(`tools ${tools.tools.map((t) => t.name).sort().join(",")}`);
  seen.push(`echo: ${text(await client.callTool({ name: "echo", arguments: { message: "hi" } }))}`);
  seen.push(`get-sum: ${text(await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } }))}`);
  const progress = [];
  const long = await client.callTool(
    { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 }, _meta: { progressToken: token } },
    undefined,
    { onprogress: (p) => progress.push(`${p.progress}/${p.total}`) },
  );
  seen.push(`long: ${text(long)}`);
  seen.push(`progress ${progress.join(" ")}`);
  seen.push(`roots: ${text(await client.callTool({ name: "get-roots-list", arguments: {} }))}`);
  seen.push(`list_changed ${gotListChanged}`);
  await client.close();
  process.stdout.write(JSON.stringify(seen) + "\n");
  process.exit(0);
} catch (e) {
  process.stderr.write(`replay-client: ${e.stack || e}\nseen so far: ${JSON.stringify(seen)}\n`);
  process.exit(1);
}
