// The TypeScript SDK client's client.complete against mcpmock serving
// cassettes/script-complete.yaml; prints what it saw as one JSON line.
// TestTSClient_Complete runs it with node --eval from testdata/npm, so
// that the SDK resolves from there.
//
// argv (after node's own --): --url URL | stdio COMMAND [ARG...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [how, ...rest] = process.argv.slice(1);
const transport = how === "--url"
  ? new StreamableHTTPClientTransport(new URL(rest[0]))
  : new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" });
// Strict: the client refuses to ask a server that does not declare
// completions, so this also checks the capability.
const client = new Client({ name: "complete-ts-client", version: "1.0.0" }, { enforceStrictCapabilities: true });
const out = {};
const ask = async (params) => {
  try {
    const r = await client.complete(params);
    return r.completion;
  } catch (e) {
    return { code: e.code ?? null, message: String(e.message ?? e) };
  }
};
try {
  await client.connect(transport);
  out.capabilities = client.getServerCapabilities();
  const translate = { type: "ref/prompt", name: "translate" };
  out.prefix = await ask({ ref: translate, argument: { name: "language", value: "Gu" } });
  out.explicit = await ask({ ref: translate, argument: { name: "language", value: "?" } });
  out.context = await ask({ ref: translate, argument: { name: "dialect", value: "S" }, context: { arguments: { language: "French" } } });
  const templates = await client.listResourceTemplates();
  const logs = { type: "ref/resource", uri: templates.resourceTemplates[0].uriTemplate };
  out.template = await ask({ ref: logs, argument: { name: "date", value: "2026" } });
  out.error = await ask({ ref: logs, argument: { name: "date", value: "1999" } });
  out.unknownArgument = await ask({ ref: translate, argument: { name: "tone", value: "" } });
} catch (e) {
  out.failed = String(e);
} finally {
  await client.close();
}
console.log(JSON.stringify(out));
