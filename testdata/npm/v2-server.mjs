// A TypeScript SDK v2 server (@modelcontextprotocol/server) on stdio that
// serves both eras as the SDK's serveStdio does (server/discover opens a
// 2026-07-28 connection, initialize a handshake-era one), with two tools;
// for the interop tests of mcpspy and mcpmock.
//
// usage: node v2-server.mjs
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import * as z from "zod";

serveStdio(() => {
  const server = new McpServer({ name: "v2-server", version: "2.4.0" }, { capabilities: { tools: {} } });
  server.registerTool("echo", { description: "Echoes its text.", inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }));
  server.registerTool("add", { description: "Adds two numbers.", inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
  return server;
});
