// Drives a simulated Android phone with the rest of Midscene's device API
// (@midscene/android), no model involved: scrollDown/Up, scrollUntilBottom/
// Top, pullUp/Down, mouseDrag, scrollRight/Left and scrollUntilRight/Left,
// longPress, the agent's terminate and runAdbShell, mouseDoubleClick and
// forceScreenshot.
// Usage and the step protocol: midscene-steps.mjs.
import { connect, step } from './midscene-steps.mjs';

const { dev, agent } = await connect();
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
