// Drives a simulated Android phone with Midscene's device API
// (@midscene/android), no model involved: connect, screenshot, launch by
// name and URL, keyboardType, clearInput, keyboardPress, hideKeyboard, back,
// its Pinch action (yadb -pinch), home and recentApps.
// Usage and the step protocol: midscene-steps.mjs.
import { connect, step } from './midscene-steps.mjs';

const { dev } = await connect();
const size = await dev.size();
const shot = await dev.screenshotBase64();
await step('connected', { size, shot: shot.length, png: shot.includes('iVBORw0KGgo') });
await dev.launch('Settings');
await step('launched Settings');
await dev.launch('https://example.com/midscene');
await step('launched a URL');
await dev.launch('com.apex.login');
const field = await step('launched Login'); // {x, y, width}: the username field in pixels
const k = size.width / field.width;
const at = { center: [Math.round(field.x * k), Math.round(field.y * k)] };
await dev.mouseClick(...at.center);
await dev.keyboardType('中文 $HOME `x` "q"');
await step('typed');
await dev.clearInput(at);
await step('cleared');
await dev.keyboardPress('a');
await step('pressed a');
const hid = await dev.hideKeyboard();
await step('hid the keyboard', { hid });
await dev.back();
await step('back');
await dev.launch('https://example.com/map');
const page = await step('launched the map'); // {x, y, width}: the page's centre in pixels
const kp = size.width / page.width;
const pinch = dev.actionSpace().find((a) => a.name === 'Pinch');
await pinch.call({ locate: { center: [Math.round(page.x * kp), Math.round(page.y * kp)] }, direction: 'out' });
await step('pinched');
await dev.home();
await step('home');
await dev.recentApps();
await step('recent apps');
await dev.destroy?.();
process.exit(0);
