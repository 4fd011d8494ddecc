// The TypeScript SDK v2 client (@modelcontextprotocol/client), which speaks
// both eras: it pages through tools/list, calls one tool, and prints what
// it saw as one JSON array on stdout; for the interop tests of mcpspy and
// mcpmock with the 2026-07-28 era as this SDK speaks it.
//
// usage: node v2-client.mjs TOOL ARGS_JSON -- COMMAND [ARG...]
//        node v2-client.mjs TOOL ARGS_JSON --url URL
// env:   MODE  legacy (the SDK's default: initialize), auto (server/discover
//              first, falling back to initialize; over stdio the SDK probes
//              on a sibling process of its own), or pin (2026-07-28 only)
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [tool, argsJSON, how, ...rest] = process.argv.slice(2);
if (!tool || !argsJSON || (how !== "--" && how !== "--url") || rest.length === 0) {
  console.error("usage: node v2-client.mjs TOOL ARGS_JSON (-- COMMAND [ARG...] | --url URL)");
  process.exit(2);
}
const modes = { legacy: "legacy", auto: "auto", pin: { pin: "2026-07-28" } };
const mode = modes[process.env.MODE || "legacy"];
if (!mode) {
  console.error(`MODE ${process.env.MODE}: want legacy, auto or pin`);
  process.exit(2);
}
const transport = how === "--url"
  ? new StreamableHTTPClientTransport(new URL(rest[0]))
  : new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" });
const client = new Client({ name: "v2-client", version: "1.0.0" }, { capabilities: {}, versionNegotiation: { mode } });

const seen = [];
await client.connect(transport);
seen.push(`version ${client.getNegotiatedProtocolVersion()}`);
const pages = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : undefined);
  pages.push(page.tools.map((t) => t.name).join(","));
  cursor = page.nextCursor;
} while (cursor && pages.length < 20);
seen.push(`tools ${pages.join(" | ")}`);
const res = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON) });
const text = (res.content || []).filter((c) => c.type === "text").map((c) => c.text).join(" | ");
seen.push(`call ${tool}: ${res.isError ? "error: " : ""}${text}`);
await client.close();
console.log(JSON.stringify(seen));
