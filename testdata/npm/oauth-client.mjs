// A TypeScript SDK client that logs in with OAuth, as far as the point
// where it would send its user to the authorization server. For mcpspy's
// tests of servers that want a token. Usage:
//   node oauth-client.mjs URL
// It prints one JSON line: {"authorize": URL} when the SDK got as far as
// asking for the user's consent (so it accepted the server's protected
// resource metadata), or {"error": MESSAGE} when it gave up before that.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url] = process.argv.slice(2);
let authorize = null;

// The least a provider needs: a registered client, no tokens yet, and a
// user agent to send to the authorization server (here: noted, not sent).
const provider = {
  get redirectUrl() { return "http://127.0.0.1:1/callback"; },
  get clientMetadata() { return { client_name: "mcptape-test", redirect_uris: ["http://127.0.0.1:1/callback"] }; },
  clientInformation() { return { client_id: "mcptape-test" }; },
  tokens() { return undefined; },
  saveTokens() {},
  redirectToAuthorization(u) { authorize = u.href; },
  saveCodeVerifier() {},
  codeVerifier() { return "verifier"; },
};

const client = new Client({ name: "ts-oauth-client", version: "1.0.0" }, { capabilities: {} });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  console.log(JSON.stringify({ error: "connected without logging in" }));
} catch (e) {
  console.log(JSON.stringify(authorize ? { authorize } : { error: String(e?.message ?? e) }));
}
process.exit(0);
