// The TypeScript SDK v2 client (@modelcontextprotocol/client) runs one
// scenario against mcpmock serving an example script, in the era MODE
// asks for, and prints what it saw as one JSON array of lines on stdout:
// the scenarios of script-client.mjs (which drives the v1 SDK), for the
// interop tests of replay/script in the 2026-07-28 era as this SDK speaks
// it. A failure ends the transcript with a "fatal" line rather than a
// crash, so a test shows how far the client got.
//
// usage: node v2-script-client.mjs SCENARIO -- COMMAND [ARG...]
//        node v2-script-client.mjs SCENARIO --url URL
// env:   MODE  legacy (initialize) or pin (2026-07-28 only)
import { Client, StreamableHTTPClientTransport, LOG_LEVEL_META_KEY } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [scenario, how, ...rest] = process.argv.slice(2);
if (!scenario || (how !== "--" && how !== "--url") || rest.length === 0) {
  console.error("usage: node v2-script-client.mjs SCENARIO (-- COMMAND [ARG...] | --url URL)");
  process.exit(2);
}
const modes = { legacy: "legacy", pin: { pin: "2026-07-28" } };
const mode = modes[process.env.MODE || "legacy"];
if (!mode) {
  console.error(`MODE ${process.env.MODE}: want legacy or pin`);
  process.exit(2);
}
const modern = process.env.MODE === "pin";
const transport = how === "--url"
  ? new StreamableHTTPClientTransport(new URL(rest[0]))
  : new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" });

const seen = [];
// What each listChanged handler saw first, once the SDK has listed again.
const changes = {};
const changed = {};
for (const kind of ["tools", "prompts", "resources"]) {
  changed[kind] = new Promise((resolve) => {
    changes[kind] = {
      debounceMs: 0,
      onChanged: (error, items) => resolve(error ? `error ${error.message ?? error}` : (items || []).map((i) => i.name).join(",")),
    };
  });
}
const client = new Client({ name: "v2-script-client", version: "1.0.0" }, {
  // The url scenario's client takes URL elicitations too.
  capabilities: { elicitation: scenario === "url" ? { form: {}, url: {} } : {}, sampling: {}, roots: { listChanged: true } },
  versionNegotiation: { mode },
  listChanged: changes,
});
client.onerror = (e) => console.error(`v2-script-client: onerror: ${e?.message ?? e}`);

// The same replies in both eras: a handshake-era server asks mid-call, a
// 2026-07-28 one with input_required, which the SDK fulfils through these
// same handlers and then calls again.
client.setRequestHandler("elicitation/create", (req) => {
  seen.push(`asked: ${req.params.message}`);
  if (req.params.mode === "url") return { action: "accept" };
  const props = req.params.requestedSchema?.properties || {};
  if (props.language) return { action: "accept", content: { language: "French" } };
  if (props.allow) return { action: "accept", content: { allow: true } };
  return { action: "accept", content: { confirm: true, note: "from ts v2" } };
});
client.setRequestHandler("sampling/createMessage", (req) => {
  seen.push(`sampled: ${req.params.systemPrompt} | ${req.params.messages[0]?.content?.text} | ${req.params.maxTokens}`);
  return { role: "assistant", model: "ts-v2-model", content: { type: "text", text: "short" } };
});
client.setRequestHandler("roots/list", () => ({ roots: [{ uri: "file:///ts/v2", name: "root" }] }));
client.setNotificationHandler("notifications/message", (n) => seen.push(`log ${n.params.level} ${JSON.stringify(n.params.data)}`));

// A frame that does not parse is named alone: how JSON.parse words it is
// Node's business.
const errorLine = (e) => e instanceof SyntaxError ? "error SyntaxError" : `error ${e?.code ?? "-"} ${e?.message ?? e}`;
const text = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join(" | ");
const call = async (name, args, options) => {
  try {
    const r = await client.callTool({ name, arguments: args }, options);
    return `${r.isError ? "isError " : ""}${text(r)}`;
  } catch (e) {
    return errorLine(e);
  }
};

