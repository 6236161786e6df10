// Opening the playground with ?context=<uuid> (a report's "Open in
// playground"): a banner in the conversation panel says where the person
// comes from, and the goal field is prefilled with the suggested goal.
// It uses app.js's helpers ($, el, api).
"use strict";

async function openContext() {
  const params = new URLSearchParams(location.search);
  const id = params.get("context");
  if (!id) return;
  // Drop the parameter from the address bar: a reload starts clean.
  params.delete("context");
  const rest = params.toString();
  history.replaceState(history.state, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
  let c;
  try {
    c = await api("GET", `/context/${encodeURIComponent(id)}`);
  } catch (e) {
    showContext(null, e.status === 404
      ? "This link's context is gone: contexts last an hour and do not survive a restart of the playground. Open it again from the report."
      : "Loading the context failed: " + e.message);
    return;
  }
  showContext(c);
  if (c.goal && !$("goal").value.trim()) {
    // A script step is suggested as one: the composer switches to steps.
    $("mode").value = c.mode === "step" ? "step" : "goal";
    $("mode").dispatchEvent(new Event("change"));
    $("goal").value = c.goal;
    $("goal").focus();
  }
}

// showContext fills the banner with context c, or with a notice when c
// could not be had.
function showContext(c, notice) {
  const box = $("context");
  box.replaceChildren();
  box.dataset.state = c ? "ok" : "missing";
  const head = el("div", "row");
  const title = el("strong", "context-title");
  head.append(title, el("span", "spacer"));
  const close = el("button", "ghost context-dismiss", "×");
  close.type = "button";
  close.title = "Dismiss";
  close.setAttribute("aria-label", "Dismiss");
  close.onclick = () => { box.hidden = true; };
  head.appendChild(close);
  box.appendChild(head);
  box.hidden = false;
  if (!c) {
    title.textContent = "Context not found";
    box.appendChild(el("p", "muted context-line", notice));
    return;
  }
  const run = c.run;
  const step = run && run.step;
  if (!run) {
    title.textContent = "From a note";
  } else {
    title.textContent = `From run ${run.name || run.script || run.id}` + (step ? ` · step ${step.index}: ${step.name || step.action || ""}` : "");
  }
  const body = el("div", "context-body");
  const text = el("div", "context-text");
  if (run) {
    const line = el("div", "context-line");
    const st = step ? step.status : run.status;
    line.appendChild(el("span", `badge badge-${st}`, st));
    if (step && step.task) line.appendChild(el("span", "muted", ` task ${step.task}`));
    if (step && step.action) line.appendChild(el("code", "context-action", step.action));
    const a = el("a", "context-report", "Open report");
    a.href = url(run.report);
    a.target = "_blank";
    a.rel = "noopener";
    line.appendChild(a);
    text.appendChild(line);
  }
  if (step && step.error) text.appendChild(el("div", "context-error", step.error));
  if (c.note) text.appendChild(el("div", "context-note", c.note));
  if (c.goal) text.appendChild(el("div", "muted small", "The goal below is prefilled from it; edit it and press Run."));
  body.appendChild(text);
  if (step) {
    for (const [label, src] of [["before", step.before], ["after", step.after]]) {
      if (!src) continue;
      const a = el("a", "context-shot");
      a.href = url(src);
      a.target = "_blank";
      a.rel = "noopener";
      a.title = `The screen ${label} the step (opens full size)`;
      const img = el("img");
      img.src = url(src);
      img.alt = `Screen ${label} step ${step.index}`;
      a.append(img, el("span", "small muted", label));
      body.appendChild(a);
    }
  }
  box.appendChild(body);
}

// After app.js's start (its DOMContentLoaded listener comes first): a
// context that arrived sooner had its step mode reset to the saved one
// when the page's start bound the mode.
document.addEventListener("DOMContentLoaded", openContext);
