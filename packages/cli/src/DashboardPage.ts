/**
 * The dashboard's page, embedded so the built package carries it (tsc copies no `.html`). It
 * holds no data: it fetches `/api/snapshot` as JSON and renders every value through its `esc`
 * (or `textContent`), so nothing from the store is ever markup or script.
 *
 * @internal
 */

import { waitingText } from "./internal/waiting.ts"

/** The page, `text/html`. */
export const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tickwork · dashboard</title>
<style>
  :root {
    --bg: #0b1020; --panel: #121a2e; --panel-2: #172038; --line: #24304d;
    --text: #e6ebf5; --muted: #8a96b3; --faint: #5b6785;
    --scheduled: #60a5fa; --running: #22d3ee; --paused: #fb923c; --done: #34d399;
    --failed: #f87171; --cancelled: #a3a9bb; --succeeded: #34d399; --timed-out: #fbbf24;
    --defect: #c084fc; --interrupted: #94a3b8; --skipped: #fbbf24; --coalesced: #a78bfa;
    --mono: ui-monospace, "SF Mono", "DejaVu Sans Mono", Menlo, Consolas, monospace;
  }
  * { box-sizing: border-box; }
  html, body { margin: 0; background: var(--bg); color: var(--text); }
  body {
    font: 13px/1.4 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", Roboto, sans-serif;
    background: radial-gradient(1200px 500px at 10% -10%, #1b2a55 0%, transparent 60%),
      radial-gradient(900px 400px at 110% 0%, #2a1b4d 0%, transparent 55%), var(--bg);
    min-height: 100vh;
  }
  header {
    display: flex; align-items: center; gap: 18px; padding: 14px 24px;
    border-bottom: 1px solid var(--line); background: rgba(11, 16, 32, .7);
  }
  .brand { font-weight: 700; font-size: 17px; }
  .brand em { font-style: normal; font-weight: 500; color: var(--muted); font-size: 13px; padding: 2px 8px; border: 1px solid var(--line); border-radius: 999px; margin-left: 8px; }
  .pill { display: inline-flex; align-items: center; gap: 6px; padding: 3px 10px; border-radius: 999px; background: var(--panel-2); border: 1px solid var(--line); color: var(--muted); font-family: var(--mono); font-size: 12px; }
  .grow { flex: 1; }
  .conn { color: var(--muted); display: flex; align-items: center; gap: 8px; }
  .dot { width: 9px; height: 9px; border-radius: 50%; background: var(--failed); }
  .dot.on { background: var(--done); box-shadow: 0 0 0 3px rgba(52,211,153,.18); }
  main { padding: 18px 24px 40px; display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
  section { background: var(--panel); border: 1px solid var(--line); border-radius: 12px; padding: 14px 16px; min-width: 0; }
  section.wide { grid-column: 1 / -1; }
  h2 { margin: 0 0 10px; font-size: 12px; text-transform: uppercase; letter-spacing: .8px; color: var(--muted); font-weight: 600; }
  h2 small { text-transform: none; letter-spacing: 0; color: var(--faint); font-weight: 400; margin-left: 6px; }
  #states { display: grid; grid-template-columns: repeat(6, 1fr); gap: 10px; }
  .state-card { background: var(--panel-2); border: 1px solid var(--line); border-radius: 10px; padding: 10px 12px; border-top: 3px solid var(--c); }
  .state-card .count { font-size: 26px; font-weight: 700; font-variant-numeric: tabular-nums; }
  .state-card .label { color: var(--muted); }
  .note { color: var(--muted); margin-top: 10px; }
  .note b { color: var(--text); }
  .note.warn b { color: var(--paused); }
  table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
  th { text-align: left; color: var(--faint); font-weight: 500; font-size: 11px; text-transform: uppercase; letter-spacing: .6px; padding: 4px 8px; border-bottom: 1px solid var(--line); }
  td { padding: 5px 8px; border-bottom: 1px solid rgba(36, 48, 77, .5); white-space: nowrap; }
  td.mono, .mono { font-family: var(--mono); font-size: 12px; }
  td.err { color: var(--failed); max-width: 260px; overflow: hidden; text-overflow: ellipsis; }
  .badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; color: #0b1020; background: var(--c); font-weight: 600; }
  .reason { color: var(--paused); margin-left: 6px; font-size: 12px; }
  .words { color: var(--muted); font-family: system-ui, sans-serif; font-size: 11px; white-space: normal; }
  .stats { display: flex; gap: 18px; margin-bottom: 10px; }
  .stat .v { font-size: 20px; font-weight: 700; font-variant-numeric: tabular-nums; }
  .stat .k { color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .6px; }
  #hist { width: 100%; height: 120px; }
  #hist rect.bar { fill: var(--scheduled); }
  #hist text { fill: var(--faint); font-size: 10px; font-family: var(--mono); }
  #ledger { list-style: none; margin: 0; padding: 0; max-height: 420px; overflow: auto; font-family: var(--mono); font-size: 12px; }
  #ledger li { display: grid; grid-template-columns: 96px 150px 150px 1fr; gap: 10px; padding: 3px 0; border-bottom: 1px solid rgba(36, 48, 77, .5); }
  #ledger .what { color: var(--c); }
  #ledger button.act { margin-left: 8px; padding: 0 6px; }
  .muted { color: var(--muted); }
  #tasks-wrap { max-height: 520px; overflow: auto; }
  .empty { color: var(--faint); padding: 8px 0; }
  #error { display: none; color: var(--failed); margin-left: 10px; }
  #notice { color: var(--muted); margin-left: 10px; font-family: var(--mono); font-size: 12px; }
  #auth input { background: var(--panel-2); color: var(--text); border: 1px solid var(--line); border-radius: 6px; padding: 3px 8px; font-family: var(--mono); font-size: 12px; width: 220px; }
  td.payload { max-width: 260px; overflow: hidden; text-overflow: ellipsis; color: var(--muted); }
  td.actions { display: flex; gap: 4px; }
  button.act { background: var(--panel-2); color: var(--text); border: 1px solid var(--line); border-radius: 6px; padding: 1px 8px; font-size: 12px; cursor: pointer; }
  button.act:hover { border-color: var(--muted); }
  button.act[data-action="cancel"] { color: var(--failed); }
  .origin { color: var(--faint); }
  #health { --c: var(--muted); }
  #health[data-status="ok"] { --c: var(--done); }
  #health[data-status="degraded"] { --c: var(--paused); }
  #health[data-status="unhealthy"] { --c: var(--failed); }
  #health-reasons { list-style: none; margin: 8px 0 0; padding: 0; }
  #health-reasons li { color: var(--muted); }
  #health-reasons li b { color: var(--c); margin-right: 6px; }
</style>
</head>
<body>
<header>
  <div class="brand">tickwork<em id="mode">dashboard</em></div>
  <span class="pill" id="store">…</span>
  <span class="badge" id="health" title="the fleet's health as the store shows it">…</span>
  <span id="auth"></span>
  <span id="notice"></span>
  <span id="error"></span>
  <span class="grow"></span>
  <span class="conn"><span class="dot" id="dot"></span><span id="conn-text">connecting</span> · <span id="updated" class="mono">-</span></span>
</header>
<main>
  <section class="wide">
    <h2>Tasks by state <small id="total"></small></h2>
    <div id="states"></div>
    <div class="note" id="overdue"></div>
    <ul id="health-reasons"></ul>
  </section>
  <section>
    <h2>Fleet <small>lease owners now, and processes that ran tasks in the last <span id="window">10m</span></small></h2>
    <table id="owners"><thead><tr><th>owner</th><th>running</th><th>lease until</th><th>runs</th><th>last run ended</th></tr></thead><tbody></tbody></table>
  </section>
  <section>
    <h2>Lateness <small>start − due, latest runs</small></h2>
    <div class="stats" id="lateness"></div>
    <svg id="hist" viewBox="0 0 520 120" preserveAspectRatio="none" role="img" aria-label="lateness of the latest runs, by bucket"></svg>
  </section>
  <section class="wide">
    <h2>Tasks <small id="shown"></small></h2>
    <div id="tasks-wrap">
      <table id="tasks"><thead><tr><th>id</th><th>state</th><th>waiting</th><th>handler</th><th>schedule</th><th>due / ended</th><th>attempt</th><th>runs</th><th>lease owner</th><th>lease until</th><th>tags</th><th>payload</th><th>last failure</th><th id="actions-head"></th></tr></thead><tbody></tbody></table>
    </div>
  </section>
  <section class="wide">
    <h2>Recent ledger <small>the store's latest runs and events, newest first</small></h2>
    <ul id="ledger"></ul>
  </section>
</main>
<script>
"use strict"
// Every value from the store reaches the page through esc() (or textContent): ids, handlers,
// tags, payloads and errors are data, never markup. The snapshot is fetched as JSON, never
// inlined in this page, and the server's Content-Security-Policy runs only this script.
const STATES = ["scheduled", "running", "paused", "done", "failed", "cancelled"]
const LIVE = new Set(["scheduled", "running", "paused"])
const TOKEN_KEY = "tickwork-dashboard-token"
// A wait on a limit (SPEC §20.4), worded as the CLI's status words it (the same function).
const waitingText = ${waitingText.toString()}
const $ = (s) => document.querySelector(s)
const esc = (v) => String(v ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c])
const color = (k) => \`var(--\${esc(String(k).replace(/[^a-z-]/g, ""))}, var(--muted))\`
const time = (ms) => (ms === null || ms === undefined ? "-" : new Date(ms).toISOString().slice(11, 23))
const day = (ms) => (ms === null || ms === undefined ? "-" : new Date(ms).toISOString().replace("T", " ").slice(0, 19) + "Z")
const ms = (v) => (v === null || v === undefined ? "-" : \`\${esc(v)} ms\`)
const span = (n) => (n % 60000 === 0 ? \`\${n / 60000}m\` : n % 1000 === 0 ? \`\${n / 1000}s\` : \`\${n}ms\`)
const schedule = (s) =>
  s.kind === "cron" ? \`cron "\${s.expression}" \${s.timeZone}\${s.dayMatch === "either" ? ", either day field" : ""}\` :
  s.kind === "fixed-rate" ? \`every \${span(s.period)}\` :
  s.kind === "fixed-delay" ? \`every \${span(s.period)} after end\` : "once"

// The token: from the address's fragment (never sent to the server, and removed from the
// address bar at once), else from this tab's earlier entry, else typed in.
let token = sessionStorage.getItem(TOKEN_KEY) ?? ""
const fromHash = new URLSearchParams(location.hash.slice(1)).get("token")
if (fromHash) {
  token = fromHash
  sessionStorage.setItem(TOKEN_KEY, token)
  history.replaceState(null, "", location.pathname)
}
const auth = () => (token ? { "x-tickwork-token": token } : {})
let askToken = false
let actions = false

function renderAuth() {
  if (!(askToken || actions)) { $("#auth").replaceChildren(); return }
  if ($("#token")) return
  const input = document.createElement("input")
  input.id = "token"
  input.type = "password"
  input.autocomplete = "off"
  input.placeholder = "dashboard token"
  input.value = token
  input.addEventListener("change", () => {
    token = input.value.trim()
    sessionStorage.setItem(TOKEN_KEY, token)
    tick()
  })
  $("#auth").replaceChildren(input)
}

function renderStates(snap) {
  const counts = snap.stats.tasks
  $("#states").innerHTML = STATES.map((s) =>
    \`<div class="state-card" data-state="\${s}" style="--c:\${color(s)}"><div class="count">\${esc(counts[s])}</div><div class="label">\${s}</div></div>\`).join("")
  $("#total").textContent = \`\${snap.stats.total} tasks in \${snap.store === "sqlite" ? "SQLite" : "PostgreSQL"}\`
  const o = $("#overdue")
  o.className = snap.stats.overdue > 0 ? "note warn" : "note"
  o.dataset.overdue = String(snap.stats.overdue)
  o.innerHTML = snap.stats.overdue > 0
    ? \`<b>\${esc(snap.stats.overdue)}</b> scheduled task(s) already due, the earliest since \${day(snap.stats.oldestDueAt)}\`
    : \`<b>0</b> tasks overdue\`
}

// The fleet's health (the store's view: work due and nothing ending, see tickwork stats): a
// badge with the status, and each reason with its figures.
function renderHealth(snap) {
  const h = snap.stats.health
  const badge = $("#health")
  badge.dataset.status = String(h.status)
  badge.textContent = \`health: \${h.status}\`
  $("#health-reasons").innerHTML = h.reasons.map((r) =>
    \`<li class="health-reason" data-code="\${esc(r.code)}" data-status="\${esc(r.status)}" style="--c:var(--\${r.status === "unhealthy" ? "failed" : "paused"})"><b>\${esc(r.code)}</b><span class="message">\${esc(r.message)}</span></li>\`).join("")
}

function renderOwners(snap) {
  $("#window").textContent = span(snap.stats.window)
  const rows = snap.stats.owners.map((o) =>
    \`<tr class="owner" data-owner="\${esc(o.owner)}" data-running="\${esc(o.running)}" data-completed="\${esc(o.completed)}">
      <td class="mono">\${esc(o.owner)}</td><td>\${esc(o.running)}</td><td class="mono">\${time(o.leaseExpiresAt)}</td>
      <td>\${esc(o.completed)}</td><td class="mono">\${time(o.lastFinishedAt)}</td></tr>\`)
  $("#owners tbody").innerHTML = rows.length > 0 ? rows.join("") : \`<tr><td colspan="5" class="empty">no process holds a lease or ran a task lately</td></tr>\`
}

function renderLateness(snap) {
  const l = snap.stats.lateness
  $("#lateness").innerHTML = [["runs", l.runs, String(l.runs)], ["p50", l.p50, ms(l.p50)], ["p90", l.p90, ms(l.p90)], ["p99", l.p99, ms(l.p99)], ["max", l.max, ms(l.max)]]
    .map(([k, v, text]) => \`<div class="stat" data-stat="\${k}" data-value="\${esc(v)}"><div class="v">\${esc(text)}</div><div class="k">\${k}</div></div>\`).join("")
  // A histogram of the recent runs' lateness, in ms buckets.
  // A manual run (late: null) counts no lateness (SPEC §19.1).
  const late = snap.recent.filter((o) => o.kind === "ran" && o.late !== null).map((o) => o.late)
  const edges = [1, 5, 10, 25, 50, 100, 250, 500, 1000, Infinity]
  const counts = edges.map(() => 0)
  for (const v of late) counts[edges.findIndex((e) => v < e)]++
  const max = Math.max(1, ...counts)
  const w = 520 / edges.length
  $("#hist").innerHTML = counts.map((c, i) => {
    const h = Math.round((c / max) * 90)
    const label = edges[i] === Infinity ? "≥1s" : \`<\${edges[i]}\`
    return \`<rect class="bar" data-count="\${c}" x="\${i * w + 4}" y="\${100 - h}" width="\${w - 8}" height="\${h}" rx="3"></rect>
      <text x="\${i * w + w / 2}" y="114" text-anchor="middle">\${esc(label)}</text>\`
  }).join("")
}

/** The controls that apply to a task in its state (the server decides; these only offer). */
const controls = (t) => {
  const out = []
  if ((t.state === "scheduled" || t.state === "running") && t.pausedReason === null) out.push("pause")
  if (t.state === "paused" || (t.state === "running" && t.pausedReason !== null)) out.push("resume")
  // SPEC §19.1: a scheduled task runs once now (refused, and said so, when one already waits).
  if (t.state === "scheduled") out.push("trigger")
  if (t.state === "failed") out.push("retry")
  if (LIVE.has(t.state)) out.push("cancel")
  return out
}

let shownTasks = ""
function renderTasks(snap) {
  const page = snap.tasks
  $("#shown").textContent = page.total > page.tasks.length ? \`\${page.tasks.length} of \${page.total} shown\` : \`\${page.total}\`
  $("#actions-head").textContent = actions ? "actions" : ""
  const html = page.tasks.map((t) =>
    \`<tr class="task" data-task="\${esc(t.id)}" data-state="\${esc(t.state)}" data-reason="\${esc(t.pausedReason ?? "")}" data-owner="\${esc(t.leaseOwner ?? "")}">
      <td class="mono id">\${esc(t.id)}</td>
      <td><span class="badge" style="--c:\${color(t.state)}">\${esc(t.state)}</span>\${t.pausedReason ? \`<span class="reason">\${esc(t.pausedReason)}</span>\` : ""}</td>
      <td class="mono waiting">\${esc(waitingText(t.waiting) ?? "")}</td>
      <td class="mono handler">\${esc(t.handler)}</td><td class="mono schedule">\${esc(schedule(t.schedule))}\${t.scheduleWords ? \`<div class="words">\${esc(t.scheduleWords)}</div>\` : ""}</td>
      <td class="mono">\${LIVE.has(t.state) ? day(t.scheduledFor) : day(t.finishedAt)}</td>
      <td>\${esc(t.attempt)}</td><td>\${esc(t.runNumber)}</td>
      <td class="mono owner-cell">\${esc(t.leaseOwner ?? "-")}</td><td class="mono">\${time(t.leaseExpiresAt)}</td>
      <td class="mono tags">\${esc(t.tags.join(", "))}</td>
      <td class="mono payload" title="\${esc(JSON.stringify(t.payload))}">\${esc(JSON.stringify(t.payload))}</td>
      <td class="err" title="\${esc(t.lastError ?? "")}">\${esc(t.lastError ?? "")}</td>
      <td class="actions">\${actions ? controls(t).map((a) => \`<button class="act" type="button" data-action="\${a}" data-task="\${esc(t.id)}">\${a}</button>\`).join("") : ""}</td></tr>\`).join("")
  // Rendered again only when something changed: a button is not replaced under the pointer.
  if (html !== shownTasks) {
    shownTasks = html
    $("#tasks tbody").innerHTML = html
  }
}

// SPEC §19.7: the latest run of a slot of a scheduled recurring task that failed offers a retry
// of that slot (the server decides, and says why when it refuses).
const slotRetries = (snap) => {
  const recurring = new Set(snap.tasks.tasks.filter((t) => t.state === "scheduled" && t.schedule.kind !== "once").map((t) => t.id))
  const seen = new Set()
  const offered = new Set()
  for (const o of snap.recent) {
    if (o.kind !== "ran") continue
    const key = JSON.stringify([o.taskId, o.slot])
    if (seen.has(key)) continue
    seen.add(key)
    if (o.outcome !== "succeeded" && recurring.has(o.taskId)) offered.add(o)
  }
  return offered
}

let shownLedger = ""
function renderLedger(snap) {
  const offered = actions ? slotRetries(snap) : new Set()
  const html = snap.recent.length === 0 ? \`<li class="empty">nothing recorded yet</li>\` : snap.recent.map((o) => {
    if (o.kind === "ran") {
      const retry = offered.has(o) ? \` <button class="act" type="button" data-action="retry" data-task="\${esc(o.taskId)}" data-slot="\${esc(o.slot)}" title="retry slot \${esc(day(o.slot))}">retry slot</button>\` : ""
      return \`<li data-kind="ran" data-task="\${esc(o.taskId)}" data-outcome="\${esc(o.outcome)}" data-slot="\${esc(o.slot)}">
        <span class="muted">\${time(o.finishedAt)}</span><span>\${esc(o.taskId)}</span>
        <span class="what" style="--c:\${color(o.outcome)}">ran: \${esc(o.outcome)}</span>
        <span class="muted">attempt \${esc(o.attempt)} · \${o.late === null ? "manual" : \`late \${esc(o.late)} ms\`} · \${esc(o.owner)}\${o.error ? \` · \${esc(o.error)}\` : ""}\${typeof o.result === "string" ? \` · <span class="result">result \${esc(o.result)}</span>\` : o.resultError ? \` · <span class="result">result not kept: \${esc(o.resultError)}</span>\` : ""}\${retry}</span></li>\`
    }
    return \`<li data-kind="\${esc(o.kind)}" data-task="\${esc(o.taskId)}" data-cause="\${esc(o.cause ?? "")}" data-origin="\${esc(o.origin ?? "")}">
      <span class="muted">\${time(o.at)}</span><span>\${esc(o.taskId)}</span>
      <span class="what" style="--c:\${color(o.kind === "paused" ? "paused" : o.kind === "cancelled" ? "cancelled" : o.kind === "resumed" ? "scheduled" : o.kind)}">\${esc(o.kind)}\${o.count > 1 ? \` ×\${esc(o.count)}\` : ""}\${o.origin ? \` <span class="origin">by \${esc(o.origin)}</span>\` : ""}</span>
      <span class="muted">\${[o.cause, o.detail, o.owner].filter(Boolean).map(esc).join(" · ")}</span></li>\`
  }).join("")
  // Rendered again only when something changed: a button is not replaced under the pointer.
  if (html !== shownLedger) {
    shownLedger = html
    $("#ledger").innerHTML = html
  }
}

// A control; \`slot\` (epoch ms) names the failed slot a retry is for (SPEC §19.7). A retry or
// trigger that changed nothing shows the server's reason (core's sentence).
async function act(action, id, slot) {
  const notice = $("#notice")
  const what = slot === undefined ? action : \`\${action} slot \${day(slot)}\`
  try {
    const response = await fetch(\`/api/\${action}\`, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth() },
      body: JSON.stringify(slot === undefined ? { id } : { id, slot }),
    })
    const body = await response.json()
    if (!response.ok) throw new Error(body.error ?? \`HTTP \${response.status}\`)
    if (body.changed) {
      notice.textContent = \`\${what}: \${id} is now \${body.state}\`
      notice.dataset.result = "changed"
    } else if (typeof body.refused === "string") {
      notice.textContent = \`\${what}: \${body.refused}\`
      notice.dataset.result = "refused"
    } else {
      notice.textContent = \`\${what}: \${id} unchanged (\${body.state})\`
      notice.dataset.result = "unchanged"
    }
  } catch (error) {
    notice.textContent = \`\${what} \${id}: \${String(error.message ?? error)}\`
    notice.dataset.result = "refused"
  }
  tick()
}

const onAction = (event) => {
  const button = event.target.closest("button.act")
  if (button) act(button.dataset.action, button.dataset.task, button.dataset.slot === undefined ? undefined : Number(button.dataset.slot))
}
$("#tasks tbody").addEventListener("click", onAction)
$("#ledger").addEventListener("click", onAction)

let timer
async function tick() {
  clearTimeout(timer)
  try {
    const response = await fetch("/api/snapshot", { cache: "no-store", headers: auth() })
    const snap = await response.json()
    if (response.status === 401) askToken = true
    renderAuth()
    if (!response.ok) throw new Error(snap.error ?? \`HTTP \${response.status}\`)
    actions = snap.actions === true
    renderAuth()
    $("#mode").textContent = actions ? "dashboard · actions enabled" : "dashboard · read-only"
    $("#store").textContent = \`\${snap.store} · \${snap.target}\`
    $("#store").dataset.store = snap.store
    renderStates(snap); renderHealth(snap); renderOwners(snap); renderLateness(snap); renderTasks(snap); renderLedger(snap)
    $("#dot").className = "dot on"
    $("#conn-text").textContent = "live"
    $("#updated").textContent = time(snap.at)
    $("#error").style.display = "none"
    document.body.dataset.updates = String(Number(document.body.dataset.updates ?? 0) + 1)
  } catch (error) {
    $("#dot").className = "dot"
    $("#conn-text").textContent = "store unavailable"
    $("#error").textContent = String(error.message ?? error)
    $("#error").style.display = "inline"
  } finally {
    timer = setTimeout(tick, 1000)
  }
}
tick()
</script>
</body>
</html>
`
