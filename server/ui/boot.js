// Booting simulated phones from the devices list: a button for each
// platform the playground boots (POST /devices/boot; the host's run cap
// applies) and Shut down for a phone it booted (DELETE /devices/ID).
// It uses app.js's helpers ($, el, api, loadSetup, logError, addLog).
"use strict";

const boot = { setup: null };

// bootSetup shows the boot buttons of the setup form s (GET /session/setup).
function bootSetup(s) {
  boot.setup = s;
  const row = $("boot-row");
  row.replaceChildren();
  const words = { android: "Boot an Android phone", ios: "Boot an iPhone" };
  for (const p of s.boot || []) {
    const b = el("button", "ghost", words[p] || "Boot " + p);
    b.type = "button";
    b.dataset.platform = p;
    b.onclick = () => bootPhone(p, b);
    row.appendChild(b);
  }
  const off = el("button", "ghost", "Shut down");
  off.id = "shutdown";
  off.type = "button";
  off.title = "Stop the selected phone, which this playground booted";
  off.onclick = shutdownPhone;
  row.appendChild(off);
  row.hidden = !(s.boot || []).length;
  bootSync();
}

// bootSync offers Shut down only for a phone this playground booted.
function bootSync() {
  const off = $("shutdown");
  if (!off || !boot.setup) return;
  const field = (boot.setup.fields || []).find((f) => f.name === "deviceId") || { options: [] };
  const o = field.options.find((o) => o.value === $("device-select").value);
  off.hidden = !(o && o.booted);
}

async function bootPhone(platform, button) {
  const label = button.textContent;
  button.disabled = true;
  button.textContent = "Booting…";
  try {
    const t = await api("POST", "/devices/boot", { platform });
    addLog(el("div", "msg", `Booted ${t.id}`));
    await loadSetup();
    $("device-select").value = t.id;
    bootSync();
  } catch (e) {
    logError("Booting failed: " + e.message);
  } finally {
    button.disabled = false;
    button.textContent = label;
  }
}

async function shutdownPhone() {
  const id = $("device-select").value;
  $("shutdown").disabled = true;
  try {
    await api("DELETE", "/devices/" + encodeURIComponent(id));
    addLog(el("div", "msg", `Shut down ${id}`));
  } catch (e) {
    logError("Shutting down failed: " + e.message);
  }
  $("shutdown").disabled = false;
  loadSetup();
}

$("device-select").addEventListener("change", bootSync);
