// A TypeScript SDK client that runs one scenario against mcpmock (serving
// a script, or a cassette) and prints what it saw as one JSON line on
// stdout, for the interop tests of replay/script and replay.
//
// usage: node script-client.mjs SCENARIO --url URL
//        node script-client.mjs SCENARIO -- COMMAND [ARG...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [scenario, how, ...rest] = process.argv.slice(2);
const newTransport = () => how === "--url"
  ? new StreamableHTTPClientTransport(new URL(rest[0]))
  : new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" });
const transport = newTransport();

let toolsChanged;
const changed = new Promise((resolve) => { toolsChanged = resolve; });
const client = new Client({ name: "script-ts-client", version: "1.0.0" }, {
  capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } },
  listChanged: {
    tools: {
      autoRefresh: true,
      debounceMs: 0,
      onChanged: (error, tools) => toolsChanged({ error: error ? String(error) : null, tools: (tools || []).map((t) => t.name) }),
    },
  },
});
const logs = [];
const asked = [];
client.setRequestHandler(ElicitRequestSchema, (req) => {
  asked.push(req.params.message);
  if (req.params.requestedSchema?.properties?.name) {
    return { action: "accept", content: { name: "Ada" } }; // the go-sdk test server's confirm
  }
  return { action: "accept", content: { confirm: true, note: "from ts" } }; // script-elicit's deploy
});
const sampled = [];
client.setRequestHandler(CreateMessageRequestSchema, (req) => {
  sampled.push({ system: req.params.systemPrompt, text: req.params.messages[0]?.content?.text, maxTokens: req.params.maxTokens });
  return { role: "assistant", model: "ts-model", content: { type: "text", text: "short" } };
});
client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: "file:///ts/root", name: "root" }] }));
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logs.push(n.params.level); });

function errorOf(e) {
  return { code: e.code ?? null, message: String(e.message ?? e), data: e.data ?? null };
}
const firstText = (r) => (r.content && r.content[0] && r.content[0].text) || null;

