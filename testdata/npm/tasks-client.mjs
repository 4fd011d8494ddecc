// A TypeScript SDK client that calls server-everything's task tool
// (simulate-research-query, MCP Tasks of 2025-11-25) for mcptape's
// record/replay tests, and prints what it saw as one JSON array on stdout.
//
// usage: node tasks-client.mjs SCENARIO stdio COMMAND [ARG...]
//        node tasks-client.mjs SCENARIO http URL
// SCENARIO:
//   poll   the SDK's own loop (experimental.tasks.callToolStream): tasks/get
//          every pollInterval until the task is terminal, then tasks/result;
//          then a second call with ambiguous=true, whose task asks for input
//          (input_required, elicitation/create on the tasks/result stream).
//   eager  a host that does not wait: one tasks/get, then tasks/result at
//          once (the spec has it block until the task is terminal), then
//          tasks/get again.
//   client the other way round: trigger-sampling-request-async and
//          trigger-elicitation-request-async, whose server asks this
//          client to sample, then to elicit, as a task of the client's
//          (params.task on sampling/createMessage, elicitation/create),
//          polls it with tasks/get and fetches it with tasks/result. The
//          transcript says which task each of the server's requests named:
//          one this client made (C1, …) or one it never made ("unknown").
// poll and eager end with tasks/list and report the
// notifications/tasks/status seen.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  TaskStatusNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [scenario, mode, ...rest] = process.argv.slice(2);
const tool = scenario === "client" ? "trigger-sampling-request-async" : "simulate-research-query";
const elicitTool = "trigger-elicitation-request-async";

const transports = {
  stdio: () => new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" }),
  http: () => new StreamableHTTPClientTransport(new URL(rest[0])),
};

const seen = [];
// Task ids are the server's: the transcript names them by the order they
// were created, so that a replay handing out the recorded ids compares
// equal with a live run that made new ones.
const ids = [];
const name = (taskId) => {
  if (!ids.includes(taskId)) ids.push(taskId);
  return `T${ids.indexOf(taskId) + 1}`;
};
const notified = [];
// The tasks this client made, by the order it made them.
const clientIds = [];
const clientName = (taskId) => (clientIds.includes(taskId) ? `C${clientIds.indexOf(taskId) + 1}` : "unknown");
const client = new Client(
  { name: "tasks-client", version: "1.0.0" },
  scenario === "client"
    ? {
        capabilities: {
          sampling: {},
          elicitation: { form: {} },
          tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
        },
        taskStore: new InMemoryTaskStore(),
      }
    : { capabilities: { elicitation: { form: {} } } },
);
let listChanged;
const listChangedSeen = new Promise((resolve) => (listChanged = resolve));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => listChanged());
client.setNotificationHandler(TaskStatusNotificationSchema, (n) =>
  notified.push(`${name(n.params.taskId)} ${n.params.status}`),
);
if (scenario !== "client") {
  client.setRequestHandler(ElicitRequestSchema, async (r) => {
    seen.push(`elicitation: ${r.params.message}`);
    return { action: "accept", content: { interpretation: "historical" } };
  });
}

// What the server asks for runs as a task of this client's when it asks
// so: made, and completed as soon as the answer that made it is on its
// way (setImmediate runs before this process reads anything more), so
// that the server's first poll finds it done however soon it comes, and
// the task is not told done before it is told made.
async function asTask(what, r, extra, detail, answer) {
  if (!r.params.task) {
    seen.push(`${what} without a task: ${detail}`);
    return answer;
  }
  const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl });
  clientIds.push(task.taskId);
  seen.push(`${what} as task ${clientName(task.taskId)} ttl ${r.params.task.ttl}: ${detail}`);
  setImmediate(() => extra.taskStore.storeTaskResult(task.taskId, "completed", answer));
  return { task };
}
if (scenario === "client") {
  client.setRequestHandler(CreateMessageRequestSchema, async (r, extra) => {
    const prompt = r.params.messages.map((m) => m.content.text).join(" ");
    const answer = { role: "assistant", content: { type: "text", text: `sampled: ${prompt}` }, model: "tasks-client" };
    return asTask("sampling", r, extra, prompt, answer);
  });
  client.setRequestHandler(ElicitRequestSchema, async (r, extra) => {
    const answer = { action: "accept", content: { name: "Ada", favoriteColor: "Blue", agreeToTerms: true } };
    return asTask("elicitation", r, extra, r.params.message, answer);
  });
}

