// Drives a simulated iPhone's WebDriverAgent gestures with webdriverio:
// element swipe, scroll and pinch, Appium's touch actions (one finger and
// two), W3C actions with two pointers, a URL opened with browser.url, and
// the MJPEG server whose port /appium/settings reports.
// Usage: node wdio-gestures-client.mjs http://127.0.0.1:PORT
// Prints one JSON object of what it saw on its last line.
import { open, wda } from './wdio-session.mjs';

const browser = await open('com.apex.notes');
const elementSwipe = wda('POST', 'wdaElementSwipe', '/wda/element/:elementId/swipe', ['direction', 'velocity'], ['elementId']);
const elementScroll = wda('POST', 'wdaElementScroll', '/wda/element/:elementId/scroll', ['direction', 'predicateString', 'distance'], ['elementId']);
const elementPinch = wda('POST', 'wdaElementPinch', '/wda/element/:elementId/pinch', ['scale', 'velocity'], ['elementId']);
const touchPerform = wda('POST', 'wdaTouchPerform', '/wda/touch/perform', ['actions']);
const multiTouchPerform = wda('POST', 'wdaMultiTouchPerform', '/wda/touch/multi/perform', ['actions']);
const settings = wda('GET', 'wdaGetSettings', '/appium/settings');
const out = {};
const label = (text) => browser.$(`-ios predicate string:label == "${text}"`);

const list = await browser.$('~notes').elementId;
await elementSwipe.call(browser, list, 'up');
out.elementSwipe = !(await (await label('Groceries 1')).isDisplayed());
await elementScroll.call(browser, list, undefined, "label == 'Garden 2'");
out.elementScroll = await (await label('Garden 2')).isDisplayed();
const cell = await browser.$('(//XCUIElementTypeCell)[2]').elementId;
await touchPerform.call(browser, [{ action: 'tap', options: { element: cell } }]);
out.touchPerform = await browser.$('~note_title').isDisplayed();

await browser.url('https://example.com/map');
const page = await browser.$('~page_view');
out.url = await browser.$('-ios predicate string:value == "https://example.com/map"').isDisplayed();
await elementPinch.call(browser, page.elementId, 2, 1);
out.elementPinch = await page.getAttribute('label');
const r = await page.getElementRect(page.elementId);
const cx = Math.round(r.x + r.width / 2), cy = Math.round(r.y + r.height / 2);
const finger = (dx, to) => [{ action: 'press', options: { x: cx + dx, y: cy } }, { action: 'moveTo', options: { x: cx + to, y: cy } }, { action: 'release' }];
await multiTouchPerform.call(browser, [finger(-30, -90), finger(30, 90)]);
out.multiTouchPerform = await page.getAttribute('label');
const pointer = (id, from, to) => ({ type: 'pointer', id, parameters: { pointerType: 'touch' }, actions: [
  { type: 'pointerMove', duration: 0, x: cx + from, y: cy }, { type: 'pointerDown', button: 0 },
  { type: 'pointerMove', duration: 300, x: cx + to, y: cy }, { type: 'pointerUp', button: 0 }] });
await browser.performActions([pointer('finger1', -120, -40), pointer('finger2', 120, 40)]);
out.twoPointerActions = await page.getAttribute('label');

const port = (await settings.call(browser)).mjpegServerPort;
const res = await fetch(`http://127.0.0.1:${port}/`);
const reader = res.body.getReader();
let head = new Uint8Array();
while (head.length < 200) {
  const { value } = await reader.read();
  head = new Uint8Array([...head, ...value]);
}
await reader.cancel();
const text = new TextDecoder('latin1').decode(head);
const body = head.slice(text.indexOf('\r\n\r\n') + 4);
out.mjpeg = [res.headers.get('content-type'), text.startsWith('--BoundaryString\r\nContent-type: image/jpeg'), body[0] === 0xff && body[1] === 0xd8];
await browser.deleteSession();
console.log(JSON.stringify(out));
