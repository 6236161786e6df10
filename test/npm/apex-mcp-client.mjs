// A real MCP client (@modelcontextprotocol/sdk) driving `apex mcp`, run by
// mcp/node_test.go. It opens a phone in one session, taps by element id,
// reads a screenshot, and checks that a second session is refused the phone.
//
//   node apex-mcp-client.mjs stdio APEX ARG...   each session runs `APEX ARG...`
//   node apex-mcp-client.mjs http URL [TOKEN]
//
// It prints a JSON summary on success and exits 1 with the reason otherwise.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, ...rest] = process.argv.slice(2);

function transport() {
  if (mode === "stdio") {
    // The SDK passes children only a few variables unless told; apex needs
    // TMPDIR (where the cross-process lease locks live).
    return new StdioClientTransport({ command: target, args: rest, env: { ...process.env }, stderr: "inherit" });
  }
  if (mode === "http") {
    const headers = rest[0] ? { Authorization: `Bearer ${rest[0]}` } : {};
    return new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
  }
  throw new Error(`mode ${mode}: use stdio or http`);
}

async function connect(name) {
  const client = new Client({ name, version: "1.0.0" });
  const t = transport();
  await client.connect(t);
  return { client, t };
}

function check(cond, what) {
  if (!cond) throw new Error(what);
}

function textOf(result) {
  return result.content.filter((c) => c.type === "text").map((c) => c.text).join("");
}

async function call(client, name, args, wantError = false) {
  const r = await client.callTool({ name, arguments: args });
  check(!!r.isError === wantError, `${name} ${JSON.stringify(args)}: ${wantError ? "succeeded, want an error" : "failed"}: ${textOf(r)}`);
  return r;
}

// pngSize reads width and height from a PNG's IHDR chunk.
function pngSize(buf) {
  check(buf.subarray(1, 4).toString("latin1") === "PNG", "screenshot is not a PNG");
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

async function main() {
  const summary = { transport: mode };
  const a = await connect("apex-test-a");
  const { tools } = await a.client.listTools();
  const names = tools.map((t) => t.name);
  for (const want of ["device_list", "device_open", "device_screenshot", "device_close", "observe", "scene_diff", "tap", "input", "scroll", "act"]) {
    check(names.includes(want), `tools/list lacks ${want}: ${names}`);
  }
  const tap = tools.find((t) => t.name === "tap");
  check(tap.inputSchema.required.includes("device") && tap.inputSchema.required.includes("locate"), `tap schema: ${JSON.stringify(tap.inputSchema)}`);
  summary.tools = names.length;

  const list = textOf(await call(a.client, "device_list", {}));
  const line = list.split("\n").find((l) => l.includes("\tfree"));
  check(line, `no free device in device_list:\n${list}`);
  const device = line.split("\t")[0];
  summary.device = device;
  await call(a.client, "device_open", { device });

  const scene = textOf(await call(a.client, "observe", { device }));
  const m = scene.match(/(e\d+) item "Shop"/);
  check(m, `no Shop icon in the scene:\n${scene}`);
  // assert runs Apex's AI runtime (offline: the rule planner).
  const verdict = JSON.parse(textOf(await call(a.client, "assert", { device, assertion: '"Shop" exists' })));
  check(verdict.pass === true, `assert "Shop" exists: ${JSON.stringify(verdict)}`);
  summary.asserted = true;
  const tapped = textOf(await call(a.client, "tap", { device, locate: m[1] }));
  summary.tapped = m[1];
  check(tapped.includes('"Shop"'), `tap result: ${tapped}`);
  const after = textOf(await call(a.client, "observe", { device }));
  check(after.includes("app=com.apex.shop"), `after tapping ${m[1]} the shop is not open:\n${after}`);

  const shot = await call(a.client, "device_screenshot", { device });
  const img = shot.content.find((c) => c.type === "image");
  check(img && img.mimeType === "image/png", `no PNG image in device_screenshot: ${JSON.stringify(shot.content.map((c) => c.type))}`);
  summary.screenshot = pngSize(Buffer.from(img.data, "base64"));

  const b = await connect("apex-test-b");
  const refused = await call(b.client, "device_open", { device }, true);
  summary.refused = textOf(refused);
  check(summary.refused.includes(`device ${device} is in use by`), `second session: ${summary.refused}`);

  await call(a.client, "device_close", { device });
  await call(b.client, "device_open", { device });
  await call(b.client, "observe", { device });
  summary.reopened = true;

  if (mode === "http") {
    await a.t.terminateSession();
    await b.t.terminateSession();
  }
  await a.client.close();
  await b.client.close();
  console.log(JSON.stringify(summary));
}

main().catch((err) => {
  console.error(`apex-mcp-client: ${err.message}`);
  process.exit(1);
});
