// A TypeScript SDK client for replay/script's TestTSClient_SSEErrorResumes:
// over Streamable HTTP it calls "succeed" and then "fail" on
// replay/script/testdata/sse-notify-then-error.yaml, whose answers are event
// streams (a log notification, a progress step, then a result or a JSON-RPC
// error). It keeps the session open until the transport resumes a stream
// (a GET with Last-Event-ID) or RESUME_WAIT_MS pass, then prints one JSON
// line: the timeline of what the caller saw, each call's last event id,
// the error and the resume. After a resume it stays AFTER_RESUME_MS longer
// (3000 by default), past the SDK's next reconnection delays, so that
// reconnections that follow the resume show up in transportErrors.
//
// usage: node sse-error-client.mjs URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const url = process.argv[2];
// The SDK's default first reconnection delay is 1000 ms (mcpmock sends no
// retry field); wait well past it before concluding there is no resume.
const resumeWait = Number(process.env.RESUME_WAIT_MS || 10000);
const afterResume = Number(process.env.AFTER_RESUME_MS || 3000);

const t0 = Date.now();
const timeline = [];
const note = (s) => timeline.push(s);

let sawResume;
const resumed = new Promise((resolve) => { sawResume = resolve; });
let resume = null;
// The transport's fetch, unchanged but watched: a GET carrying
// Last-Event-ID is the transport resuming a stream on its own.
async function watchedFetch(input, init) {
  const lastEventID = new Headers(init?.headers).get("last-event-id");
  if (init?.method !== "GET" || !lastEventID) return fetch(input, init);
  note(`resume GET Last-Event-ID ${lastEventID}`);
  const r = { lastEventID, atMs: Date.now() - t0, status: null };
  resume ??= r;
  try {
    const res = await fetch(input, init);
    r.status = res.status;
    return res;
  } finally {
    sawResume();
  }
}

const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: watchedFetch });
const client = new Client({ name: "sse-error-client", version: "1.0.0" });
const transportErrors = [];
client.onerror = (e) => transportErrors.push(String(e.message ?? e));
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => note(`log ${n.params.data}`));

const out = { tokens: {} };
async function call(name) {
  const start = Date.now();
  const opts = {
    onprogress: (p) => note(`progress ${p.progress}/${p.total} ${p.message}`),
    onresumptiontoken: (id) => { out.tokens[name] = id; },
  };
  try {
    const r = await client.callTool({ name, arguments: {} }, undefined, opts);
    note(`result ${r.content?.[0]?.text}`);
  } catch (e) {
    note(`error ${e.code}`);
    out.error = { type: e.constructor.name, code: e.code ?? null, message: String(e.message ?? e), data: e.data ?? null, afterMs: Date.now() - start };
  }
}

try {
  await client.connect(transport);
  out.protocolVersion = transport.protocolVersion ?? null;
  await call("succeed");
  await call("fail");
  const waited = await Promise.race([
    resumed.then(() => true),
    new Promise((resolve) => setTimeout(() => resolve(false), resumeWait)),
  ]);
  if (!waited) note(`no resume within ${resumeWait} ms`);
  else await new Promise((resolve) => setTimeout(resolve, afterResume));
} catch (e) {
  out.fatal = String(e?.stack ?? e);
}
out.timeline = timeline;
out.resume = resume;
out.transportErrors = transportErrors;
await client.close();
console.log(JSON.stringify(out));
process.exit(0);
