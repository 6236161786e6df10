// What the webdriverio clients share: a native session on the simulated
// WebDriverAgent at argv's URL, and WebDriverAgent's own endpoints (/wda/…)
// as webdriver protocol commands defined with the package's `command`.
import WebDriver, { command } from 'webdriver';
import { attach } from 'webdriverio';

const url = new URL(process.argv[2]);
const conn = { protocol: 'http', hostname: url.hostname, port: Number(url.port), path: '/', logLevel: 'silent', connectionRetryCount: 0 };

// open starts the app bundleId in a new session and attaches webdriverio to
// it: remote() would take an app's name in browserName for a web session,
// so open a native session and attach to it, as Appium-less scripts do.
export async function open(bundleId) {
  const session = await WebDriver.newSession({ ...conn,
    capabilities: { platformName: 'iOS', 'appium:automationName': 'XCUITest', 'appium:bundleId': bundleId } });
  return attach({ ...conn, sessionId: session.sessionId, capabilities: session.capabilities, isMobile: true, isIOS: true });
}

const any = '(string|number|object|boolean)';
// wda defines a session command at path (after /session/:sessionId) whose
// body holds params and whose path holds variables; call it with
// .call(browser, ...variables, ...params).
export const wda = (method, name, path, params = [], variables = []) => command(method, '/session/:sessionId' + path, {
  command: name, ref: 'WebDriverAgent', variables: variables.map((v) => ({ name: v, type: 'string', required: true })),
  parameters: params.map((p) => ({ name: p, type: any, required: false })),
});