// watchTasksAsked notes each tasks/* request the server sends this client,
// and how the client answered it.
function watchTasksAsked(transport) {
  const asked = new Map();
  const onmessage = transport.onmessage;
  transport.onmessage = (m, extra) => {
    if (m.method?.startsWith("tasks/") && m.id !== undefined) asked.set(m.id, `${m.method} ${clientName(m.params?.taskId)}`);
    onmessage(m, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = (m, options) => {
    if (m.id !== undefined && asked.has(m.id) && m.method === undefined) {
      const outcome = m.error ? `error ${m.error.message}` : m.result.status ?? m.result.content?.text ?? m.result.action ?? "ok";
      seen.push(`server asked ${asked.get(m.id)}: ${outcome}`);
      asked.delete(m.id);
    }
    return send(m, options);
  };
}

const firstLine = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text.split("\n")[0]).join(" | ");
const status = (t) => `${name(t.taskId)} ${t.status}${t.statusMessage ? ` (${t.statusMessage})` : ""}`;

// server-everything registers its task tool once the client is initialized
// (it depends on the client's capabilities): list until it is there.
async function waitForTool() {
  for (let i = 0; i < 100; i++) {
    const tools = await client.listTools();
    const t = tools.tools.find((t) => t.name === tool);
    if (t) return t;
    await Promise.race([listChangedSeen, new Promise((r) => setTimeout(r, 100))]);
  }
  throw new Error(`${tool} never listed`);
}

async function pollScenario(args) {
  for await (const m of client.experimental.tasks.callToolStream({ name: tool, arguments: args }, CallToolResultSchema, { task: { ttl: 60000 } })) {
    switch (m.type) {
      case "taskCreated":
        seen.push(`created ${status(m.task)} poll ${m.task.pollInterval}`);
        break;
      case "taskStatus":
        seen.push(`status ${status(m.task)}`);
        break;
      case "result":
        seen.push(`result ${firstLine(m.result)}`);
        break;
      case "error":
        seen.push(`error ${m.error.message}`);
        break;
    }
  }
}

// The SDK's client.request, not callToolStream: a host of its own that
// starts a task and does not poll.
async function eagerScenario(args) {
  const created = await client.request(
    { method: "tools/call", params: { name: tool, arguments: args, task: { ttl: 60000 } } },
    CreateTaskResultSchema,
  );
  const id = created.task.taskId;
  seen.push(`created ${status(created.task)}`);
  seen.push(`first get ${status(await client.experimental.tasks.getTask(id))}`);
  seen.push(`result ${firstLine(await client.experimental.tasks.getTaskResult(id, CallToolResultSchema))}`);
  seen.push(`get after result ${status(await client.experimental.tasks.getTask(id))}`);
}

try {
  if (!transports[mode]) throw new Error(`unknown mode ${mode}`);
  const transport = transports[mode]();
  await client.connect(transport);
  watchTasksAsked(transport);
  const t = await waitForTool();
  seen.push(`${tool} taskSupport ${t.execution?.taskSupport}`);
  if (scenario === "poll") {
    await pollScenario({ topic: "magnetic tape" });
    await pollScenario({ topic: "cassettes", ambiguous: true });
  } else if (scenario === "eager") {
    await eagerScenario({ topic: "magnetic tape" });
  } else if (scenario === "client") {
    const r = await client.callTool({ name: tool, arguments: { prompt: "magnetic tape", maxTokens: 10 } });
    seen.push(`result ${firstLine(r)}`);
    const e = await client.callTool({ name: elicitTool, arguments: {} });
    seen.push(`result ${firstLine(e)}`);
  } else {
    throw new Error(`unknown scenario ${scenario}`);
  }
  if (scenario !== "client") {
    const list = await client.experimental.tasks.listTasks();
    seen.push(`list ${list.tasks.map((t) => `${name(t.taskId)} ${t.status}`).sort().join(", ")}`);
    seen.push(`task ids ${JSON.stringify(ids)}`);
    seen.push(`notified ${notified.join(", ")}`);
  }
  await client.close();
  process.stdout.write(JSON.stringify(seen) + "\n");
  process.exit(0);
} catch (e) {
  console.error(`tasks-client: ${e && e.stack ? e.stack : e}`);
  process.stdout.write(JSON.stringify(seen) + "\n");
  process.exit(1);
}
