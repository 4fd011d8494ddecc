// make-har.mjs records, with a real browser, the HAR the HAR import's
// tests read: headless Chromium, driven by Playwright with recordHar,
// opens page.html, whose script speaks MCP Streamable HTTP by hand to
// server-everything. See README.md.
//
// usage: node make-har.mjs [-d DIR]
// It writes six HARs into DIR (default store/testdata): one of a whole
// session, ended with DELETE; one saved while the session and its GET
// stream were still open; the whole session again with its bodies in
// files beside the HAR (recordHar's content: "attach"), in a directory
// of its own; and the whole session as Chromium's own DevTools save it
// ("Save all as HAR"), by DevTools' front end, which Chromium bundles,
// attached to the page; and DevTools' of a session still open, not
// sanitized. And the whole session once more in a zip archive, as
// recordHar writes one for a path ending .zip.
// env:   CHROMIUM     the browser (default /usr/bin/chromium)
//        EVERYTHING   server-everything's dist/index.js (default the one
//                     testdata/npm installs)
import { chromium } from "playwright-core";
import { spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:http";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const npm = resolve(here, "..", "..", "..", "testdata", "npm");
const args = process.argv.slice(2);
const dir = args[0] === "-d" ? args[1] : join(here, "..");
const everything = process.env.EVERYTHING || join(npm, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

// A loopback port for server-everything, which binds every interface
// unless loopback.cjs pins it to 127.0.0.1.
const free = () =>
  new Promise((ok, fail) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
    s.on("error", fail);
  });

const port = await free();
const server = spawn(process.execPath, ["--require", join(npm, "loopback.cjs"), everything, "streamableHttp"], {
  env: { ...process.env, PORT: String(port) },
  stdio: ["ignore", "ignore", "pipe"],
});
let serverErr = "";
await new Promise((ok, fail) => {
  server.stderr.on("data", (b) => {
    serverErr += b;
    if (serverErr.includes("listening on port")) ok();
  });
  server.on("exit", (code) => fail(new Error(`server-everything exited ${code}: ${serverErr}`)));
});

// The page comes from an origin of its own, as a web app's does: its
// requests to the server are cross-origin, with CORS preflights.
const html = readFileSync(join(here, "page.html"));
const site = createServer((req, res) => {
  if (req.url === "/ready") {
    res.writeHead(200, { "Content-Type": "text/html" }).end("<title>ready</title>");
    return;
  }
  if (req.url.startsWith("/app")) {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(html);
    return;
  }
  res.writeHead(404).end();
});
await new Promise((ok) => site.listen(0, "127.0.0.1", ok));

// The DevTools front end reaches the page through the debugging port,
// on 127.0.0.1 only.
const debugPort = await free();
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: [`--remote-debugging-port=${debugPort}`, "--remote-allow-origins=devtools://devtools"],
});
const mcp = `http://127.0.0.1:${port}/mcp`;
try {
  for (const [name, end, content] of [
    ["playwright-chromium.har", "yes", "embed"],
    ["playwright-chromium-open.har", "no", "embed"],
    ["playwright-attach/playwright-chromium.har", "yes", "attach"],
    ["playwright-chromium.zip", "yes", undefined], // a .zip path: attach is its default
  ]) {
    const out = join(dir, name);
    if (content === "attach") rmSync(dirname(out), { recursive: true, force: true }); // no bodies of an older run
    const context = await browser.newContext({ recordHar: content ? { path: out, content } : { path: out } });
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${site.address().port}/app?end=${end}&mcp=${encodeURIComponent(mcp)}`);
    await page.waitForFunction(() => window.mcpDone || window.mcpFailed, null, { timeout: 30000 }).catch(async (e) => {
      throw new Error(`${name}: the page did not finish; it saw:\n${await page.textContent("#log")}`, { cause: e });
    });
    const failed = await page.evaluate(() => window.mcpFailed);
    if (failed) throw new Error(`the page's MCP client failed: ${failed}`);
    const seen = await page.evaluate(() => window.mcpDone);
    await context.close(); // writes the HAR
    process.stdout.write(`${name}:\n  ${seen.join("\n  ")}\n`);
  }
  await devtoolsHAR(join(dir, "devtools-chromium.har"), "yes", true);
  await devtoolsHAR(join(dir, "devtools-chromium-open.har"), "no", false);
  const pw = createRequire(import.meta.url)("playwright-core/package.json").version;
  process.stderr.write(`make-har: Chromium ${browser.version()}, playwright-core ${pw}\n`);
} finally {
  await browser.close();
  site.closeAllConnections();
  site.close();
  server.kill();
}

// devtoolsHAR runs the page with DevTools' front end attached to it, and
// writes what its Network panel saves as a HAR ("Save all as HAR"),
// sanitized as the button's default leaves out what it deems sensitive,
// or not.
async function devtoolsHAR(out, end, sanitize) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const { targetInfo } = await (await context.newCDPSession(page)).send("Target.getTargetInfo");
  const front = await context.newPage();
  await front.goto(`devtools://devtools/bundled/devtools_app.html?ws=127.0.0.1:${debugPort}/devtools/page/${targetInfo.targetId}`);
  // The Network panel's log is made when the panel is first shown; made
  // now, it sees every request, as an open panel does, once the front
  // end listens: when it has seen a page load.
  const ready = `http://127.0.0.1:${site.address().port}/ready`;
  const seen = (url) =>
    front.evaluate(async (url) => {
      try {
        const Logs = await import("./models/logs/logs.js");
        return Logs.NetworkLog.NetworkLog.instance().requests().some((r) => r.url() === url);
      } catch {
        return false; // the front end is still starting (no settings yet)
      }
    }, url);
  for (let i = 0; !(await seen(ready)); i++) {
    if (i === 50) throw new Error("DevTools' front end saw no request");
    await page.goto(ready);
    await front.waitForTimeout(200);
  }
  await page.goto(`http://127.0.0.1:${site.address().port}/app?end=${end}&mcp=${encodeURIComponent(mcp)}`);
  await page.waitForFunction(() => window.mcpDone || window.mcpFailed, null, { timeout: 30000 });
  const failed = await page.evaluate(() => window.mcpFailed);
  if (failed) throw new Error(`the page's MCP client failed under DevTools: ${failed}`);
  const har = await front.evaluate(async (sanitize) => {
    const Logs = await import("./models/logs/logs.js");
    const HAR = await import("./models/har/har.js");
    const chunks = [];
    const stream = { write: async (s) => void chunks.push(s), close: async () => {} };
    const progress = { setTitle() {}, setTotalWork() {}, setWorked() {}, incrementWorked() {}, isCanceled: () => false, done() {} };
    await HAR.Writer.Writer.write(stream, Logs.NetworkLog.NetworkLog.instance().requests(), { sanitize }, progress);
    return chunks.join("");
  }, sanitize);
  writeFileSync(out, har);
  process.stdout.write(`${basename(out)}: ${JSON.parse(har).log.entries.length} entries\n`);
  await context.close();
}
