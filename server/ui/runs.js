// Recent runs: the header's Reports button lists the runs recorded in this
// playground's runs directory (its tasks, and apex run's when they share
// it), newest first, each linking to its report.
// It uses app.js's helpers ($, el, api).
"use strict";

const runWords = { passed: "passed", failed: "failed", error: "error", canceled: "canceled", running: "running", lost: "lost" };

async function showRuns() {
  const list = $("runs-list");
  list.replaceChildren(el("li", "muted", "Loading…"));
  let r;
  try {
    r = await api("GET", "/runs?limit=50");
  } catch (e) {
    list.replaceChildren(el("li", "bad", "Listing runs failed: " + e.message));
    return;
  }
  list.replaceChildren();
  if (!r.runs.length) list.appendChild(el("li", "muted", "No runs recorded yet: run a goal or a step."));
  for (const run of r.runs) {
    const li = el("li", "run");
    const a = el("a", "run-name", run.name || run.id);
    a.href = url(run.report);
    a.target = "_blank";
    a.rel = "noopener";
    li.append(el("span", `badge badge-${run.status}`, runWords[run.status] || run.status), a);
    const when = new Date(run.started);
    const meta = el("span", "muted small", when.toLocaleString() + (run.device ? " · " + run.device : ""));
    li.appendChild(meta);
    if (run.reason) {
      const why = el("span", "run-reason small", run.reason);
      why.title = run.reason;
      li.appendChild(why);
    }
    list.appendChild(li);
  }
}

function bindRuns() {
  const dlg = $("runs-dialog");
  $("runs-open").onclick = () => {
    showRuns();
    dlg.showModal();
  };
  $("runs-close").onclick = () => dlg.close();
}

bindRuns();
