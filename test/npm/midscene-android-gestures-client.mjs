// Drives a simulated Android phone with the rest of Midscene's device API
// (@midscene/android), no model involved: scrollDown/Up, scrollUntilBottom/
// Top, pullUp/Down, mouseDrag, scrollRight/Left and scrollUntilRight/Left,
// longPress, the agent's terminate and runAdbShell, mouseDoubleClick and
// forceScreenshot.
// Usage: node midscene-android-gestures-client.mjs SERIAL ADB_PATH ADB_SERVER_PORT
// (with MIDSCENE_MODEL_NAME set to anything: AndroidAgent wants one).
// After each step it prints one JSON line and waits for one line on stdin
// (the Go test checks the phone in between and may answer with JSON).
import { AndroidAgent, AndroidDevice } from '@midscene/android';
import readline from 'node:readline';

const [serial, adbPath, adbPort] = process.argv.slice(2);
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function step(name, data = {}) {
  console.log(JSON.stringify({ step: name, ...data }));
  const { value, done } = await lines.next();
  if (done) process.exit(1);
  return value ? JSON.parse(value) ?? {} : {};
}

const dev = new AndroidDevice(serial, { androidAdbPath: adbPath, remoteAdbPort: Number(adbPort) });
await dev.connect();
const agent = new AndroidAgent(dev);
const size = await dev.size();
// point turns {x, y, width} in the phone's pixels into Midscene's units.
const point = (p) => ({ x: Math.round((p.x * size.width) / p.width), y: Math.round((p.y * size.width) / p.width) });

await dev.launch('com.apex.notes');
await step('launched Notes');
await dev.scrollDown();
await step('scrolled down');
await dev.scrollUp();
await step('scrolled up');
await dev.scrollUntilBottom();
await step('scrolled to the bottom');
await dev.scrollUntilTop();
await step('scrolled to the top');
await dev.pullUp();
await step('pulled up');
await dev.pullDown();
await step('pulled down');
const mid = Math.round(size.width / 2);
await dev.mouseDrag({ x: mid, y: Math.round(size.height * 0.7) }, { x: mid, y: Math.round(size.height * 0.3) });
await step('dragged up');
await dev.mouseDrag({ x: mid, y: Math.round(size.height * 0.3) }, { x: mid, y: Math.round(size.height * 0.7) });
await step('dragged down');
await dev.scrollRight();
await dev.scrollLeft();
await dev.scrollUntilRight();
await dev.scrollUntilLeft();
const note = point(await step('scrolled sideways')); // {x, y, width}: the first note
await dev.longPress(note.x, note.y);
await step('long pressed');
await agent.terminate('com.apex.notes');
await step('terminated');
await dev.launch('Settings');
const plus = point(await step('launched Settings')); // {x, y, width}: Display's brightness +
await dev.mouseDoubleClick(plus.x, plus.y);
await step('double clicked');
const out = await agent.runAdbShell('settings put global midscene_probe 42; getprop ro.product.model');
await step('ran a shell command', { out });
await dev.forceScreenshot('/data/local/tmp/midscene.png');
await step('forced a screenshot');
await dev.destroy?.();
process.exit(0);
