// A TypeScript SDK client that calls one tool without arguments (the SDK
// then leaves "arguments" out of the request) and prints the types of the
// content it got as one JSON array on stdout; for replay's interop tests.
//
// usage: node call-client.mjs TOOL -- COMMAND [ARG...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [tool, dashes, command, ...args] = process.argv.slice(2);
if (dashes !== "--" || !command) {
  console.error("usage: node call-client.mjs TOOL -- COMMAND [ARG...]");
  process.exit(2);
}
const client = new Client({ name: "call-client", version: "1.0.0" }, { capabilities: {} });
await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
const res = await client.callTool({ name: tool });
const seen = (res.content ?? []).map((c) => c.type);
if (res.isError) seen.push(`isError: ${res.content?.[0]?.text}`);
console.log(JSON.stringify(seen));
await client.close();
