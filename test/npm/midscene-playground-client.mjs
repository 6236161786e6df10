// Midscene's own playground client (PlaygroundSDK, remote execution, from
// @midscene/playground) driving `apex playground --sim` unchanged; run by
// cli/playground_midscene_test.go.
//
//   node midscene-playground-client.mjs URL
//
// Every call is one the Midscene web app makes. The checks are real
// effects on the simulated phone: a tap that opens Settings, an aiAct in
// the controlled language, asserts that pass and fail on what the screen
// shows, progress while a long task runs, its cancel, recorder events after
// a manual tap, a session replaced while idle and refused while a task
// runs. It prints a JSON summary on success and exits 1 with the reason.
import { PlaygroundSDK } from "@midscene/playground";

// In Node the SDK takes the server path only when a window exists.
globalThis.window = globalThis.window || {};

const url = process.argv[2];
const sdk = new PlaygroundSDK({ type: "remote-execution", serverUrl: url });
const summary = {};

function check(cond, what) {
  if (!cond) throw new Error(what);
}

const show = (v) => JSON.stringify(v)?.slice(0, 400);

async function home() {
  const r = await sdk.interact({ actionType: "AndroidHomeButton" });
  check(r.ok, `interact Home: ${show(r)}`);
}

async function main() {
  check(await sdk.checkStatus(), "checkStatus: the server did not answer /status");
  check(typeof sdk.id === "string" && sdk.id.length > 0, "checkStatus kept no server id");

  // Session: setup form, targets (a list), the session, replaced while idle.
  const setup = await sdk.getSessionSetup();
  check(Array.isArray(setup.fields) && setup.fields[0].key === "deviceId", `setup fields: ${show(setup.fields)}`);
  const targets = await sdk.listSessionTargets();
  check(targets.length === 1 && targets[0].label, `targets: ${show(targets)}`);
  let info = await sdk.getSessionInfo();
  check(info.connected === true && info.setupState === "ready", `session: ${show(info)}`);
  const created = await sdk.createSession({ deviceId: targets[0].id });
  check(created.session.connected && created.runtimeInfo.interface.type === "android", `replace the idle session: ${show(created)}`);

  const runtime = await sdk.getRuntimeInfo();
  check(runtime.preview.kind === "mjpeg" && runtime.preview.mjpegPath === "/mjpeg", `runtime-info preview: ${show(runtime.preview)}`);
  const iface = await sdk.getInterfaceInfo();
  check(iface.size.width > 0 && iface.size.height > 0 && iface.actionTypes.includes("Tap"), `interface-info: ${show(iface)}`);
  summary.size = iface.size;

  const space = await sdk.getActionSpace();
  const tap = space.find((a) => a.name === "Tap");
  check(tap && tap.interfaceAlias === "aiTap" && tap.paramSchema.shape.locate._def.typeName === "ZodObject", `action space Tap: ${show(tap)}`);
  summary.actions = space.map((a) => a.name);

  const shot = await sdk.getScreenshot();
  check(shot && shot.screenshot.startsWith("data:image/png;base64,"), `screenshot: ${show(shot)}`);

  await sdk.overrideConfig({}); // empty: no change, as Midscene answers it

  // A tap by the action's name, with the prompt as its target: Settings opens.
  await home();
  let r = await sdk.executeAction("Tap", { prompt: "Settings" }, { requestId: "tap-settings" });
  check(!r.error && r.requestId === "tap-settings", `Tap Settings: ${show(r)}`);
  check(typeof r.reportHTML === "string" && r.reportHTML.includes("data:image/jpeg;base64,"), "Tap: reportHTML is not a standalone report");
  check(r.report && r.report.url.startsWith(url), `Tap: report ${show(r.report)}`);
  r = await sdk.executeAction("aiAssert", { prompt: '"Network & internet" exists' }, {});
  check(r.result && r.result.pass === true, `assert after the tap: ${show(r.result)} ${r.error}`);
  r = await sdk.executeAction("aiAssert", { prompt: '"Shopping cart" exists' }, {});
  check(r.result && r.result.pass === false, `assert of what is not there: ${show(r.result)}`);

  // aiTap with structured params, and aiAct in the controlled language.
  await home();
  r = await sdk.executeAction("aiTap", { params: { locate: "Settings" } }, {});
  check(!r.error, `aiTap Settings: ${r.error}`);
  await home();
  r = await sdk.executeAction("aiAct", { prompt: 'tap "Settings", then check "Network & internet" exists' }, { requestId: "act-1" });
  check(!r.error, `aiAct: ${r.error}`);
  r = await sdk.executeAction("aiQuery", { prompt: "the Wi-Fi switch" }, {});
  summary.query = r.result ?? r.error;

  // A long task: progress while it runs, the session refused meanwhile, cancel.
  const updates = [];
  sdk.onDumpUpdate((_, dump) => updates.push(dump));
  const long = sdk.executeAction("Sleep", { params: { timeMs: 60000 } }, { requestId: "long-sleep" });
  const deadline = Date.now() + 20000;
  let progress = {};
  while (!progress.executionDump && Date.now() < deadline) {
    progress = await sdk.getTaskProgress("long-sleep");
  }
  check(progress.executionDump && Array.isArray(progress.executionDump.tasks), `task-progress: ${show(progress)}`);
  let refused = "";
  try {
    await sdk.createSession({ deviceId: targets[0].id });
  } catch (e) {
    refused = e.message;
  }
  check(refused !== "", "a session was replaced while a task ran");
  while (updates.length === 0 && Date.now() < deadline) {
    await new Promise((res) => setTimeout(res, 100)); // the SDK polls every 500 ms
  }
  check(updates.length > 0 && updates[0].tasks.length > 0, "no progress reached onDumpUpdate while the task ran");
  const cancelled = await sdk.cancelExecution("long-sleep");
  check(cancelled !== null, "cancelExecution failed");
  r = await long;
  check(r.status === "canceled", `the long task ended ${r.status}, want canceled`);
  summary.progressUpdates = updates.length;

  // Recorder: a manual tap at the point aiLocate finds, recorded with what it touched.
  await home();
  const rec = await sdk.startRecorderSession("rec-1");
  check(rec.ok && rec.supported, `recorder start: ${show(rec)}`);
  const caps = await sdk.getRecorderCapabilities();
  check(caps.supported && caps.source === "studio-preview", `recorder capabilities: ${show(caps)}`);
  r = await sdk.executeAction("aiLocate", { prompt: "Settings" }, {});
  const where = r.result;
  check(where && where.center, `aiLocate Settings: ${show(r)}`);
  const tapped = await sdk.interact({ actionType: "Tap", x: where.center.x, y: where.center.y });
  check(tapped.ok, `interact Tap: ${show(tapped)}`);
  const events = await sdk.getRecorderEvents(0);
  check(events.events.length === 1 && events.nextIndex === 1, `recorder events: ${show(events)}`);
  const ev = events.events[0];
  check(ev.type === "click" && ev.semantic.elementDescription === "Settings", `recorded event: ${show(ev)}`);
  const described = await sdk.describeRecorderEventAtPoint(ev);
  check(described.ok && described.event.hashId === ev.hashId, `describe-event: ${show(described)}`);
  const asset = sdk.getRecorderScreenshotAssetUrl(ev.screenshotAsset.id);
  const png = await fetch(asset);
  check(png.ok && png.headers.get("content-type") === "image/png", `recorder asset ${asset}: ${png.status}`);
  const stopped = await sdk.stopRecorderSession();
  check(stopped.ok, "recorder stop");
  info = await sdk.getSessionInfo();
  check(info.connected, "the session was lost");

  let connectivity;
  try {
    connectivity = await sdk.runConnectivityTest({ MIDSCENE_MODEL_NAME: "none" });
  } catch (e) {
    connectivity = { error: e.message };
  }
  summary.connectivity = connectivity;

  const destroyed = await sdk.destroySession();
  check(destroyed.session.connected === false, `destroySession: ${show(destroyed)}`);
  summary.ok = true;
  console.log(JSON.stringify(summary));
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e.stack || String(e));
    process.exit(1);
  },
);
