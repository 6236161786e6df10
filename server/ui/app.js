// The Apex playground page: the conversation panel (session, goals and their
// progress) on the left, the device's live screen on the right. It talks to
// the playground's REST API on the same origin only, under the page's own
// address: at / on the playground, under /devices/ID/playground/ through
// the farm's front door.
"use strict";

const $ = (id) => document.getElementById(id);

const ui = {
  session: null,     // the SessionView last seen
  dims: null,        // {w, h}: the device's screen in pixels
  task: null,        // the task this page follows (follow)
  preview: "",       // "", "choosing", "h264", "webrtc", "mjpeg" or "screenshot"
  shotTimer: 0,
  pollTimer: 0,
  autoTried: false,
  // pushed counts the session states the event stream pushed: an answer
  // fetched while one arrived is older than it and is dropped.
  pushed: 0,
  submitting: false, // POST /execute is in flight
  streamFails: 0,    // MJPEG errors in a row
  listened: false,   // the event stream has been open once
  lastEventId: "",   // the id of the last event seen, to resume the stream from
  seen: new Set(),   // the tasks shown in the conversation
};

// url is the address of the API's path (written "/runtime-info") under
// the page's base, so the page works wherever it is served.
function url(path) {
  return new URL(path.replace(/^\//, ""), document.baseURI).href;
}

// wsURL is url for a WebSocket.
function wsURL(path) {
  return url(path).replace(/^http/, "ws");
}

// api sends a request with an optional JSON body and returns the decoded
// answer; a non-2xx answer throws an Error carrying the API's message.
async function api(method, path, body) {
  const opts = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(url(path), opts);
  const type = res.headers.get("Content-Type") || "";
  const data = type.includes("json") ? await res.json() : await res.text();
  if (!res.ok) {
    const err = new Error((data && data.error) || `${res.status} ${res.statusText}`);
    err.status = res.status;
    err.data = data;
    throw err;
  }
  return data;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// addLog appends a node to the conversation and keeps the newest in view.
function addLog(node) {
  const log = $("log");
  const empty = log.querySelector(".empty");
  if (empty) empty.remove();
  const stick = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  log.appendChild(node);
  if (stick) log.scrollTop = log.scrollHeight;
  return node;
}

function logError(text) { addLog(el("div", "msg error", text)); }

// ---- session ----

function live(state) { return state === "ready" || state === "running"; }

function setSession(v) {
  if (!v) return;
  const was = ui.session ? ui.session.state : "";
  ui.session = v;
  const st = v.state;
  document.body.dataset.session = st;
  const pill = $("status");
  pill.textContent = st === "required" ? "no device" : st === "blocked" ? "setup blocked" : st;
  pill.dataset.state = st;
  const d = v.device;
  $("device-name").textContent = d ? `${d.model || d.serial || d.id} · ${d.platform}` : "";
  $("disconnect").hidden = !live(st);
  $("setup").hidden = st !== "required" && st !== "blocked";
  $("run").disabled = st !== "ready" || !!(ui.task && !ui.task.ended);
  for (const id of ["back", "home", "rec-start", "rec-export"]) $(id).disabled = st !== "ready";
  $("type-form").querySelector("button").disabled = st !== "ready";
  if (d && d.width > 0 && d.height > 0) ui.dims = { w: d.width, h: d.height };
  if (live(st)) {
    startPreview();
  } else if (st === "required" || st === "blocked") {
    stopPreview();
    ui.dims = null;
    if (was !== st) loadSetup();
  }
  if (st === "required" && v.error) $("preview-msg").textContent = "Connecting failed: " + v.error;
  // A task started elsewhere (or before a reload) is followed too.
  if (st === "running" && v.requestId && !ui.submitting && (!ui.task || ui.task.id !== v.requestId)) follow(v.requestId, null);
}

async function refreshSession() {
  const seen = ui.pushed;
  try {
    const info = await api("GET", "/runtime-info");
    ui.info = info; // what does not change while the server runs: the preview's transport lock
    if (ui.pushed === seen) setSession(info.session);
  } catch (e) {
    $("status").textContent = "server unreachable";
    $("status").dataset.state = "offline";
  }
}

async function loadSetup() {
  let s;
  try {
    s = await api("GET", "/session/setup");
  } catch (e) {
    logError("Listing devices failed: " + e.message);
    return;
  }
  const sel = $("device-select");
  sel.replaceChildren();
  const hints = $("setup-hints");
  hints.replaceChildren();
  const field = (s.fields || []).find((f) => f.name === "deviceId") || { options: [] };
  for (const o of field.options) {
    const opt = el("option", "", o.label);
    opt.value = o.value;
    opt.disabled = !!o.disabled;
    if (o.value === field.default) opt.selected = true;
    sel.appendChild(opt);
    if (o.hint) hints.appendChild(el("li", "", `${o.label}: ${o.hint}`));
  }
  for (const w of s.warnings || []) hints.appendChild(el("li", "", w));
  if (s.blocked) hints.prepend(el("li", "blocked", "No device can be connected here: " + s.blocked));
  $("connect").disabled = !!s.blocked || !field.options.some((o) => !o.disabled);
  if (typeof bootSetup === "function") bootSetup(s); // boot.js
  if (s.autoSubmit && !ui.autoTried) {
    ui.autoTried = true;
    connect(field.default);
  }
}

async function connect(id) {
  $("connect").disabled = true;
  setSession({ state: "creating" });
  const seen = ui.pushed;
  try {
    const v = await api("POST", "/session", { deviceId: id || "" });
    if (ui.pushed === seen) setSession(v);
  } catch (e) {
    logError("Connecting failed: " + e.message);
    await refreshSession();
  }
}

async function disconnect() {
  try {
    await api("DELETE", "/session");
  } catch (e) {
    logError("Disconnecting failed: " + e.message);
  }
  refreshSession();
}

// ---- goals ----

// parseStep reads the composer's text as one script step: JSON
// ({"aiTap": "Login"}, or {"action": "Tap", "params": {…}} for an action of
// the action space), or a line as a script writes it (aiTap: Login).
function parseStep(text) {
  if (text.startsWith("{")) {
    let o;
    try {
      o = JSON.parse(text);
    } catch (e) {
      throw new Error("The step is not valid JSON: " + e.message);
    }
    if (o && typeof o.action === "string") return { action: o.action, params: o.params || {} };
    return { step: o };
  }
  const m = /^([A-Za-z]+)\s*:\s*([\s\S]*)$/.exec(text);
  if (!m) throw new Error('Write a step as a script line, e.g. aiTap: Settings, or as JSON, e.g. {"tap": {"text": "Settings"}}');
  return { step: { [m[1]]: m[2].trim() } };
}

async function runGoal(goal) {
  goal = goal.trim();
  if (!goal) return;
  let body = { goal };
  if ($("mode").value === "step") {
    try {
      body = parseStep(goal);
    } catch (e) {
      logError(e.message);
      return;
    }
  }
  const said = addLog(el("div", "msg user", goal));
  if (!body.goal) said.classList.add("step");
  $("run").disabled = true;
  let r;
  ui.submitting = true;
  try {
    r = await api("POST", "/execute", { ...body, async: true });
  } catch (e) {
    logError(e.message);
    $("run").disabled = !ui.session || ui.session.state !== "ready";
    return;
  } finally {
    ui.submitting = false;
  }
  $("goal").value = "";
  follow(r.requestId, goal);
}

// follow shows a task's progress, entry by entry in seq order, up to its
// end entry: entries arrive on /events, and /task-progress fills any gap
// and is the fallback when the stream is down.
function follow(id, goal) {
  if (ui.task && !ui.task.ended && ui.task.id === id) return;
  ui.seen.add(id);
  // since is the seq of the last entry shown; pending holds entries that
  // came past a gap, by seq, each with the task view it came with.
  ui.task = { id, since: 0, ended: false, pending: new Map(), polling: false };
  if (goal === null) addLog(el("div", "msg user", `(task ${id} already running)`));
  $("cancel").hidden = false;
  $("cancel").disabled = false;
  $("run").disabled = true;
  $("task-state").textContent = "Running…";
  pollTask();
  clearInterval(ui.pollTimer);
  ui.pollTimer = setInterval(pollTask, 1000);
}

function showProgress(id, p) {
  const line = el("div", "progress");
  line.dataset.task = id;
  line.dataset.seq = p.seq;
  if (p.status === "failed" || p.status === "error") line.classList.add("failed");
  line.appendChild(el("span", "kind", p.type + (p.step ? ` #${p.step}` : "")));
  line.appendChild(document.createTextNode(" " + (p.text || p.status || "")));
  line.title = `${p.role || ""} ${new Date(p.time).toLocaleTimeString()}`;
  addLog(line);
}

// take takes entries of task id's progress, from the stream or from an
// answer (view is the task as it came with them: the stream's task
// message, an answer of /task-progress or /cancel). It shows each entry
// once, in seq order, and ends the task at its end entry, so the end is
// shown after every line before it, whichever way each arrived. An entry
// past a gap waits while /task-progress is read for the gap.
function take(id, entries, view) {
  const t = ui.task;
  if (!t || t.id !== id || t.ended) return;
  for (const p of entries) {
    if (p.seq > t.since) t.pending.set(p.seq, { p, view });
  }
  for (let next = t.pending.get(t.since + 1); next; next = t.pending.get(t.since + 1)) {
    t.pending.delete(next.p.seq);
    t.since = next.p.seq;
    if (next.p.type === "end") {
      endTask(next.view, next.p);
      return;
    }
    showProgress(id, next.p);
  }
  if (t.pending.size) pollTask();
}

async function pollTask() {
  const t = ui.task;
  if (!t || t.ended || t.polling) return;
  t.polling = true;
  let v;
  try {
    v = await api("GET", `/task-progress/${encodeURIComponent(t.id)}?since=${t.since}`);
  } catch (e) {
    t.polling = false;
    // The server no longer knows the task (it restarted): its end is lost.
    if (e.status === 404) endTask({ requestId: t.id, status: "error", error: e.message }, null);
    return;
  }
  t.polling = false;
  take(t.id, v.progress || [], v);
}

// endTask shows how task v ended: at its end entry end, or with none when
// the server lost the task.
function endTask(v, end) {
  const t = ui.task;
  if (!t || t.id !== v.requestId || t.ended) return;
  t.ended = true;
  clearInterval(ui.pollTimer);
  showEnd(v, end);
  $("cancel").hidden = true;
  $("task-state").textContent = "";
  $("run").disabled = !ui.session || ui.session.state !== "ready";
  refreshSession();
}

// showEnd shows how task v ended (at its end entry end, if any): its
// status, why, its report and what its steps found.
function showEnd(v, end) {
  const box = el("div", `status status-${v.status}`);
  box.dataset.task = v.requestId;
  if (end) box.dataset.seq = end.seq;
  const words = { done: "Done", failed: "Failed", canceled: "Canceled", review_required: "Needs review", error: "Could not run" };
  box.appendChild(el("span", "", words[v.status] || v.status));
  const why = v.error || (v.result && (v.result.reason || v.result.summary));
  if (why) {
    const w = el("span", "muted", why);
    w.title = why; // the whole reason, when the box shows its start
    box.appendChild(w);
  }
  if (v.runId) {
    const a = el("a", "report-link", "Open report");
    a.href = url((v.report && v.report.url) || `/report/${encodeURIComponent(v.runId)}`);
    a.target = "_blank";
    a.rel = "noopener";
    box.appendChild(a);
  }
  addLog(box);
  // What a step found (aiLocate, aiQuery, aiNumber…), by its name.
  const outputs = v.result && v.result.outputs;
  if (outputs && Object.keys(outputs).length) addLog(el("pre", "outputs", JSON.stringify(outputs, null, 2)));
}

// missed shows the tasks that began after event since, which the event
// stream could no longer replay (a gap): each ended one whole, a running
// one followed.
async function missed(since) {
  let r;
  try {
    r = await api("GET", `/tasks?since=${encodeURIComponent(since)}`);
  } catch (e) {
    logError("Listing the tasks missed failed: " + e.message);
    return;
  }
  for (const t of r.tasks) {
    if (ui.seen.has(t.requestId)) continue;
    if (t.status === "running") {
      if (!ui.submitting) follow(t.requestId, null);
      continue;
    }
    ui.seen.add(t.requestId);
    let v;
    try {
      v = await api("GET", `/task-progress/${encodeURIComponent(t.requestId)}`);
    } catch (e) {
      continue; // no longer kept
    }
    addLog(el("div", "msg user", `(task ${v.requestId} ran while this page was away: ${v.goal})`));
    let end = null;
    for (const p of v.progress || []) {
      if (p.type === "end") end = p;
      else showProgress(v.requestId, p);
    }
    showEnd(v, end);
  }
}

async function cancelTask() {
  const t = ui.task;
  if (!t || t.ended) return;
  $("cancel").disabled = true;
  $("task-state").textContent = "Canceling…";
  try {
    const v = await api("POST", `/cancel/${encodeURIComponent(t.id)}`);
    take(v.requestId, v.progress || [], v);
  } catch (e) {
    if (e.status === 409 && e.data && e.data.status) {
      pollTask(); // it had ended already: its end entry is on its way
    } else {
      logError("Cancel failed: " + e.message);
      $("cancel").disabled = false;
    }
  }
}

// ---- events ----

function listen() {
  // A new stream resumes where the last one stopped; the browser's own
  // reconnections send Last-Event-ID themselves.
  const es = new EventSource(url("/events") + (ui.lastEventId !== "" ? "?lastEventId=" + encodeURIComponent(ui.lastEventId) : ""));
  ui.es = es;
  const data = (ev) => {
    if (ev.lastEventId !== "") ui.lastEventId = ev.lastEventId;
    return JSON.parse(ev.data);
  };
  // The server no longer holds what this page missed: list the tasks.
  es.addEventListener("gap", (ev) => missed(data(ev).gap));
  es.addEventListener("session", (ev) => {
    ui.pushed++;
    setSession(data(ev).session);
  });
  es.addEventListener("progress", (ev) => {
    const m = data(ev);
    take(m.requestId, [m.progress], null);
  });
  // A task's end is the last entry of its progress, with the ended task.
  es.addEventListener("task", (ev) => {
    const m = data(ev);
    take(m.requestId, m.progress ? [m.progress] : [], m.task);
  });
  es.addEventListener("supervisor", (ev) => window.apexPreview.supervised(data(ev).supervisor));
  es.onopen = () => {
    // Back after a break: catch up on what the stream missed.
    if (ui.listened) {
      refreshSession();
      pollTask();
      // A drop that broke this stream broke the preview's too, and a
      // multipart image that loses its connection just stops: connect it
      // again.
      if (ui.preview === "mjpeg") $("screen").src = url("/mjpeg?r=" + Date.now());
    }
    ui.listened = true;
  };
  es.onerror = () => {
    // The browser reconnects by itself; meanwhile the task is polled.
    if (es.readyState === EventSource.CLOSED && ui.es === es) setTimeout(listen, 2000);
  };
}

// A page left for another (a report in the same tab) gives back its
// streams at once: browsers allow six connections to a host, and a page
// kept for the back button would otherwise hold two of them open.
window.addEventListener("pagehide", () => {
  if (ui.es) ui.es.close();
  ui.es = null;
  stopPreview();
});
window.addEventListener("pageshow", (e) => {
  if (!e.persisted) return;
  ui.listened = false;
  listen();
  refreshSession();
});

// ---- preview ----

function startPreview() {
  $("screen-empty").hidden = true;
  if (!ui.dims) measure();
  if (ui.preview) return;
  ui.preview = "choosing";
  choosePreview();
}

// choosePreview is the one place the preview's transport is chosen: WebRTC
// when the server is locked to it (webrtc.js), else H.264 over a WebSocket
// when WebCodecs decodes it here (preview.js), falling back to MJPEG when it
// cannot, or when the server refuses it; ?preview=mjpeg in the page's
// address asks for MJPEG.
async function choosePreview() {
  const mjpegOnly = new URLSearchParams(location.search).get("preview") === "mjpeg";
  // A host locked to WebRTC says so in /runtime-info (webrtc.js).
  const lock = mjpegOnly ? "" : await previewLock();
  const ok = !mjpegOnly && !lock && (await h264Supported());
  if (ui.preview !== "choosing") return;
  if (lock === "webrtc") {
    ui.preview = "webrtc";
    showTransport("webrtc", "WebRTC", "");
    $("screen").hidden = true;
    startWebRTC((reason) => { if (ui.preview === "webrtc") startMJPEG(reason); });
    return;
  }
  if (!ok) {
    startMJPEG(mjpegOnly ? "asked for by ?preview=mjpeg" : "this browser cannot decode H.264 (WebCodecs)");
    return;
  }
  ui.preview = "h264";
  showTransport("h264", "H.264 (WebCodecs)", "");
  $("screen").hidden = true;
  let fails = 0;
  const onFail = (reason, refused) => {
    if (ui.preview !== "h264") return;
    if (!refused && ++fails <= 3) {
      $("preview-msg").textContent = "Live stream interrupted; reconnecting…";
      setTimeout(() => { if (ui.preview === "h264") startH264($("screen-video"), onFail); }, 700 * fails);
      return;
    }
    $("screen-video").hidden = true;
    startMJPEG(reason);
  };
  startH264($("screen-video"), onFail);
}

// showTransport names the live preview's transport, and why when it is
// a fallback.
function showTransport(kind, label, why) {
  const t = $("transport");
  t.dataset.transport = kind;
  t.textContent = why ? `${label} — ${why}` : label;
}

function startMJPEG(why) {
  const img = $("screen");
  img.hidden = false;
  ui.preview = "mjpeg";
  showTransport("mjpeg", "MJPEG", why);
  img.onerror = () => {
    if (ui.preview === "mjpeg" && ++ui.streamFails <= 3) {
      // The stream broke (the device link was reopened, the network
      // blinked): connect again, waiting a little longer each time.
      $("preview-msg").textContent = "Live stream interrupted; reconnecting…";
      setTimeout(() => { if (ui.preview === "mjpeg") img.src = url("/mjpeg?r=" + Date.now()); }, 700 * ui.streamFails);
    } else if (ui.preview === "mjpeg") {
      // The stream keeps failing: fall back to polling single screenshots.
      ui.preview = "screenshot";
      showTransport("screenshot", "screenshots", "the live stream keeps failing");
      $("preview-msg").textContent = "Live stream unavailable; refreshing screenshots.";
      nextShot();
    } else if (ui.preview === "screenshot") {
      clearTimeout(ui.shotTimer);
      ui.shotTimer = setTimeout(nextShot, 1500);
    }
  };
  img.onload = () => {
    if (ui.preview === "mjpeg" && ui.streamFails) {
      ui.streamFails = 0;
      $("preview-msg").textContent = "";
    }
    if (ui.preview === "screenshot") {
      clearTimeout(ui.shotTimer);
      ui.shotTimer = setTimeout(nextShot, 500);
    }
  };
  img.src = url("/mjpeg?r=" + Date.now());
}

function nextShot() {
  if (ui.preview !== "screenshot") return;
  $("screen").src = url("/screenshot?t=" + Date.now());
}

function stopPreview() {
  ui.preview = "";
  stopH264();
  stopWebRTC();
  $("screen-video").hidden = true;
  showTransport("", "none", "");
  clearTimeout(ui.shotTimer);
  const img = $("screen");
  img.onerror = img.onload = null;
  img.removeAttribute("src");
  img.hidden = true;
  $("screen-empty").hidden = false;
}

// measure learns the device's size in pixels from a full screenshot when
// the session does not say (the stream may be scaled down).
function measure() {
  const probe = new Image();
  probe.onload = () => {
    if (!ui.dims && probe.naturalWidth > 0) ui.dims = { w: probe.naturalWidth, h: probe.naturalHeight };
  };
  probe.src = url("/screenshot?measure=" + Date.now());
}

// toDevice maps a point of the page onto the device's screen.
function toDevice(clientX, clientY) {
  const img = { h264: $("screen-video"), webrtc: $("screen-rtc") }[ui.preview] || $("screen");
  const r = img.getBoundingClientRect();
  const w = ui.dims ? ui.dims.w : img.naturalWidth || img.width;
  const h = ui.dims ? ui.dims.h : img.naturalHeight || img.height;
  const fx = Math.min(Math.max((clientX - r.left) / r.width, 0), 0.9999);
  const fy = Math.min(Math.max((clientY - r.top) / r.height, 0), 0.9999);
  return { x: Math.floor(fx * w), y: Math.floor(fy * h) };
}

function showTouch(clientX, clientY) {
  const box = $("screen-box").getBoundingClientRect();
  const t = $("touch");
  t.hidden = true;
  void t.offsetWidth; // restart the animation
  t.style.left = clientX - box.left + "px";
  t.style.top = clientY - box.top + "px";
  t.hidden = false;
}

// act runs one action of the action space by hand.
async function act(action, params, label) {
  const line = addLog(el("div", "msg manual", label));
  try {
    const r = await api("POST", "/interact", { action, params: params || {} });
    line.textContent = `${label} ✓` + (r.element && r.element.text ? ` (${r.element.text})` : "");
    if (ui.preview === "screenshot") nextShot();
    if (recording) refreshRecorder();
    return r;
  } catch (e) {
    line.remove();
    logError(`${label}: ${e.message}`);
  }
}

function bindScreen() {
  for (const img of [$("screen"), $("screen-video")]) bindSurface(img);
}

// bindSurface maps clicks and drags on one of the screen's surfaces (the
// MJPEG image, the H.264 canvas) to taps and swipes.
function bindSurface(img) {
  let down = null;
  img.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    e.preventDefault();
    img.setPointerCapture(e.pointerId);
    down = { x: e.clientX, y: e.clientY, t: performance.now() };
  });
  img.addEventListener("pointerup", (e) => {
    if (!down) return;
    const from = down;
    down = null;
    if (!ui.session || ui.session.state !== "ready") {
      $("preview-msg").textContent = ui.session && ui.session.state === "running" ? "A task is running: cancel it to act by hand." : "No device session.";
      return;
    }
    const a = toDevice(from.x, from.y);
    const b = toDevice(e.clientX, e.clientY);
    const moved = Math.hypot(e.clientX - from.x, e.clientY - from.y);
    showTouch(from.x, from.y);
    if (moved < 6) {
      // A click taps the point; the recorder keeps the element there.
      act("Tap", { locate: { x: a.x, y: a.y } }, `Tap at ${a.x}, ${a.y}`);
    } else {
      const ms = Math.round(Math.min(Math.max(performance.now() - from.t, 100), 3000));
      act("Swipe", { start: a, end: b, duration: ms }, `Swipe ${a.x}, ${a.y} → ${b.x}, ${b.y}`);
    }
  });
  img.addEventListener("pointercancel", () => { down = null; });
}

// ---- recorder ----

let recording = false;

function setRecording(on, count) {
  recording = on;
  $("rec-state").textContent = on ? `recording${count !== undefined ? " · " + count : ""}` : count ? `off · ${count} recorded` : "off";
  $("rec-state").dataset.state = on ? "on" : "off";
  $("rec-start").disabled = on;
  $("rec-stop").disabled = !on;
}

async function refreshRecorder() {
  try {
    const r = await api("GET", "/recorder/events");
    setRecording(r.recording, (r.events || []).length);
  } catch (e) { /* the recorder view is best effort */ }
}

async function recorder(op) {
  try {
    if (op === "export") {
      const yaml = await api("GET", "/recorder/export");
      $("rec-yaml").textContent = yaml;
      $("rec-yaml").hidden = false;
      return;
    }
    const r = await api("POST", `/recorder/${op}`);
    setRecording(r.recording, r.events);
  } catch (e) {
    logError(`Recorder ${op}: ${e.message}`);
  }
}

// ---- layout ----

function bindDivider() {
  const div = $("divider");
  const root = document.documentElement;
  const saved = localStorage.getItem("apex.left");
  if (saved) root.style.setProperty("--left", saved);
  const set = (pct) => {
    pct = Math.min(Math.max(pct, 20), 80).toFixed(1) + "%";
    root.style.setProperty("--left", pct);
    localStorage.setItem("apex.left", pct);
  };
  div.addEventListener("pointerdown", (e) => {
    div.setPointerCapture(e.pointerId);
    document.body.classList.add("resizing");
    const move = (ev) => set((ev.clientX / window.innerWidth) * 100);
    const up = () => {
      document.body.classList.remove("resizing");
      div.removeEventListener("pointermove", move);
      div.removeEventListener("pointerup", up);
    };
    div.addEventListener("pointermove", move);
    div.addEventListener("pointerup", up);
  });
  div.addEventListener("keydown", (e) => {
    const cur = $("conversation").getBoundingClientRect().width / window.innerWidth * 100;
    if (e.key === "ArrowLeft") set(cur - 2);
    if (e.key === "ArrowRight") set(cur + 2);
  });
}

// ---- start ----

function bindMode() {
  const hints = {
    goal: 'A goal, e.g. tap "Settings", then check "Network & internet" exists',
    step: 'One script step, e.g. aiTap: Settings · aiAssert: the Wi-Fi switch is on · {"tap": {"text": "Settings"}}',
  };
  const saved = localStorage.getItem("apex.mode");
  if (saved && hints[saved]) $("mode").value = saved;
  const show = () => {
    $("goal").placeholder = hints[$("mode").value];
    localStorage.setItem("apex.mode", $("mode").value);
  };
  $("mode").onchange = show;
  show();
}

function bind() {
  $("connect").onclick = () => connect($("device-select").value);
  $("refresh-devices").onclick = loadSetup;
  $("disconnect").onclick = disconnect;
  $("goal-form").onsubmit = (e) => { e.preventDefault(); runGoal($("goal").value); };
  $("goal").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("goal-form").requestSubmit(); }
  });
  $("cancel").onclick = cancelTask;
  $("back").onclick = () => act("Back", {}, "Back");
  $("home").onclick = () => act("Home", {}, "Home");
  $("type-form").onsubmit = (e) => {
    e.preventDefault();
    const v = $("type-text").value;
    if (!v) return;
    act("Input", { value: v }, `Type “${v}”`).then((r) => { if (r) $("type-text").value = ""; });
  };
  $("rec-start").onclick = () => recorder("start");
  $("rec-stop").onclick = () => recorder("stop");
  $("rec-export").onclick = () => recorder("export");
  bindScreen();
  bindDivider();
  bindMode();
}

// The page starts once every script of it has run (DOMContentLoaded comes
// after them): an answer that arrives sooner would call into a script not
// loaded yet (stopPreview into preview.js), fail, and leave the page stuck.
document.addEventListener("DOMContentLoaded", () => {
  bind();
  setRecording(false);
  refreshSession().then(refreshRecorder);
  listen();
});
