// Device settings: a folded card under the preview listing the settings of the
// session's action space (the actions marked as settings), one row each
// with inputs built from its params schema, a Set button (POST /interact)
// and the value the device reports afterwards.
// It uses app.js's helpers ($, el, api).
"use strict";

// settingInput builds the input of one param from its schema.
function settingInput(name, schema) {
  if (schema.enum) {
    const sel = el("select");
    for (const v of schema.enum) sel.appendChild(new Option(v, v));
    return sel;
  }
  const input = el("input");
  switch (schema.type) {
    case "boolean":
      input.type = "checkbox";
      break;
    case "number":
    case "integer":
      input.type = "number";
      input.step = schema.type === "integer" ? "1" : "any";
      if (schema.minimum !== undefined) input.min = schema.minimum;
      if (schema.maximum !== undefined) input.max = schema.maximum;
      input.value = schema.minimum !== undefined && schema.minimum > 0 ? schema.minimum : "";
      break;
    default:
      input.type = "text";
      input.placeholder = (schema.description || name).replace(/^.*e\.g\. /, "");
  }
  return input;
}

function paramValue(input, schema) {
  if (input.type === "checkbox") return input.checked;
  if (input.type === "number") return input.value === "" ? undefined : Number(input.value);
  return input.value;
}

function settingRow(a) {
  const row = el("div", "setting-row");
  row.dataset.action = a.name;
  row.title = a.description;
  row.appendChild(el("span", "setting-name", a.name.replace(/^Set/, "")));
  const props = (a.schema && a.schema.properties) || {};
  const inputs = {};
  for (const [name, schema] of Object.entries(props)) {
    const label = el("label", "small", name + " ");
    inputs[name] = settingInput(name, schema);
    inputs[name].name = name;
    label.appendChild(inputs[name]);
    row.appendChild(label);
  }
  const set = el("button", "", "Set");
  set.type = "button";
  const out = el("span", "setting-answer small muted", "");
  set.onclick = async () => {
    const params = {};
    for (const [name, input] of Object.entries(inputs)) {
      const v = paramValue(input, props[name]);
      if (v !== undefined) params[name] = v;
    }
    set.disabled = true;
    out.className = "setting-answer small muted";
    out.textContent = "…";
    try {
      const r = await api("POST", "/interact", { action: a.name, params });
      out.className = "setting-answer small good";
      out.textContent = "device reports " + JSON.stringify(r.answer);
    } catch (e) {
      out.className = "setting-answer small bad";
      out.textContent = e.message;
    } finally {
      set.disabled = false;
    }
  };
  row.append(set, out);
  return row;
}

async function showDeviceSettings() {
  const card = $("device-settings");
  const list = $("device-settings-list");
  if (document.body.dataset.session !== "ready") {
    card.hidden = true;
    return;
  }
  let space;
  try {
    space = await api("GET", "/action-space");
  } catch (e) {
    list.replaceChildren(el("div", "bad small", "Listing the settings failed: " + e.message));
    card.hidden = false;
    return;
  }
  list.replaceChildren(...space.actions.filter((a) => a.setting).map(settingRow));
  card.hidden = list.children.length === 0;
}

function bindDeviceSettings() {
  // Folded by default, so the preview keeps its room.
  const card = el("details", "card device-settings");
  card.id = "device-settings";
  card.hidden = true;
  const head = el("summary");
  head.appendChild(el("strong", "", "Device settings"));
  const list = el("div", "setting-list");
  list.id = "device-settings-list";
  card.append(head, list);
  $("preview-panel").appendChild(card);
  // The list follows the session: shown when a device is ready.
  let shown = "";
  new MutationObserver(() => {
    const st = document.body.dataset.session;
    if ((st === "ready") !== (shown === "ready")) showDeviceSettings();
    shown = st;
  }).observe(document.body, { attributes: true, attributeFilter: ["data-session"] });
  if (document.body.dataset.session === "ready") {
    shown = "ready";
    showDeviceSettings();
  }
}

bindDeviceSettings();
