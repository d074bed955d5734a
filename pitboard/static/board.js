// The pit board: draws /feed (the whole floor as JSON, at every change) as one tile per table, and a
// table's recall and alerts (/tables/ID) when its tile is clicked. Nothing here computes a game: the
// server sends the phase, the amounts as text and the big road's cells (signage/roads.py's).
"use strict";
const $ = id => document.getElementById(id);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
const SVG = "http://www.w3.org/2000/svg";
const COLOURS = {red: "#d7263d", blue: "#1b6fe0", green: "#1f9d55"};
const PHASES = {idle: "waiting", betting: "betting open", dealing: "dealing", deciding: "decisions",
  settled: "settled", voided: "voided"};
let board = {tables: []};
let opened = null;       // the table whose detail is shown
let openedKey = "";      // what the detail was drawn from (its alerts and round): redrawn when they change
let openAlerts = null;   // the open alerts drawn in the table's panel (as JSON)
let asked = 0;           // the newest detail asked for: an older answer arriving after it is dropped

function road(cells) {
  // A miniature big road: hollow circles in the winner's colour, a green stroke for ties.
  const cols = 14, size = 10;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${cols * size} ${6 * size}`);
  svg.classList.add("road");
  for (const c of cells) {
    const g = document.createElementNS(SVG, "g");
    g.dataset.cell = "";
    g.dataset.row = c.row; g.dataset.col = c.col; g.dataset.colour = c.colour; g.dataset.ties = c.ties;
    const x = c.col * size + size / 2, y = c.row * size + size / 2;
    const circle = document.createElementNS(SVG, "circle");
    Object.entries({cx: x, cy: y, r: size * .38, fill: "none", stroke: COLOURS[c.colour], "stroke-width": 1.6})
      .forEach(([k, v]) => circle.setAttribute(k, v));
    g.append(circle);
    if (c.ties) {
      const line = document.createElementNS(SVG, "line");
      Object.entries({x1: x - 3, y1: y + 3, x2: x + 3, y2: y - 3, stroke: COLOURS.green, "stroke-width": 1.4})
        .forEach(([k, v]) => line.setAttribute(k, v));
      g.append(line);
    }
    svg.append(g);
  }
  return svg;
}

function fact(value, label) {
  const f = el("div", "fact");
  f.append(el("b", "", value), el("span", "", label));
  return f;
}

const sections = new Map();  // table -> its tile's element, kept across redraws so a click is never lost

function tile(t) {
  let d = sections.get(t.table);
  if (!d) {
    d = el("section");
    d.addEventListener("click", () => openTable(t.table));
    sections.set(t.table, d);
  }
  const heard = t.silent === null ? "never" : `${t.silent} s ago`;
  const key = JSON.stringify({...t, silent: null});
  if (d.dataset.key === key) {  // only the time since it was heard moves: that text alone, no redraw
    d.querySelector(".heard b").textContent = heard;
    return d;
  }
  d.dataset.key = key;
  d.className = "tile panel " + t.states.join(" ");
  d.dataset.table = t.table;
  d.dataset.round = t.round ?? "";
  d.dataset.lastRow = t.last_row;
  d.dataset.states = t.states.join(" ");
  d.dataset.alerts = t.alerts.map(a => a.alert).join(" ");
  const head = el("div", "tile-head");
  head.append(el("div", "tile-name", t.table), el("div", "tile-game", t.game));
  const phase = el("div", "tile-phase",
    (t.round === null ? "no round yet" : `round ${t.round}: ${PHASES[t.phase] ?? t.phase}`));
  const money = t.currency ? ` ${t.currency}` : "";
  const facts = el("div", "facts");
  // Rounds played today under other decimals (a limits change): each sum apart, in its own decimals,
  // never added to the newest one's.
  // Rounds of another currency today (a journal of another code): its sum in its own code.
  const earlier = t.house_today_earlier.map(e => {
    const label = e.currency !== t.currency ? `earlier, ${e.currency || "no currency"}`
      : `earlier, ${e.minor_units} decimal${e.minor_units === 1 ? "" : "s"}`;
    const f = fact(e.text + (e.currency ? ` ${e.currency}` : ""), label);
    f.classList.add("house-earlier");
    return f;
  });
  facts.append(fact(String(t.rounds_per_hour), "rounds last hour"), fact(String(t.seats.length), "seats occupied"),
    fact(t.in_play_text + money, "wagers in play"), fact(t.house_today_text + money, "house today"), ...earlier,
    fact(t.behind ? `${t.behind} rows` : "none", "uplink behind"),
    fact(heard, "last heard"));
  facts.lastElementChild.classList.add("heard");
  const badges = el("div", "badges");
  if (t.states.includes("stale")) badges.append(el("span", "badge stale", "STALE FEED"));
  if (t.tilt) badges.append(el("span", "badge tilt", `TILT ${t.tilt.reason ?? ""}`));
  for (const [device, why] of Object.entries(t.offline)) {
    const b = el("span", "badge offline", `${device} OFFLINE`);
    b.title = why;  // (append returns nothing: set on the element itself)
    badges.append(b);
  }
  for (const a of t.alerts) {
    const b = el("span", `badge ${a.severity} ${a.state}`, `${a.kind}${a.state === "acknowledged" ? " ✓" : ""}`);
    b.dataset.alert = a.alert;
    b.dataset.kind = a.kind;
    b.dataset.key = a.key;
    b.title = a.detail;
    badges.append(b);
  }
  const results = el("div", "results");
  if (t.game === "baccarat") results.append(road(t.road));
  else {
    const nets = el("div", "nets");
    nets.append(el("b", "", "house, last rounds:"));
    t.nets.forEach(n => nets.append(el("span", "", n)));
    results.append(nets);
  }
  d.replaceChildren(head, phase, facts, badges, results);
  return d;
}

function draw() {
  const shown = new Set(board.tables.map(t => t.table));
  for (const [table, d] of sections) if (!shown.has(table)) { d.remove(); sections.delete(table); }
  const tiles = $("tiles");
  board.tables.forEach((t, i) => {  // in order, moving an element only when it is out of place
    const d = tile(t);
    if (tiles.children[i] !== d) tiles.insertBefore(d, tiles.children[i] ?? null);
  });
  const troubled = board.tables.filter(t => t.states.length || t.alerts.length).length;
  const n = board.tables.length;
  $("summary").textContent = `${n} table${n === 1 ? "" : "s"} · ${troubled} need${troubled === 1 ? "s" : ""} a look`;
  document.body.dataset.tables = board.tables.length;
  if (opened) {
    const t = board.tables.find(x => x.table === opened);
    drawOpen(t ? t.alerts : []);
    const key = t ? JSON.stringify([t.alerts, t.round]) : "";
    if (key !== openedKey) loadDetail(opened);
  }
}

function drawOpen(alerts) {
  // The opened table's open alerts, from the feed (pushed the moment the alert service publishes one),
  // redrawn only when they change so an Acknowledge button is never replaced under a click.
  const key = JSON.stringify(alerts);
  if (key === openAlerts) return;
  openAlerts = key;
  const open = $("open-alerts");
  open.replaceChildren(...alerts.map(a => {
    const li = el("li");
    li.dataset.alert = a.alert;
    li.dataset.state = a.state;
    li.dataset.kind = a.kind;
    li.dataset.key = a.key;
    li.append(el("span", `badge ${a.severity}`, a.kind), el("span", "what",
      `${a.detail} · raised ${a.raised_at}` + (a.acked_by ? ` · acknowledged by ${a.acked_by} ${a.acked_at}` : "")));
    if (!a.acked_by) {
      const b = el("button", "ack", "Acknowledge");
      b.type = "button";
      b.addEventListener("click", () => acknowledge(a.alert));
      li.append(b);
    }
    return li;
  }));
  if (!alerts.length) open.append(el("li", "", "none"));
}

async function loadDetail(table) {
  const t = board.tables.find(x => x.table === table);
  openedKey = t ? JSON.stringify([t.alerts, t.round]) : "";
  const mine = ++asked;
  const reply = await fetch(`/tables/${encodeURIComponent(table)}`);
  if (!reply.ok || opened !== table || mine !== asked) return;
  const d = await reply.json();
  if (mine !== asked) return;  // an alert raised and cleared at once: the clear's answer, never the raise's
  $("detail-title").textContent = `${d.table} · ${d.game}`;
  $("recent-alerts").replaceChildren(...d.recent.map(a => el("li", "",
    `${a.raised_at} ${a.kind} ${a.state}${a.acked_by ? " (" + a.acked_by + ")" : ""}: ${a.detail}`)));
  $("recall").replaceChildren(...d.rounds.map(r => {
    const pre = el("pre", "", r.lines.join("\n"));
    pre.dataset.round = r.record.round;
    return pre;
  }));
  document.body.dataset.detail = table;
}

function openTable(table) {
  opened = table;
  $("ack-error").textContent = "";
  $("detail").hidden = false;
  openAlerts = openedKey = null;  // both drawn afresh for this table
  draw();
}

async function acknowledge(alert) {
  const token = $("token").value.trim();
  sessionStorage.setItem("pitboard-token", token);
  const reply = await fetch(`/alerts/${alert}/ack`, {method: "POST", headers: {Authorization: `Bearer ${token}`}});
  $("ack-error").textContent = reply.ok ? "" : `${reply.status}: ${await reply.text()}`;
  if (opened) loadDetail(opened);
}

$("detail-close").addEventListener("click", () => {
  opened = null;
  $("detail").hidden = true;
  delete document.body.dataset.detail;
});
$("token").value = sessionStorage.getItem("pitboard-token") ?? "";

const source = new EventSource("/feed");
source.onmessage = m => {
  board = JSON.parse(m.data);
  $("connection").textContent = "live";
  $("connection").className = "";
  draw();
  document.body.dataset.version = +document.body.dataset.version + 1;
};
source.onerror = () => {
  $("connection").textContent = "connection lost: reconnecting";
  $("connection").className = "lost";
};