// The SDK rewrites some error codes it receives (-32002 becomes -32602)
// and drops, without a word, fields and notifications its era does not
// have, so what the server sent is also taken off the wire.
let wireCode;
const wire = [];
try {
  await client.connect(transport);
  const onmessage = transport.onmessage;
  transport.onmessage = (m, extra) => {
    if (m.error) wireCode = m.error.code;
    if (m.method === "notifications/elicitation/complete") wire.push(`wire ${m.method}`);
    if (m.method === "notifications/progress") wire.push(`wire progress ${m.params.progress}/${m.params.total} ${m.params.message}`);
    for (const r of Object.values(m.result?.inputRequests || {})) {
      wire.push(`wire input request ${r.method} ${Object.keys(r.params || {}).sort().join(",")}`);
    }
    onmessage?.(m, extra);
  };
  seen.push(`version ${client.getNegotiatedProtocolVersion()} server ${client.getServerVersion()?.name}`);
  switch (scenario) {
    case "pages": {
      // listTools without a cursor walks every page by itself; with one
      // it fetches that page. The first page alone takes a plain request.
      seen.push(`tools ${(await client.listTools()).tools.map((t) => t.name).join(",")}`);
      let page = await client.request({ method: "tools/list", params: {} });
      const pages = [page.tools.map((t) => t.name).join(",")];
      while (page.nextCursor && pages.length < 20) {
        page = await client.listTools({ cursor: page.nextCursor });
        pages.push(page.tools.map((t) => t.name).join(","));
      }
      seen.push(`pages ${pages.join(" | ")}`);
      try { await client.listTools({ cursor: "not-a-cursor" }); seen.push("badCursor answered"); } catch (e) { seen.push(`badCursor ${errorLine(e)}`); }
      const w = await client.callTool({ name: "weather", arguments: { city: "Paris" } });
      seen.push(`weather ${JSON.stringify(w.structuredContent)}`);
      break;
    }
    case "events": {
      // script-events.yaml: the second unlock changes the tools and the
      // server says so (2026-07-28: on the subscriptions/listen stream the
      // SDK opens for listChanged by itself).
      seen.push(`subscription ${client.autoOpenedSubscription ? JSON.stringify(client.autoOpenedSubscription.honoredFilter) : "none"}`);
      for (let i = 0; i < 2; i++) seen.push(`unlock: ${await call("unlock", {})}`);
      seen.push(`tools changed ${await changed.tools}`);
      seen.push(`tools ${(await client.listTools()).tools.map((t) => t.name).join(",")}`);
      seen.push(`status: ${await call("status", {})}`);
      // The 10th request changes the prompts and resources: how many
      // requests came before depends on the SDK, so call until it has.
      let both = false;
      Promise.all([changed.prompts, changed.resources]).then(() => { both = true; });
      for (let i = 0; i < 12 && !both; i++) await call("status", {});
      seen.push(`prompts changed ${await changed.prompts}`);
      seen.push(`resources changed ${await changed.resources}`);
      break;
    }
    case "progress": {
      // Logs at info and above: a 2026-07-28 request carries its level
      // in _meta, a handshake-era session sets it with logging/setLevel.
      let meta;
      if (modern) meta = { [LOG_LEVEL_META_KEY]: "info" };
      else await client.setLoggingLevel("info");
      // The SDK hands notifications to their handlers a microtask later,
      // but settles a response at once, dropping its progress handler:
      // progress it reads together with the answer is lost. A
      // handshake-era client gets a ping from mcpmock before the answer,
      // which keeps them apart; 2026-07-28 has no ping, so there only
      // the wire can say what was sent.
      const progress = [];
      const r = await client.callTool({ name: "build", arguments: { target: "app" }, ...(meta && { _meta: meta }) }, {
        onprogress: (p) => progress.push(`progress ${p.progress}/${p.total} ${p.message}`),
      });
      if (!modern) seen.push(...progress);
      seen.push(...wire);
      seen.push(`build: ${text(r)}`);
      break;
    }
    case "errors": {
      seen.push(`divide: ${await call("divide", { a: 1, b: 0 })}`);
      seen.push(`invalid: ${await call("divide", { a: 1 })}`);
      seen.push(`strict: ${await call("strict", { count: 0 })}`);
      seen.push(`broken: ${await call("broken", { q: 1 })}`);
      try { await client.callTool({ name: "broken", arguments: { q: 1 } }); } catch (e) { seen.push(`broken data ${JSON.stringify(e.data ?? null)}`); }
      seen.push(`nosuch: ${await call("nosuch", {})}`);
      break;
    }
    case "elicit": {
      // A tool, a prompt and a resource that each ask the user first.
      seen.push(`deploy: ${await call("deploy", { service: "web" })}`);
      try {
        const p = await client.getPrompt({ name: "translate", arguments: { text: "hello" } });
        seen.push(`translate: ${p.messages.map((m) => m.content.text).join(" | ")}`);
      } catch (e) { seen.push(`translate: ${errorLine(e)}`); }
      try {
        const r = await client.readResource({ uri: "file:///secrets.env" });
        seen.push(`secrets: ${r.contents.map((c) => c.text).join(" | ")}`);
      } catch (e) { seen.push(`secrets: ${errorLine(e)}`); }
      // What is not there: 2026-07-28 replaced -32002 (resource not
      // found) with -32602.
      try { await client.readResource({ uri: "file:///nowhere.txt" }); seen.push("nowhere: answered"); } catch (e) { seen.push(`nowhere: ${errorLine(e)} (wire ${wireCode}, data ${JSON.stringify(e.data ?? null)})`); }
      try { await client.getPrompt({ name: "nosuch" }); seen.push("nosuch: answered"); } catch (e) { seen.push(`nosuch: ${errorLine(e)}`); }
      break;
    }
    case "sample": {
      seen.push(`summarize: ${await call("summarize", { text: "a long story" })}`);
      seen.push(`workspace: ${await call("workspace", {})}`);
      break;
    }
    case "hang": {
      // The client gives up on a call that never ends; the server goes on.
      seen.push(`hang: ${await call("hang", {}, { timeout: 300 })}`);
      seen.push(`ok: ${await call("ok", {})}`);
      break;
    }
    case "url": {
      // A URL elicitation (gosdk_elicit_url_test.go's script), from a
      // tool and from a resource.
      client.setNotificationHandler("notifications/elicitation/complete", (n) => seen.push(`complete ${n.params.elicitationId ? "with id" : "without id"}`));
      seen.push(`connect: ${await call("connect", { service: "mail" })}`);
      const r = await client.readResource({ uri: "mcpmock://inbox" });
      seen.push(`inbox: ${r.contents.map((c) => c.text).join(" | ")}`);
      seen.push(...wire);
      break;
    }
    case "faults": {
      // script-faults.yaml: each fault, then a call that works. An
      // answer that never comes as one (wrong-id, and malformed over
      // stdio) is waited for a second.
      for (const name of ["unavailable", "unauthorized", "forbidden", "wrong-id", "duplicate", "malformed", "expire", "close"]) {
        const lost = name === "wrong-id" || name === "malformed";
        seen.push(`${name}: ${await call(name, {}, lost ? { timeout: 1000 } : undefined)}`);
        seen.push(`ok: ${await call("ok", {})}`);
      }
      break;
    }
    default:
      throw new Error(`unknown scenario ${scenario}`);
  }
} catch (e) {
  seen.push(`fatal ${errorLine(e)}`);
}
await client.close().catch(() => {});
console.log(JSON.stringify(seen));
process.exit(0);
