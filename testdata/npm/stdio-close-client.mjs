// A Node test that drives `mcpmock serve` over stdio with the TypeScript
// SDK client and ends while a call still waits for its answer (a script's
// long delay): StdioClientTransport.close() ends mcpmock's stdin, waits
// up to 2 s for it to exit, and only then sends SIGTERM. It prints one
// JSON object: whether close() had to send a signal, mcpmock's exit code
// and signal, what became of the call, and the report.
//
// usage: node stdio-close-client.mjs MCPMOCK REPORT SOURCE TOOL
import { readFile } from "node:fs/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [mcpmock, reportFile, source, tool] = process.argv.slice(2);

const transport = new StdioClientTransport({ command: mcpmock, args: ["serve", "--strict", "--report", reportFile, source], stderr: "inherit" });
const client = new Client({ name: "host-under-test", version: "1.0.0" });
await client.connect(transport);

// The SDK keeps its child private; the test watches it to tell an exit
// at the end of stdin from one close() forced with a signal.
const child = transport._process;
if (!child) throw new Error("StdioClientTransport has no _process: the SDK changed, adapt this test");
const signals = [];
const kill = child.kill.bind(child);
child.kill = (signal) => { signals.push(signal ?? "SIGTERM"); return kill(signal); };
const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));

// The call is sent and waits; the test ends before its answer, as a test
// that fails or times out does.
const sent = new Promise((resolve) => {
  const send = transport.send.bind(transport);
  transport.send = async (msg, opts) => { await send(msg, opts); if (msg.method === "tools/call") resolve(); };
});
const call = client.callTool({ name: tool, arguments: {} }).then(
  () => "answered",
  (e) => `failed: ${e.message}`,
);
await sent;
await client.close();
const exit = await exited;
const report = JSON.parse(await readFile(reportFile, "utf8"));
console.log(JSON.stringify({ signals, exit, call: await call, report }));
