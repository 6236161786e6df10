// Drives a WebDriverAgent endpoint with WebdriverIO's W3C protocol client
// (the `webdriver` package), the way Appium-less scripts talk to WDA.
// Usage: node wda-webdriver-client.mjs http://127.0.0.1:PORT
// Prints one JSON object of what it saw; exits non-zero on a failure.
import WebDriver from 'webdriver';

const url = new URL(process.argv[2]);
const out = {};
const client = await WebDriver.newSession({
  protocol: 'http', hostname: url.hostname, port: Number(url.port), path: '/',
  capabilities: { platformName: 'iOS', 'appium:automationName': 'XCUITest', 'appium:bundleId': 'com.apex.login' },
  logLevel: 'silent', connectionRetryCount: 0,
});
out.sessionId = client.sessionId;
out.status = (await client.status()).ready;
out.window = await client.getWindowRect();
const user = await client.findElement('accessibility id', 'username');
const userId = user['element-6066-11e4-a52e-4f735466cecf'];
await client.elementClick(userId);
await client.elementSendKeys(userId, 'demo');
const pw = await client.findElement('-ios class chain', '**/XCUIElementTypeSecureTextField');
await client.elementSendKeys(pw['element-6066-11e4-a52e-4f735466cecf'], 'apex123');
out.username = await client.getElementText(userId);
out.rect = await client.getElementRect(userId);
const sw = await client.findElements('-ios predicate string', "type == 'XCUIElementTypeSwitch'");
out.switches = sw.length;
const missing = await client.findElement('accessibility id', 'nope').catch((e) => ({ error: e.name || e.message }));
out.missing = missing.error ?? missing;
const sign = await client.findElement('accessibility id', 'sign_in');
const r = await client.getElementRect(sign['element-6066-11e4-a52e-4f735466cecf']);
await client.performActions([{ type: 'pointer', id: 'finger1', parameters: { pointerType: 'touch' }, actions: [
  { type: 'pointerMove', duration: 0, x: Math.round(r.x + r.width / 2), y: Math.round(r.y + r.height / 2) },
  { type: 'pointerDown', button: 0 }, { type: 'pause', duration: 50 }, { type: 'pointerUp', button: 0 },
] }]);
await client.releaseActions();
out.source = (await client.getPageSource()).includes('Welcome, demo!');
out.screenshot = (await client.takeScreenshot()).length;
out.alert = await client.getAlertText().catch((e) => e.name || e.message);
await client.deleteSession();
console.log(JSON.stringify(out));
