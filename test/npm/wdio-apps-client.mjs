// Drives a simulated iPhone's WebDriverAgent app and device endpoints with
// webdriverio: a session with a bundle id and /wda/apps/launch cold-start
// the app (what the last run typed is gone), /wda/apps/activate does not;
// contexts and windows, timeouts, appium settings, the pasteboard, /wda/apps/list,
// /wda/batteryInfo, /wda/deactivateApp and takeElementScreenshot.
// Usage: node wdio-apps-client.mjs http://127.0.0.1:PORT
// Prints one JSON object of what it saw on its last line.
import { open, wda } from './wdio-session.mjs';

const appLaunch = wda('POST', 'wdaAppLaunch', '/wda/apps/launch', ['bundleId']);
const appActivate = wda('POST', 'wdaAppActivate', '/wda/apps/activate', ['bundleId']);
const appsList = wda('GET', 'wdaAppsList', '/wda/apps/list');
const batteryInfo = wda('GET', 'wdaBatteryInfo', '/wda/batteryInfo');
const setPasteboard = wda('POST', 'wdaSetPasteboard', '/wda/setPasteboard', ['content', 'contentType']);
const getPasteboard = wda('POST', 'wdaGetPasteboard', '/wda/getPasteboard', ['contentType']);
const deactivateApp = wda('POST', 'wdaDeactivateApp', '/wda/deactivateApp', ['duration']);
const out = {};

let browser = await open('com.apex.login');
// typed is how many text fields hold what the test typed.
const typed = async () => (await browser.$$('-ios predicate string:value == "demo"')).length;
const type = async () => { await browser.$('~username').click(); await browser.$('~username').addValue('demo'); };
await type();
out.typed = await typed();
await browser.deleteSession();
browser = await open('com.apex.login');
out.afterNewSession = await typed();
await type();
await appActivate.call(browser, 'com.apex.login');
out.afterActivate = await typed();
await appLaunch.call(browser, 'com.apex.login');
out.afterLaunch = await typed();
// `mobile: launchApp` and the other `mobile:` scripts are Appium's: its
// XCUITest driver turns them into the endpoints above. WebDriverAgent
// itself has no /execute, and neither has the simulated one.
out.mobileScript = await browser.execute('mobile: launchApp', { bundleId: 'com.apex.login' })
  .then(() => 'accepted', (e) => e.message.split(' when running')[0].replace(/session\/[^/]+/, 'session/:id'));

out.contexts = [await browser.getContext(), await browser.getContexts(), await browser.getWindowHandle(), await browser.getWindowHandles()];
out.timeouts = (await browser.setTimeout({ implicit: 500 })) ?? null;
await browser.updateSettings({ snapshotMaxDepth: 30 });
out.settings = (await browser.getSettings()).snapshotMaxDepth;
await setPasteboard.call(browser, Buffer.from('pasted 中文').toString('base64'), 'plaintext');
out.pasteboard = Buffer.from(await getPasteboard.call(browser, 'plaintext'), 'base64').toString();
out.pasteboardImage = await setPasteboard.call(browser, 'AAAA', 'image').then(() => 'accepted', (e) => e.message.split(' when running')[0]);
out.apps = (await appsList.call(browser)).map((a) => a.bundleId).sort();
out.battery = await batteryInfo.call(browser);

await type();
const t0 = Date.now();
out.deactivate = (await deactivateApp.call(browser, 1)) ?? null;
out.deactivateWaited = Date.now() - t0 >= 1000;
out.afterDeactivate = await typed();

const field = await browser.$('~username');
const rect = await browser.getElementRect(field.elementId);
// element.takeScreenshot() is the page's screenshot in webdriverio (the
// element's own is takeElementScreenshot, GET /element/:id/screenshot).
const shot = Buffer.from(await browser.takeElementScreenshot(field.elementId), 'base64');
const scale = shot.readUInt32BE(16) / rect.width; // pixels per point
out.elementShot = [shot.subarray(1, 4).toString(), scale, shot.readUInt32BE(20) / scale === rect.height];
await browser.deleteSession();
console.log(JSON.stringify(out));
