// A TypeScript SDK server without sessions, for mcptape's tests of
// recording and replaying such a server: the SDK's Streamable HTTP
// transport with no session id generator, made anew for every request,
// as the SDK's stateless examples do. It serves one tool, echo {text}.
// Usage: node stateless-server.mjs   (binds 127.0.0.1 on a free port and
// prints "stateless-server: listening on http://127.0.0.1:PORT/mcp" on
// stderr when ready)
import http from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const listener = http.createServer(async (req, res) => {
  let body = "";
  for await (const chunk of req) body += chunk;
  const server = new McpServer({ name: "ts-stateless", version: "1.0.0" });
  server.registerTool("echo", { inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: "text", text }],
  }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  let parsed;
  try {
    parsed = body ? JSON.parse(body) : undefined;
  } catch {
    parsed = undefined; // the transport answers the parse error
  }
  await transport.handleRequest(req, res, parsed);
});
listener.listen(0, "127.0.0.1", () => {
  console.error(`stateless-server: listening on http://127.0.0.1:${listener.address().port}/mcp`);
});
process.on("SIGTERM", () => listener.close(() => process.exit(0)));
