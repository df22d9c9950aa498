// mmsim serve's page: controls made from /api/controls, each change sent to
// /api/try (debounced), the answer polled from /api/state as seeds finish.
// `?demo=KEY=VALUE` drives the page itself (scripts/browser-check.sh): it
// moves that control as a user would, waits for the whole answer, pins and
// saves, and writes what it saw into the title for the script to read.
"use strict";

const $ = (id) => document.getElementById(id);
const NAMES = {
  "wait_s.p50": "wait p50",
  "wait_s.p90": "wait p90",
  "abandon_rate": "abandon rate",
  "spread_rating.mean": "rating spread (mean)",
  "win_prob_gap.mean": "true win-probability gap |P − 0.5| (mean)",
  "matches_per_hour": "matches per hour",
};
const params = new URLSearchParams(location.search);
const demo = params.get("demo");
let info = null;
let values = {};
let served = {};
let timer = null;
let last = null;
let plotsKey = "";

function fmt(x, unit) {
  if (x === null || x === undefined || !isFinite(x)) return "–";
  if (unit === "share") return (100 * x).toFixed(2) + "%";
  const a = Math.abs(x);
  const d = a >= 100 ? 1 : a >= 10 ? 2 : a >= 1 ? 3 : 4;
  return x.toFixed(d);
}
function unitText(unit) {
  return unit === "share" ? "" : unit === "probability" ? "" : " " + unit;
}

async function getJSON(url) {
  const r = await fetch(url, { cache: "no-store" });
  return r.json();
}
async function post(url, body) {
  const r = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body || {}),
  });
  let j = {};
  try { j = await r.json(); } catch (e) { j = { ok: false, error: "no answer" }; }
  j.status = r.status;
  return j;
}

function buildControls() {
  const box = $("controls");
  box.replaceChildren();
  const groups = { policy: "Policy: " + info.policy, traffic: "Traffic" };
  for (const g of Object.keys(groups)) {
    const list = info.controls.filter((c) => c.group === g);
    if (!list.length) continue;
    const div = document.createElement("div");
    div.className = "group";
    const h = document.createElement("h3");
    h.textContent = groups[g];
    div.append(h);
    for (const c of list) div.append(controlRow(c));
    box.append(div);
  }
}

function controlRow(c) {
  const row = document.createElement("div");
  row.className = "control";
  row.id = "c-" + c.key;
  const label = document.createElement("label");
  label.textContent = c.label;
  label.title = c.key + (c.allowed ? " — " + c.allowed : "");
  const line = document.createElement("div");
  line.className = "row";
  const help = document.createElement("p");
  help.className = "help";
  help.textContent = (c.allowed ? c.allowed + ". " : "") + c.help;
  const err = document.createElement("p");
  err.className = "error";
  err.dataset.key = c.key;
  row.append(label, line, help, err);
  if (c.kind === "choice") {
    const sel = document.createElement("select");
    sel.dataset.key = c.key;
    for (const o of c.options) {
      const opt = document.createElement("option");
      opt.value = o;
      opt.textContent = o;
      sel.append(opt);
    }
    sel.value = c.value;
    sel.addEventListener("change", () => change(c, sel.value));
    line.append(sel);
    return row;
  }
  const range = document.createElement("input");
  range.type = "range";
  range.min = c.slider_min;
  range.max = c.slider_max;
  range.step = c.step;
  range.value = c.value;
  range.dataset.key = c.key;
  range.setAttribute("aria-label", c.label);
  const num = document.createElement("input");
  num.type = "number";
  num.step = "any";
  num.value = c.value;
  num.dataset.key = c.key;
  num.setAttribute("aria-label", c.label + " value");
  const unit = document.createElement("span");
  unit.className = "unit";
  unit.textContent = c.unit;
  range.addEventListener("input", () => { num.value = range.value; change(c, Number(range.value)); });
  num.addEventListener("change", () => {
    const v = Number(num.value);
    if (num.value.trim() === "" || !isFinite(v)) { showErrors({ [c.key]: "must be a number" }); return; }
    range.value = v;
    change(c, v);
  });
  if (c.optional) {
    // Unset in the served scenario: a box sets it, from a first value a
    // quarter of the way along the slider.
    const first = c.slider_min + (c.slider_max - c.slider_min) / 4;
    range.value = first;
    num.value = first;
    const on = document.createElement("input");
    on.type = "checkbox";
    on.dataset.key = c.key;
    on.setAttribute("aria-label", "set " + c.label);
    const onLabel = document.createElement("span");
    onLabel.className = "unit";
    onLabel.textContent = "set";
    const sync = () => { range.disabled = num.disabled = !on.checked; };
    sync();
    on.addEventListener("change", () => {
      sync();
      change(c, on.checked ? Number(num.value) : null);
    });
    line.append(on, onLabel);
  }
  line.append(range, num, unit);
  return row;
}

