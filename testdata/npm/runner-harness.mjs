// What a Node test suite (vitest, jest, node:test) does with mcpmock, as
// docs/REPLAY.md shows it: start `mcpmock serve --http 127.0.0.1:0` per
// test, wait for its listening line, connect the TypeScript SDK client to
// the URL it names, and in afterEach stop it with SIGTERM (what
// ChildProcess.kill() sends) and wait for its exit before reading the
// report. It prints one JSON object: the exit code, the tool's answer,
// and the report.
//
// usage: node runner-harness.mjs MCPMOCK REPORT SOURCE TOOL [ARGS_JSON]
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mcpmock, reportFile, source, tool, args = "{}"] = process.argv.slice(2);

// beforeEach
function startMock(...argv) {
  const proc = spawn(mcpmock, ["serve", "--http", "127.0.0.1:0", "--exit-with-parent", ...argv], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  const url = new Promise((resolve, reject) => {
    // Keep reading stderr for as long as mcpmock runs: a pipe nobody
    // drains fills up, and then mcpmock waits on its next warning.
    proc.stderr.on("data", (chunk) => {
      stderr += chunk;
      const m = /^mcpmock: listening on (\S+)$/m.exec(stderr);
      if (m) resolve(m[1]);
    });
    proc.on("exit", (code) => reject(new Error(`mcpmock exited ${code} before listening:\n${stderr}`)));
  });
  return { proc, url, stderr: () => stderr };
}

const mock = startMock("--strict", "--report", reportFile, source);
const client = new Client({ name: "host-under-test", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(await mock.url)));

// the test
let answer;
try {
  answer = await client.callTool({ name: tool, arguments: JSON.parse(args) });
} catch (e) {
  answer = { error: e.message };
}

// afterEach: the client is left connected, as a failed test leaves it.
const exited = once(mock.proc, "exit");
mock.proc.kill(); // SIGTERM
const [code] = await exited;
const report = JSON.parse(await readFile(reportFile, "utf8"));
console.log(JSON.stringify({ code, answer, report }));
process.exit(0); // the client's reconnect attempts would keep node up
