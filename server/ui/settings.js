// Model settings: the header shows which model runs goals; the dialog
// edits the provider, base URL, model and API key (POST /config), tests
// them (POST /config/test) or returns to the environment's. The key is
// never shown back: a blank key field keeps the one in force.
// It uses app.js's helpers ($, el, api, logError).
"use strict";

const modelFields = ["provider", "baseUrl", "model", "apiKey"];

function showModel(m) {
  const b = $("model-open");
  if (!m) return;
  b.textContent = m.offline ? "Model: offline rule planner" : `Model: ${m.model || "configured"}`;
  b.dataset.source = m.source;
  b.title = m.offline
    ? "No model configured: goals run on the rule planner in its controlled language. Click to set one."
    : `${m.model} ${m.baseUrl ? "at " + m.baseUrl : ""} (${m.source === "playground" ? "set here" : "from apex.yaml or the environment"})`;
  const src = $("model-source");
  src.textContent = m.offline
    ? "No model configured: goals run on the offline rule planner (controlled language only)."
    : `In force: ${m.model}${m.provider ? " · " + m.provider : ""}${m.baseUrl ? " · " + m.baseUrl : ""}${m.apiKeySet ? " · key set" : ""} — ${m.source === "playground" ? "set here" : "from apex.yaml or the environment"}${m.pending ? " (applies after the running task)" : ""}.`;
  for (const f of ["provider", "baseUrl", "model"]) {
    if (document.activeElement !== $("m-" + f)) $("m-" + f).value = m[f] || "";
  }
  $("m-apiKey").placeholder = m.apiKeySet ? "•••••• (kept unless you type a new one)" : "API key (not needed for local servers)";
}

async function loadModel() {
  try {
    showModel((await api("GET", "/config")).model);
  } catch (e) {
    $("model-open").textContent = "Model: unknown";
  }
}

// formSettings is what the dialog says: the fields that are filled in.
function formSettings() {
  const m = {};
  for (const f of modelFields) {
    const v = $("m-" + f).value.trim();
    if (v) m[f] = v;
  }
  return m;
}

function modelResult(cls, text) {
  const r = $("model-result");
  r.className = "model-result small " + cls;
  r.replaceChildren();
  if (typeof text === "string") r.textContent = text;
  else r.appendChild(text);
}

async function saveModel(body) {
  modelResult("muted", "Saving…");
  try {
    const r = await api("POST", "/config", body);
    showModel(r.model);
    $("m-apiKey").value = "";
    modelResult("ok", r.changed ? (r.model.pending ? "Saved: applies when the running task ends." : "Saved: the next goal uses it.") : "Nothing changed.");
  } catch (e) {
    modelResult("bad", e.message);
  }
}

async function testModel() {
  modelResult("muted", "Asking the model…");
  $("m-test").disabled = true;
  try {
    const r = await api("POST", "/config/test", formSettings());
    const list = el("ul", "checks");
    for (const c of r.results) {
      const li = el("li", c.ok ? "ok" : "bad");
      li.textContent = `${c.ok ? "✓" : "✗"} ${c.roles.join(", ")}: ${c.model} — ${c.ok ? `answered “${c.answer}” in ${c.latencyMs} ms` : c.error}`;
      list.appendChild(li);
    }
    modelResult(r.ok ? "ok" : "bad", list);
  } catch (e) {
    modelResult("bad", e.message);
  } finally {
    $("m-test").disabled = false;
  }
}

function bindModel() {
  const dlg = $("model-dialog");
  $("model-open").onclick = () => {
    modelResult("muted", "");
    loadModel();
    dlg.showModal();
    $("m-model").focus();
  };
  $("m-close").onclick = () => dlg.close();
  $("model-form").onsubmit = (e) => { e.preventDefault(); saveModel(formSettings()); };
  $("m-test").onclick = testModel;
  $("m-reset").onclick = () => {
    for (const f of modelFields) $("m-" + f).value = "";
    saveModel({ reset: true });
  };
}

bindModel();
loadModel();
