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
// Both end with tasks/list and report the notifications/tasks/status seen.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  TaskStatusNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [scenario, mode, ...rest] = process.argv.slice(2);
const tool = "simulate-research-query";

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
const client = new Client(
  { name: "tasks-client", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } } },
);
let listChanged;
const listChangedSeen = new Promise((resolve) => (listChanged = resolve));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => listChanged());
client.setNotificationHandler(TaskStatusNotificationSchema, (n) =>
  notified.push(`${name(n.params.taskId)} ${n.params.status}`),
);
client.setRequestHandler(ElicitRequestSchema, async (r) => {
  seen.push(`elicitation: ${r.params.message}`);
  return { action: "accept", content: { interpretation: "historical" } };
});

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
  await client.connect(transports[mode]());
  const t = await waitForTool();
  seen.push(`${tool} taskSupport ${t.execution?.taskSupport}`);
  if (scenario === "poll") {
    await pollScenario({ topic: "magnetic tape" });
    await pollScenario({ topic: "cassettes", ambiguous: true });
  } else if (scenario === "eager") {
    await eagerScenario({ topic: "magnetic tape" });
  } else {
    throw new Error(`unknown scenario ${scenario}`);
  }
  const list = await client.experimental.tasks.listTasks();
  seen.push(`list ${list.tasks.map((t) => `${name(t.taskId)} ${t.status}`).sort().join(", ")}`);
  seen.push(`task ids ${JSON.stringify(ids)}`);
  seen.push(`notified ${notified.join(", ")}`);
  await client.close();
  process.stdout.write(JSON.stringify(seen) + "\n");
  process.exit(0);
} catch (e) {
  console.error(`tasks-client: ${e && e.stack ? e.stack : e}`);
  process.stdout.write(JSON.stringify(seen) + "\n");
  process.exit(1);
}