const out = {};
try {
  await client.connect(transport);
  out.server = client.getServerVersion()?.name;
  out.protocolVersion = transport.protocolVersion ?? null;
  switch (scenario) {
    case "pages": {
      const pages = [];
      let cursor;
      do {
        const r = await client.listTools(cursor ? { cursor } : {});
        pages.push(r.tools.map((t) => t.name));
        cursor = r.nextCursor;
      } while (cursor);
      out.pages = pages;
      try { await client.listTools({ cursor: "not-a-cursor" }); out.badCursor = null; } catch (e) { out.badCursor = errorOf(e); }
      const w = await client.callTool({ name: "weather", arguments: { city: "Paris" } });
      out.structured = w.structuredContent;
      break;
    }
    case "events": {
      out.calls = [];
      for (let i = 0; i < 2; i++) out.calls.push(firstText(await client.callTool({ name: "unlock", arguments: {} })));
      out.changed = await changed;
      out.tools = (await client.listTools()).tools.map((t) => t.name);
      out.status = firstText(await client.callTool({ name: "status", arguments: {} }));
      break;
    }
    case "progress": {
      const progress = [];
      const r = await client.callTool({ name: "build", arguments: { target: "app" } }, undefined, {
        onprogress: (p) => progress.push([p.progress, p.total, p.message]),
      });
      out.text = firstText(r);
      out.progress = progress;
      out.logs = logs;
      break;
    }
    case "elicit": {
      out.text = firstText(await client.callTool({ name: "deploy", arguments: { service: "web" } }));
      out.asked = asked;
      break;
    }
    case "sample": {
      out.summary = firstText(await client.callTool({ name: "summarize", arguments: { text: "a long story" } }));
      out.sampled = sampled;
      out.roots = firstText(await client.callTool({ name: "workspace", arguments: {} }));
      break;
    }
    case "confirm": {
      out.text = firstText(await client.callTool({ name: "confirm", arguments: {} }));
      out.asked = asked;
      break;
    }
    case "errors": {
      const d = await client.callTool({ name: "divide", arguments: { a: 1, b: 0 } });
      out.divide = { isError: d.isError ?? false, text: firstText(d) };
      const inv = await client.callTool({ name: "divide", arguments: { a: 1 } });
      out.invalid = { isError: inv.isError ?? false, text: firstText(inv) };
      try { await client.callTool({ name: "strict", arguments: { count: 0 } }); out.strict = null; } catch (e) { out.strict = errorOf(e); }
      try { await client.callTool({ name: "broken", arguments: { q: 1 } }); out.broken = null; } catch (e) { out.broken = errorOf(e); }
      break;
    }
    case "hang": {
      try { await client.callTool({ name: "hang", arguments: {} }, undefined, { timeout: 300 }); out.hang = null; } catch (e) { out.hang = errorOf(e); }
      out.after = firstText(await client.callTool({ name: "ok", arguments: {} }));
      break;
    }
    case "tasks": {
      // script-tasks.yaml through the SDK's experimental tasks API: each
      // stream's messages, one line each, but its polls that find the
      // task still working: how many there are depends on the machine.
      await client.listTools(); // the client learns which tools are tasks
      const tasks = client.experimental.tasks;
      const line = (m) => {
        switch (m.type) {
          case "taskCreated": return `created ${m.task.taskId} ${m.task.status}`;
          case "taskStatus": return `status ${m.task.status}`;
          case "result": return `result ${firstText(m.result)}`;
          default: return `error ${m.error.message}`;
        }
      };
      const run = async (stream) => {
        const seen = [];
        for await (const m of stream) {
          if (m.type !== "taskStatus" || m.task.status !== "working") seen.push(line(m));
        }
        return seen;
      };
      out.research = await run(tasks.callToolStream({ name: "research", arguments: { topic: "tides" } }));
      out.convert = await run(tasks.callToolStream({ name: "convert", arguments: {} }));
      out.doomed = await run(tasks.callToolStream({ name: "doomed", arguments: {} }));
      out.deploy = await run(tasks.callToolStream({ name: "deploy", arguments: { service: "api" } }));
      const forever = tasks.callToolStream({ name: "forever", arguments: {} });
      const first = await forever.next();
      out.forever = [line(first.value), `cancel: ${(await tasks.cancelTask(first.value.task.taskId)).status}`, ...(await run(forever))];
      out.list = (await tasks.listTasks()).tasks.map((t) => `${t.taskId} ${t.status}`);
      try { await client.callTool({ name: "research", arguments: { topic: "x" } }); out.researchAsCall = null; } catch (e) { out.researchAsCall = errorOf(e); }
      out.convertAsCall = firstText(await client.callTool({ name: "convert", arguments: {} }));
      try { await client.request({ method: "tools/call", params: { name: "plain", arguments: {}, task: {} } }, CallToolResultSchema); out.plainAsTask = null; } catch (e) { out.plainAsTask = errorOf(e); }
      break;
    }
    case "status": {
      // script-faults.yaml's http-NNN faults, then a call that works.
      const attempt = async (name) => {
        try { return { text: firstText(await client.callTool({ name, arguments: {} })) }; } catch (e) { return errorOf(e); }
      };
      out.unavailable = await attempt("unavailable");
      out.afterUnavailable = await attempt("ok");
      out.unauthorized = await attempt("unauthorized");
      out.afterUnauthorized = await attempt("ok");
      out.forbidden = await attempt("forbidden");
      out.afterForbidden = await attempt("ok");
      break;
    }
    case "close": {
      // script-faults.yaml's close fault, then a call that works where
      // the session outlives the connection (Streamable HTTP).
      const attempt = async (name) => {
        try { return { text: firstText(await client.callTool({ name, arguments: {} })) }; } catch (e) { return errorOf(e); }
      };
      out.close = await attempt("close");
      out.afterClose = await attempt("ok");
      break;
    }
    case "wrong-id": {
      // script-faults.yaml's wrong-id fault: the answer to id 2 comes as
      // "2-wrong", which answers nothing.
      try { out.wrongId = { text: firstText(await client.callTool({ name: "wrong-id", arguments: {} }, undefined, { timeout: 300 })) }; } catch (e) { out.wrongId = errorOf(e); }
      break;
    }
    case "expire": {
      // expire-session, a call in the expired session, then a new client
      // that initializes again.
      const attempt = async (c, name) => {
        try { return { text: firstText(await c.callTool({ name, arguments: {} })) }; } catch (e) { return errorOf(e); }
      };
      out.expire = await attempt(client, "expire");
      out.sameSession = await attempt(client, "ok");
      const again = new Client({ name: "script-ts-client", version: "1.0.0" });
      const t2 = newTransport();
      await again.connect(t2);
      out.newSessionId = (t2.sessionId ?? null) !== null && t2.sessionId !== transport.sessionId;
      out.again = await attempt(again, "ok");
      await again.close().catch(() => {});
      break;
    }
    case "unnamed": {
      // Requests that name no tool, prompt or resource: the SDK's
      // request() sends params as given, unchecked.
      const ask = async (method, params) => {
        try {
          await client.request(params === undefined ? { method } : { method, params }, CallToolResultSchema);
          return null;
        } catch (e) { return errorOf(e); }
      };
      out.toolNoName = await ask("tools/call", { arguments: { city: "Oslo" } });
      out.toolNoParams = await ask("tools/call");
      out.toolNumberName = await ask("tools/call", { name: 42 });
      out.promptNoName = await ask("prompts/get", {});
      out.resourceNoURI = await ask("resources/read", { uri: "" });
      break;
    }
    default:
      throw new Error(`unknown scenario ${scenario}`);
  }
} catch (e) {
  out.fatal = errorOf(e);
}
process.stdout.write(JSON.stringify(out) + "\n");
await client.close().catch(() => {});
process.exit(0);
