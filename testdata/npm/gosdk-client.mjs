// A TypeScript SDK client (handshake era) that runs the scenario of the
// go-sdk test server (internal/peertest/gosdkserver), recorded or
// replayed, and prints what it saw as one JSON array on stdout; for
// replay's tests of 2026-07-28 recordings replayed across eras.
//
// usage: node gosdk-client.mjs COMMAND [ARG...]
// env:   TOKEN  the progress token to send (default "tok")
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const token = process.env.TOKEN || "tok";
const seen = [];
const client = new Client({ name: "gosdk-client", version: "1.0.0" }, { capabilities: { elicitation: {} } });
let listChanged;
const changed = new Promise((resolve) => (listChanged = resolve));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => listChanged());
client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content: { name: "Ada" } }));

const text = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join(" | ");
const call = async (name, a = {}, extra) => seen.push(`call ${name}: ${text(await client.callTool({ name, arguments: a, ...extra?.params }, undefined, extra?.options))}`);
const tools = async () => seen.push(`tools ${(await client.listTools()).tools.map((t) => t.name).join(",")}`);

try {
  await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
  const v = client.getServerVersion();
  seen.push(`server ${v.name} ${v.version}`);
  await tools();
  await call("echo", { text: "hello" });
  await call("sum", { a: 2, b: 40 });
  await call("counter");
  await call("counter");
  const progress = [];
  await call("slow", {}, { params: { _meta: { progressToken: token } }, options: { onprogress: (p) => progress.push(`${p.progress}/${p.total} ${p.message}`) } });
  seen.push(`progress ${progress.join(", ")}`);
  await call("confirm");
  await call("grow");
  await Promise.race([changed, new Promise((_, reject) => setTimeout(() => reject(new Error("no tools/list_changed within 10 s")), 10000))]);
  seen.push("list_changed");
  await tools();
  await client.close();
  process.stdout.write(JSON.stringify(seen) + "\n");
  process.exit(0);
} catch (e) {
  console.error(e);
  process.stdout.write(JSON.stringify(seen) + "\n");
  process.exit(1);
}
