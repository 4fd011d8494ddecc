// A TypeScript-SDK client session against server-everything over stdio:
// the exchange the shipped cassette holds, and the interop test's client.
//
// Usage: node stdio-everything.mjs COMMAND [ARG...]
// COMMAND is what the client spawns: server-everything itself, or mcpspy
// wrapping it. Prints one JSON object with what the client saw.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node stdio-everything.mjs COMMAND [ARG...]");
  process.exit(2);
}
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "mcptape-interop", version: "1.0.0" });
await client.connect(transport);

const seen = { server: client.getServerVersion() };
seen.tools = (await client.listTools()).tools.map((t) => t.name).sort();
const call = (name, args, extra) => client.callTool({ name, arguments: args }, undefined, extra);
seen.echo = await call("echo", { message: "hello from mcptape" });
seen.sum = await call("get-sum", { a: 2, b: 3 });
seen.structured = await call("get-structured-content", { location: "New York" });
const image = await call("get-tiny-image", {});
seen.image = image.content.map((c) => ({ type: c.type, mimeType: c.mimeType ?? null, bytes: c.data ? c.data.length : 0 }));
const progress = [];
seen.long = await call("trigger-long-running-operation", { duration: 0.3, steps: 3 }, {
  onprogress: (p) => progress.push(p),
});
seen.progress = progress;
await client.close();
process.stdout.write(JSON.stringify(seen) + "\n");
