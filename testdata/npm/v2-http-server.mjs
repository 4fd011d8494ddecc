// A TypeScript SDK v2 server (@modelcontextprotocol/server) over Streamable
// HTTP: createMcpHandler serves 2026-07-28 and falls back to stateless
// legacy serving (a fresh instance per request, no sessions, GET and
// DELETE 405). The same two tools as v2-server.mjs; for the interop tests
// of mcpspy and mcpmock.
//
// The handler is web-standard (fetch-shaped). A few lines below mount it on
// node:http instead of @modelcontextprotocol/node's toNodeHandler, so that
// the tests need no other package: the body streams both ways, and a client
// that goes away aborts the request, which the SDK takes as a cancel.
//
// usage: PORT=n node v2-http-server.mjs   (binds 127.0.0.1:n, serves /mcp)
// When it listens it prints "v2-http-server listening on http://127.0.0.1:n/mcp"
// to stderr.
import { createServer } from "node:http";
import { Readable } from "node:stream";
import { McpServer, createMcpHandler } from "@modelcontextprotocol/server";
import * as z from "zod";

const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0) {
  console.error(`PORT ${JSON.stringify(process.env.PORT)}: want a port number`);
  process.exit(2);
}

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "v2-http-server", version: "2.4.0" }, { capabilities: { tools: {} } });
  server.registerTool("echo", { description: "Echoes its text.", inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }));
  server.registerTool("add", { description: "Adds two numbers.", inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
  server.registerTool("weather", {
    description: "Says the weather in a region, which travels in the Mcp-Param-Region header too.",
    inputSchema: z.object({ region: z.string().meta({ "x-mcp-header": "Region" }), day: z.string() }),
  }, async ({ region, day }) => ({ content: [{ type: "text", text: `${day} in ${region}: sunny` }] }));
  return server;
});

const http = createServer(async (req, res) => {
  if (new URL(req.url, "http://x").pathname !== "/mcp") {
    res.writeHead(404).end();
    return;
  }
  const aborted = new AbortController();
  res.on("close", () => { if (!res.writableFinished) aborted.abort(); });
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    for (const one of [v].flat()) headers.append(k, one);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  try {
    const response = await handler.fetch(new Request(`http://127.0.0.1:${port}${req.url}`, {
      method: req.method, headers, signal: aborted.signal,
      body: hasBody ? Readable.toWeb(req) : undefined, duplex: hasBody ? "half" : undefined,
    }));
    const out = {};
    response.headers.forEach((v, k) => { out[k] = v; });
    res.writeHead(response.status, out);
    if (!response.body) {
      res.end();
      return;
    }
    for await (const chunk of Readable.fromWeb(response.body)) res.write(chunk);
    res.end();
  } catch (err) {
    if (!res.headersSent) res.writeHead(500);
    res.end();
    if (!aborted.signal.aborted) console.error(`v2-http-server: ${req.method} ${req.url}: ${err}`);
  }
});
http.listen(port, "127.0.0.1", () => console.error(`v2-http-server listening on http://127.0.0.1:${port}/mcp`));
