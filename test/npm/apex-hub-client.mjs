// A real MCP client (@modelcontextprotocol/sdk) on `apex mcp --profile
// device-hub`, run by mcp/hub_node_test.go: it sees exactly the four device
// tools, lists, opens a phone, taps through the `apex do --session` command
// device_open returned, takes a screenshot and closes the session.
//
//   node apex-hub-client.mjs APEX ARG...   the server runs `APEX ARG...`
//
// It prints a JSON summary on success and exits 1 with the reason otherwise.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { execFileSync } from "node:child_process";

const [apex, ...args] = process.argv.slice(2);

function check(cond, what) {
  if (!cond) throw new Error(what);
}

function textOf(result) {
  return result.content.filter((c) => c.type === "text").map((c) => c.text).join("");
}

async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  check(!r.isError, `${name} ${JSON.stringify(args)} failed: ${textOf(r)}`);
  return r;
}

// shellWords splits a command line as a POSIX shell would for the forms
// apex prints (words, single-quoted words).
function shellWords(line) {
  const words = [];
  const re = /'((?:[^']|'\\'')*)'|(\S+)/g;
  let m;
  while ((m = re.exec(line))) words.push(m[1] !== undefined ? m[1].replaceAll("'\\''", "'") : m[2]);
  return words;
}

async function main() {
  const summary = {};
  const client = new Client({ name: "apex-hub-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: apex, args, env: { ...process.env }, stderr: "inherit" }));
  const { tools } = await client.listTools();
  summary.tools = tools.map((t) => t.name).sort();

  const list = textOf(await call(client, "device_list", {}));
  const line = list.split("\n").find((l) => l.includes("\tfree"));
  check(line, `no free device in device_list:\n${list}`);
  const device = line.split("\t")[0];
  summary.device = device;

  const opened = textOf(await call(client, "device_open", { device }));
  const m = opened.match(/^e\.g\.\s+(.*) Tap --param locate=Settings$/m);
  check(m, `device_open gave no command line:\n${opened}`);
  summary.command = m[1];
  check(/Actions: .*Tap/.test(opened), `device_open does not say what the device can do:\n${opened}`);

  // The agent acts through the CLI: launch Settings, then tap in it.
  const cmd = shellWords(m[1]);
  const run = (...rest) => execFileSync(cmd[0], [...cmd.slice(1), ...rest], { encoding: "utf8", env: process.env });
  summary.launch = run("Launch", "--param", "app=com.android.settings").trim();
  summary.tap = run("Tap", "--param", "locate=Network & internet").trim();

  const shot = await call(client, "device_screenshot", { device });
  const img = shot.content.find((c) => c.type === "image");
  check(img && img.mimeType === "image/png", "device_screenshot returned no PNG");
  summary.screenshotBytes = Buffer.from(img.data, "base64").length;

  summary.closed = textOf(await call(client, "device_close", { device }));
  // The session's command stops working once it is closed.
  try {
    run("Back");
    summary.afterClose = "ran";
  } catch (e) {
    summary.afterClose = String(e.stderr || e.message);
  }
  await client.close();
  console.log(JSON.stringify(summary));
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
