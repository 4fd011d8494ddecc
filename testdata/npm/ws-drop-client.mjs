// A TypeScript SDK WebSocket client whose server drops the connection:
// for mcpspy's WebSocket proxy tests. Usage:
//   node ws-drop-client.mjs URL
// It connects, sends notifications/initialized, and prints one JSON array
// of what its transport reported (messages, errors, the close) once the
// connection has ended.
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";
import { WebSocket } from "ws";

// Node 20 has no global WebSocket; the SDK's transport expects one.
globalThis.WebSocket ??= WebSocket;

const seen = [];
const done = () => { console.log(JSON.stringify(seen)); process.exit(0); };
const transport = new WebSocketClientTransport(new URL(process.argv[2]));
transport.onmessage = (m) => seen.push(`message ${m.method ?? m.id}`);
transport.onerror = (e) => seen.push(`error ${e.message}`);
transport.onclose = () => { seen.push("close"); done(); };
setTimeout(() => { seen.push("timeout"); done(); }, 10000).unref();
await transport.start();
await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