function change(c, v) {
  values[c.key] = v;
  $("c-" + c.key).classList.toggle("changed", v !== served[c.key]);
  clearTimeout(timer);
  timer = setTimeout(send, 150);
}

async function send() {
  const j = await post("/api/try", { values });
  if (j.ok) {
    showErrors({});
    if (!demo) poll();
  } else {
    showErrors(j.errors || { "": j.error || "refused" });
  }
  return j;
}

function showErrors(errors) {
  for (const e of document.querySelectorAll(".control .error")) e.textContent = errors[e.dataset.key] || "";
  const general = Object.entries(errors).filter(([k]) => !document.getElementById("c-" + k)).map(([k, m]) => (k ? k + ": " : "") + m);
  $("general-error").textContent = general.join(" ");
}

function render(s) {
  last = s;
  const n = s.seeds.length;
  const first = s.first_answer_s === null ? "" : `; first answer after ${s.first_answer_s.toFixed(2)} s`;
  const full = s.full_answer_s === null ? "" : `, whole answer after ${s.full_answer_s.toFixed(2)} s`;
  $("status").textContent = (s.complete ? "done" : "running") +
    `: baseline #${s.baseline.id} ${s.baseline.done}/${n} seeds, current #${s.current.id} ${s.current.done}/${n} seeds${first}${full}` +
    [...s.baseline.failed, ...s.current.failed].map((f) => " — " + f).join("");
  $("setting").textContent = `Baseline #${s.baseline.id}: ${s.baseline.label}. Current #${s.current.id}: ${s.current.label}.`;
  const body = $("results").tBodies[0];
  body.replaceChildren();
  for (const m of s.metrics) {
    const tr = document.createElement("tr");
    tr.dataset.key = m.key;
    const v = m.verdict;
    tr.className = v === "better" ? "better" : v === "worse" ? "worse" : v.includes("noise") ? "noise" : "";
    const ci = (c) => c.low === null ? "" : ` <small>[${fmt(c.low, m.unit)}, ${fmt(c.high, m.unit)}]</small>`;
    const d = m.diff;
    const diff = d ? `${d.mean >= 0 ? "+" : ""}${fmt(d.mean, m.unit)}${ci(d)}` : "–";
    tr.innerHTML = `<td>${NAMES[m.key] || m.key}<small>${unitText(m.unit)}</small></td>` +
      `<td class="num base">${fmt(m.base.mean, m.unit)}${ci(m.base)}</td>` +
      `<td class="num cur">${fmt(m.cur.mean, m.unit)}${ci(m.cur)}</td>` +
      `<td class="num diff">${diff}</td><td class="verdict">${v}</td>`;
    body.append(tr);
  }
  const ps = $("per-seed");
  ps.tHead.innerHTML = "<tr><th>seed</th>" + s.metrics.map((m) => `<th>${NAMES[m.key] || m.key}: baseline / current</th>`).join("") + "</tr>";
  ps.tBodies[0].replaceChildren(...s.per_seed.map((r) => {
    const tr = document.createElement("tr");
    const cell = (side, k, unit) => side && side.metrics ? fmt(side.metrics[k], unit) : side && side.failed ? "failed" : "…";
    tr.innerHTML = `<td>${r.seed}</td>` + s.metrics.map((m) => `<td class="num">${cell(r.base, m.key, m.unit)} / ${cell(r.cur, m.key, m.unit)}</td>`).join("");
    return tr;
  }));
  const key = `${s.generation}-${s.baseline.done}-${s.current.done}-${s.tried.length}`;
  if (key !== plotsKey) {
    plotsKey = key;
    $("cdf").src = "/api/plot/cdf.svg?k=" + key;
    $("plane").src = "/api/plot/plane.svg?k=" + key;
  }
  const rep = s.report || {};
  const btn = $("report");
  if (rep.state === "done" && rep.url && !$("report-link")) {
    const a = document.createElement("a");
    a.id = "report-link";
    a.href = rep.url;
    a.target = "_blank";
    a.textContent = `report of #${rep.setting} (seed ${rep.seed})`;
    notice("Full report ready: ", a);
  } else if (rep.state === "failed") {
    notice("The report failed: " + rep.message);
  }
  btn.disabled = rep.state === "running";
}

function notice(text, link) {
  const n = $("notice");
  n.replaceChildren(text);
  if (link) n.append(link);
}

