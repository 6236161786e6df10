// Drives a simulated iPhone's WebDriverAgent with webdriverio (the
// `webdriverio` package): a session, finds by every strategy, swipe,
// scrollIntoView, orientation and alerts.
// Usage: node wdio-client.mjs http://127.0.0.1:PORT
// Prints one JSON object of what it saw on its last line.
import { open } from './wdio-session.mjs';

const out = {};

let browser = await open('com.apex.notes');
await browser.swipe({ direction: 'up' });
out.swiped = !(await browser.$('-ios predicate string:label CONTAINS "Groceries 1"').isDisplayed());
const far = await browser.$('-ios predicate string:label CONTAINS "Garden 2"');
await far.scrollIntoView();
out.scrolled = await far.isDisplayed();
await browser.deleteSession();

browser = await open('com.apex.login');
const count = async (sel) => (await browser.$$(sel)).length;
out.byAccessibilityId = await count('~username');
out.byPredicate = await count('-ios predicate string:type == "XCUIElementTypeSwitch"');
out.byClassChain = await count('-ios class chain:**/XCUIElementTypeSecureTextField');
out.byXPath = await count('//XCUIElementTypeTextField');
out.byIndexedXPath = await (await browser.$('(//XCUIElementTypeButton)[last()]')).getAttribute('name');
out.byClassName = (await browser.findElements('class name', 'XCUIElementTypeApplication')).length;
out.appByPredicate = await count('-ios predicate string:type == "XCUIElementTypeApplication"');

await browser.$('~username').click();
await browser.$('~username').addValue('demo');
out.focus = await browser.$('~username').getAttribute('hasKeyboardFocus');
out.orientation = await browser.getOrientation();
await browser.setOrientation('LANDSCAPE');
out.landscape = [await browser.getOrientation(), (await browser.getWindowRect()).width];
await browser.setOrientation('PORTRAIT');

out.noAlert = await browser.getAlertText().catch((e) => e.name || e.message);
await browser.$('~forgot_password').click();
out.alert = await browser.getAlertText();
await browser.acceptAlert();
out.alertAfter = await browser.getAlertText().catch((e) => e.name || e.message);
await browser.deleteSession();
console.log(JSON.stringify(out));
