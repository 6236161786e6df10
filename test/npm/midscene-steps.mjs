// The step protocol and connection the Midscene Android clients share.
// Usage of a client: node CLIENT.mjs SERIAL ADB_PATH ADB_SERVER_PORT (with
// MIDSCENE_MODEL_NAME set to anything: AndroidAgent wants one).
import { AndroidAgent, AndroidDevice } from '@midscene/android';
import readline from 'node:readline';

const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

// step prints one JSON line naming the step and waits for one line on
// stdin (the Go test checks the phone in between and may answer with JSON).
export async function step(name, data = {}) {
  console.log(JSON.stringify({ step: name, ...data }));
  const { value, done } = await lines.next();
  if (done) process.exit(1);
  return value ? JSON.parse(value) ?? {} : {};
}

// connect connects Midscene's device to the serial in argv and makes its
// agent, which gives the device Midscene's app-name mapping (Settings →
// com.android.settings); no model is called.
export async function connect() {
  const [serial, adbPath, adbPort] = process.argv.slice(2);
  const dev = new AndroidDevice(serial, { androidAdbPath: adbPath, remoteAdbPort: Number(adbPort) });
  await dev.connect();
  return { dev, agent: new AndroidAgent(dev) };
}