let polling = false;
async function poll() {
  if (polling) return;
  polling = true;
  try {
    for (;;) {
      const s = await getJSON("/api/state");
      render(s);
      if (s.complete && (!s.report || s.report.state !== "running")) break;
      await new Promise((r) => setTimeout(r, 300));
    }
  } catch (e) {
    $("status").textContent = "the server does not answer: " + e;
  } finally {
    polling = false;
  }
}

$("pin").addEventListener("click", async () => {
  const j = await post("/api/pin");
  notice(j.ok ? `Setting #${j.baseline} is now the baseline.` : j.error);
  if (!demo) poll();
});
$("save").addEventListener("click", async () => {
  const j = await post("/api/save");
  notice(j.ok ? `Saved as ${j.file}, beside the served scenario.` : j.error);
  document.body.dataset.saved = j.file || "";
});
$("report").addEventListener("click", async () => {
  const j = await post("/api/report");
  notice(j.ok ? "Writing the full report…" : j.error);
  if (!demo) poll();
});
function setControl(key, v) {
  if (!(key in values)) return;
  values[key] = v;
  const optional = info.controls.some((c) => c.key === key && c.optional);
  for (const el of document.querySelectorAll(`[data-key="${CSS.escape(key)}"]`)) {
    if (el.tagName === "P") continue;
    if (el.type === "checkbox") el.checked = v !== null;
    else {
      if (v !== null) el.value = v;
      if (optional) el.disabled = v === null;
    }
  }
  $("c-" + key).classList.toggle("changed", v !== served[key]);
}

$("reset").addEventListener("click", () => {
  for (const c of info.controls) setControl(c.key, c.value);
  clearTimeout(timer);
  timer = setTimeout(send, 10);
});

async function runDemo() {
  const eq = demo.indexOf("=");
  const key = demo.slice(0, eq);
  const value = Number(demo.slice(eq + 1));
  const seen = { key, value };
  const range = document.querySelector(`input[type=range][data-key="${CSS.escape(key)}"]`);
  if (!range) { seen.error = "no control " + key; return seen; }
  // As a hand would: the slider moves, its input event fires.
  range.value = value;
  range.dispatchEvent(new Event("input"));
  await new Promise((r) => setTimeout(r, 400));
  const s = await getJSON("/api/state?wait=120");
  render(s);
  seen.complete = s.complete;
  seen.sets = s.current.sets;
  seen.current = s.current.id;
  seen.per_seed = s.per_seed.map((r) => ({ seed: r.seed, cur: r.cur && r.cur.metrics, base: r.base && r.base.metrics }));
  seen.metrics = s.metrics.map((m) => ({ key: m.key, cur: m.cur.mean, base: m.base.mean, diff: m.diff, verdict: m.verdict }));
  seen.shown = [...document.querySelectorAll("#results tbody tr")].map((tr) => ({ key: tr.dataset.key, cur: tr.querySelector(".cur").textContent, verdict: tr.querySelector(".verdict").textContent }));
  seen.first_answer_s = s.first_answer_s;
  seen.full_answer_s = s.full_answer_s;
  if (params.get("pin") !== "0") {
    $("pin").click();
    await new Promise((r) => setTimeout(r, 300));
    const after = await getJSON("/api/state?wait=120");
    render(after);
    seen.pinned = after.baseline.id;
    $("save").click();
    for (let i = 0; i < 50 && !document.body.dataset.saved; i++) await new Promise((r) => setTimeout(r, 100));
    seen.saved = document.body.dataset.saved || null;
  }
  return seen;
}

(async function main() {
  info = await getJSON("/api/controls");
  $("scenario").textContent = info.scenario;
  document.title = "mmsim serve: " + info.scenario;
  const seeds = info.seeds;
  $("about").textContent = `${info.file}: ${info.format}, policy ${info.policy}; every setting runs on seeds ${seeds[0]}..${seeds[seeds.length - 1]} (${seeds.length}), ${info.jobs} at once.`;
  for (const c of info.controls) { values[c.key] = c.value; served[c.key] = c.value; }
  buildControls();
  if (!demo) {
    // A page opened on a running session shows the setting being tried.
    const s = await getJSON("/api/state");
    for (const [k, v] of Object.entries(s.current.values || {})) setControl(k, v);
    poll();
    return;
  }
  render(await getJSON("/api/state?wait=120"));
  let seen;
  try { seen = await runDemo(); } catch (e) { seen = { error: String(e) }; }
  document.title = "DEMO" + JSON.stringify(seen) + "OMED";
})();
