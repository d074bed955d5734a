// The signage page: draws the screen JSON that `croupier display` streams (docs/display.md).
// Everything is computed by the display process (roads included); this file only draws it.
"use strict";

const SUITS = {S: "♠", H: "♥", D: "♦", C: "♣"};
const COLOURS = {red: "#d7263d", blue: "#1b6fe0", green: "#1f9d55"};
// Every road holds the whole shoe: its grid is at least this many columns, more when the shoe is longer.
// Cells are sized to the panel (CSS); a road longer than its panel is wide scrolls so the newest shows.
const MIN_COLUMNS = 60;
const ROWS = 6;
// Banker Ask and Player Ask take turns showing their would-be marks (each half of this period, in ms).
const ASK_PERIOD = 6000;

let W = WORDS.en;
let forcedLayout = null;
let seenCards = new Set();
let lastView = null;  // redrawn when the screen changes shape
window.__seen = {};  // seq -> time drawn (ms since the epoch), read by the latency benchmark

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c != null) node.append(c);
  return node;
}

function cardNode(code, key) {
  const fresh = key && !seenCards.has(key);
  if (key) seenCards.add(key);
  if (code === "??") return el("div", {class: "card back" + (fresh ? " new" : ""), "data-card": "??"});
  const rank = code[0] === "T" ? "10" : code[0];
  const suit = code[1];
  const red = suit === "H" || suit === "D";
  return el("div", {class: "card" + (red ? " red" : "") + (fresh ? " new" : ""), "data-card": code},
    el("span", {class: "rank", text: rank}), el("span", {class: "suit", text: SUITS[suit] || suit}));
}

function handLabel(name, view) {
  if (name === "player" || name === "banker" || name === "dealer") return W[name];
  if (name === "dp") return W.dp + (view.dp_seat ? ` (${W.seat} ${view.dp_seat})` : "");
  const m = name.match(/^seat (\d+)(?: hand (\d+))?(.*)$/);
  if (m) return `${W.seat} ${m[1]}${m[2] ? " · " + m[2] : ""}${m[3] ? " " + m[3] : ""}`;
  const war = name.match(/^dp war seat (\d+)$/);
  if (war) return `${W.dp} · ${W.war} ${W.seat} ${war[1]}`;
  return name;
}

// ------------------------------------------------------------------ baccarat
function baccaratHand(view) {
  const box = el("div", {class: "bac-hand"});
  const result = view.phase !== "dealing" && view.result && view.result.round === view.hands_round ? view.result : null;
  for (const side of ["player", "banker"]) {
    const hand = view.hands.find(h => h.name === side) || {cards: [], score: null};
    const won = result && result.winner === side;
    const cards = el("div", {class: "cards"}, ...hand.cards.map((c, i) => cardNode(c, `${view.round}/${side}/${i}`)));
    const score = el("div", {class: "score", "data-score": side, text: hand.cards.length ? String(hand.score) : ""});
    const marks = el("div", {class: "marks"});
    if (result && result[side + "_pair"]) marks.append(el("span", {class: "mark", text: W.pair}));
    box.append(el("div", {class: `side ${side}` + (won ? " won" : ""), "data-hand": side},
      el("div", {class: "label", text: W[side]}), score, cards, marks));
  }
  if (result) {
    const text = result.winner === "tie" ? W.tie : `${W[result.winner]} ${W.wins}`;
    box.append(el("div", {class: `verdict ${result.winner}`, "data-winner": result.winner},
      text + (result.natural ? ` · ${W.natural}` : "")));
  } else if (view.voided && view.phase !== "dealing") {
    box.append(el("div", {class: "verdict void", text: W.voided}));
  }
  return box;
}

function baccaratStats(view) {
  const c = view.roads.counts;
  const pct = n => c.rounds ? `${Math.round(100 * n / c.rounds)}%` : "–";
  const row = (cls, label, n) => el("div", {class: `stat ${cls}`, "data-count": cls},
    el("span", {class: "dot"}), el("span", {class: "name", text: label}),
    el("span", {class: "n", text: String(n)}), el("span", {class: "pct", text: pct(n)}));
  const ask = el("div", {class: "ask"});
  for (const w of ["banker", "player"]) {
    const marks = view.roads.ask[w];
    const line = el("div", {class: `ask-line ${w}`, "data-ask": w, style: askTurn(w)}, el("span", {class: "ask-name", text: W[w + "_ask"]}));
    for (const [road, kind] of [["big_eye_boy", "ring"], ["small_road", "dot"], ["cockroach_pig", "slash"]]) {
      line.append(askMark(marks[road], kind, road));
    }
    ask.append(line);
  }
  const s = view.shoe_stats || {natural: 0, earlier_shoes: []};
  const game = c.rounds + (view.phase === "idle" ? 0 : 1);  // the round being played counts once it opens
  const shoe = s.shoe_number ? `${W.shoe_no} ${s.shoe_number}` : W.shoe;  // 0: rounds before any new shoe
  const box = el("div", {class: "bac-stats"},
    el("div", {class: "stat-title", "data-game-in-shoe": game, "data-shoe-number": s.shoe_number},
      `${shoe} · ${W.game} ${game} · `, el("span", {class: "naturals", "data-count": "natural", text: `${W.naturals} ${s.natural}`})),
    row("banker", W.banker, c.banker), row("player", W.player, c.player), row("tie", W.tie, c.tie),
    el("div", {class: "stat pairs"}, el("span", {class: "name", text: W.pairs}),
      el("span", {class: "pair banker", "data-count": "banker_pair", text: `${W.letters.banker} ${c.banker_pair}`}),
      el("span", {class: "pair player", "data-count": "player_pair", text: `${W.letters.player} ${c.player_pair}`})),
    ask);
  const pays = (view.display || {}).payouts;
  if (pays) box.append(el("div", {class: "payouts", "data-payouts": ""},
    `${W.pays}: ${W.player} ${pays.player} · ${W.banker} ${pays.banker}${commission(pays.banker)} · ${W.tie} ${pays.tie}`));
  for (const [i, e] of s.earlier_shoes.entries()) {
    box.append(el("div", {class: "earlier", "data-earlier": i},
      `${i ? "" : W.earlier + ": "}${e.shoe ? `${W.shoe_no} ${e.shoe}: ` : ""}${W.letters.banker} ${e.banker} · ${W.letters.player} ${e.player} · ${W.letters.tie} ${e.tie}`
      + ` · ${W.naturals} ${e.natural}`));
  }
  return box;
}

// "19:20" pays 0.95 to 1: a 5 % commission, said in words as players know it.
function commission(odds) {
  const [num, den] = odds.split(":").map(Number);
  const pct = Math.round(100 * (1 - num / den));
  return num < den && pct > 0 ? ` (${pct}% ${W.commission})` : "";
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

function askMark(colour, kind, road) {
  const s = svg("svg", {viewBox: "0 0 10 10", class: "askmark", "data-road": road, "data-colour": colour || ""});
  if (colour) drawMark(s, kind, 5, 5, 4, colour);
  return s;
}

function drawMark(parent, kind, cx, cy, r, colour) {
  const c = COLOURS[colour];
  if (kind === "ring") parent.append(svg("circle", {cx, cy, r: r * 0.8, fill: "none", stroke: c, "stroke-width": r * 0.35}));
  else if (kind === "dot") parent.append(svg("circle", {cx, cy, r: r * 0.8, fill: c}));
  else if (kind === "slash") parent.append(svg("line", {x1: cx - r * 0.7, y1: cy + r * 0.7, x2: cx + r * 0.7,
    y2: cy - r * 0.7, stroke: c, "stroke-width": r * 0.4, "stroke-linecap": "round"}));
  else if (kind === "bead") parent.append(svg("circle", {cx, cy, r: r * 0.88, fill: c}));
}

// Where Banker Ask and Player Ask are in their turns now: every render keeps the one clock.
function askTurn(winner) {
  const now = performance.now() + (winner === "player" ? ASK_PERIOD / 2 : 0);
  return `animation-duration: ${ASK_PERIOD}ms; animation-delay: ${-(now % ASK_PERIOD)}ms`;
}

function road(name, cells, kind, preview) {
  const maxCol = cells.reduce((m, c) => Math.max(m, c.col), -1);
  const columns = Math.max(MIN_COLUMNS, maxCol + 2);  // one empty column after the newest
  const s = svg("svg", {class: `road ${name}`, "data-road": name, "data-newest": maxCol,
    viewBox: `0 0 ${columns * 10} ${ROWS * 10}`, preserveAspectRatio: "xMinYMin meet",
    style: `aspect-ratio: ${columns} / ${ROWS}`});
  s.append(svg("rect", {x: 0, y: 0, width: columns * 10, height: ROWS * 10, fill: "url(#road-grid)"}));
  for (const c of cells) {
    const g = svg("g", {"data-cell": "", "data-row": c.row, "data-col": c.col, "data-streak": c.streak ?? "",
      "data-colour": c.colour,
      "data-ties": c.ties, "data-banker-pair": c.banker_pair, "data-player-pair": c.player_pair});
    const cx = c.col * 10 + 5, cy = c.row * 10 + 5;
    drawMark(g, kind, cx, cy, 4.4, c.colour);
    if (kind === "bead") {
      const letter = {red: W.letters.banker, blue: W.letters.player, green: W.letters.tie}[c.colour];
      const t = svg("text", {x: cx, y: cy + 2.4, class: "bead-letter"});
      t.textContent = letter;
      g.append(t);
    }
    if (c.ties) {
      g.append(svg("line", {x1: cx - 3.6, y1: cy + 3.6, x2: cx + 3.6, y2: cy - 3.6, stroke: COLOURS.green,
        "stroke-width": 1.3}));
      if (c.ties > 1) {
        const t = svg("text", {x: cx, y: cy + 1.8, class: "tie-count"});
        t.textContent = String(c.ties);
        g.append(t);
      }
    }
    const dot = {r: 1.7, stroke: "#fff", "stroke-width": 0.4, class: "pair-dot"};
    if (c.banker_pair) g.append(svg("circle", {cx: cx - 3.1, cy: cy - 3.1, fill: COLOURS.red, ...dot}));
    if (c.player_pair) g.append(svg("circle", {cx: cx + 3.1, cy: cy + 3.1, fill: COLOURS.blue, ...dot}));
    s.append(g);
  }
  const newest = s.lastElementChild;  // cells come in the order they were added: the last is the newest
  if (cells.length) {
    newest.classList.add("newest");
    const c = cells[cells.length - 1];
    newest.prepend(svg("rect", {x: c.col * 10 + 0.6, y: c.row * 10 + 0.6, width: 8.8, height: 8.8, rx: 1.5,
      class: "newest-frame"}));
  }
  for (const w of ["banker", "player"]) {  // the would-be marks: not [data-cell], the road stays croupier roads
    const p = preview && preview[w][name];
    if (!p) continue;
    const g = svg("g", {class: `preview ${w}`, "data-preview": w, "data-row": p.row, "data-col": p.col,
      "data-colour": p.colour, style: askTurn(w)});
    g.append(svg("rect", {x: p.col * 10 + 0.6, y: p.row * 10 + 0.6, width: 8.8, height: 8.8, rx: 1.5,
      class: "preview-frame"}));
    drawMark(g, kind, p.col * 10 + 5, p.row * 10 + 5, 4.4, p.colour);
    s.append(g);
  }
  return el("figure", {class: `roadbox ${name}`}, el("figcaption", {text: W[name]}), el("div", {class: "roadscroll"}, s));
}

// After layout: a road longer than its panel is scrolled to its newest column (older ones off to the left).
function scrollRoads() {
  for (const box of document.querySelectorAll(".roadscroll")) {
    const road = box.firstElementChild;
    const cell = box.clientHeight / ROWS;  // whole columns off to the left, so the first shown is whole
    box.scrollLeft = Math.ceil(Math.max(0, (+road.dataset.newest + 2) * cell - box.clientWidth) / cell) * cell;
  }
}

function baccaratBoard(view) {
  const r = view.roads, p = view.road_preview;
  return el("div", {class: "scoreboard"},
    road("big_road", r.big_road, "ring", p),
    road("bead_plate", r.bead_plate, "bead", null),
    road("big_eye_boy", r.big_eye_boy, "ring", p),
    road("small_road", r.small_road, "dot", p),
    road("cockroach_pig", r.cockroach_pig, "slash", p));
}

function baccaratHistory(view) {
  const strip = el("div", {class: "strip"}, el("span", {class: "strip-title", text: W.last}));
  for (const h of view.history.slice().reverse()) {
    strip.append(el("div", {class: `past ${h.winner}`, "data-round": h.round},
      el("span", {class: "past-w", text: W.letters[h.winner] || ""}),
      el("span", {class: "past-s", text: `${W.letters.player}${h.player_score} ${W.letters.banker}${h.banker_score}`})));
  }
  return strip;
}

// ------------------------------------------------------------ seat games
function outcomeWord(net) {
  if (net > 0) return ["win", W.win];
  if (net < 0) return ["lose", W.lose];
  return ["push", W.push];
}

function seatGameHand(view) {
  const box = el("div", {class: "seat-game"});
  const hands = view.hands;
  const dealerNames = view.game === "one_card_poker" ? ["dp"] : ["dealer"];
  const top = el("div", {class: "dealer-row"});
  for (const h of hands.filter(h => dealerNames.includes(h.name) || h.name.startsWith("dp war"))) {
    top.append(el("div", {class: "hand dealer", "data-hand": h.name}, el("div", {class: "label", text: handLabel(h.name, view)}),
      el("div", {class: "cards"}, ...h.cards.map((c, i) => cardNode(c, `${view.round}/${h.name}/${i}/${c}`)))));
  }
  if (view.game === "one_card_poker" && !top.childNodes.length && view.dp_seat) {
    top.append(el("div", {class: "hand dealer", "data-hand": "dp"}, el("div", {class: "label", text: handLabel("dp", view)})));
  }
  const total = view.result && view.result.round === view.hands_round
    ? (view.result.dealer_total ?? view.result.dealer_bj_total) : null;
  if (total != null && view.game !== "one_card_poker") top.append(el("div", {class: "total", text: String(total)}));
  box.append(top);
  const seats = el("div", {class: "seats"});
  const bySeat = new Map();
  for (const h of hands) {
    const m = h.name.match(/^seat (\d+)/);
    if (!m) continue;
    if (!bySeat.has(m[1])) bySeat.set(m[1], []);
    bySeat.get(m[1]).push(h);
  }
  if (view.game === "one_card_poker" && view.dp_seat && !bySeat.has(String(view.dp_seat))) bySeat.set(String(view.dp_seat), []);
  for (const seat of [...bySeat.keys()].sort((a, b) => a - b)) {
    const isDp = view.game === "one_card_poker" && String(view.dp_seat) === seat;
    const node = el("div", {class: "seat" + (isDp ? " dp" : ""), "data-seat": seat},
      el("div", {class: "label", text: `${W.seat} ${seat}`}));
    if (isDp) node.append(el("div", {class: "dp-badge", "data-dp": seat, text: W.dp}));
    const own = bySeat.get(seat);
    for (const h of own) {
      const sub = h.name.replace(/^seat \d+ ?/, "");
      // A hand's own outcome only when the seat has several: with one hand the seat's badge says it.
      const outcome = h.outcome && own.length > 1 ? (W[h.outcome] || h.outcome) : "";
      node.append(el("div", {class: "cards", "data-hand": h.name},
        ...h.cards.map((c, i) => cardNode(c, `${view.round}/${h.name}/${i}/${c}`)),
        h.total != null || sub ? el("div", {class: "hand-info", "data-hand-outcome": h.outcome || ""},
          [sub, h.total != null ? String(h.total) : "", outcome].filter(Boolean).join(" · ")) : null));
    }
    if (view.phase !== "dealing" && seat in view.outcomes) {
      const [cls, word] = outcomeWord(view.outcomes[seat]);
      node.append(el("div", {class: `outcome ${cls}`, "data-outcome": cls, text: word}));
    }
    seats.append(node);
  }
  box.append(seats);
  if (view.voided && view.phase !== "dealing") box.append(el("div", {class: "verdict void", text: W.voided}));
  return box;
}

function seatGameHistory(view) {
  const strip = el("div", {class: "strip"}, el("span", {class: "strip-title", text: W.last}));
  for (const h of view.history.slice().reverse()) {
    const cards = h.dealer_cards || (h.dp_card ? [h.dp_card] : []);
    strip.append(el("div", {class: "past seatgame", "data-round": h.round},
      el("span", {class: "past-r", text: `#${h.round}`}),
      el("div", {class: "mini"}, ...cards.slice(0, 6).map(c => cardNode(c, null))),
      h.dealer_total != null ? el("span", {class: "past-s", text: String(h.dealer_total)}) : null));
  }
  return strip;
}

// ------------------------------------------------------------------ screen
// The last-results strip keeps whole items only: the oldest that would be cut by the panel's edge go.
function fitStrip() {
  const strip = document.querySelector("#history .strip");
  if (!strip) return;
  const right = strip.getBoundingClientRect().right + 0.5;
  let last = strip.lastElementChild;
  while (last && last.classList.contains("past") && last.getBoundingClientRect().right > right) {
    last.remove();
    last = strip.lastElementChild;
  }
}

function render(view) {
  lastView = view;
  const d = view.display || {};
  W = WORDS[d.language] || WORDS.en;
  document.documentElement.lang = d.language || "en";
  const body = document.body;
  forcedLayout = d.layout === "auto" || !d.layout ? null : d.layout;
  const layout = forcedLayout || (innerHeight > innerWidth ? "portrait" : "landscape");
  body.dataset.layout = document.documentElement.dataset.layout = layout;
  body.dataset.game = view.game;
  body.dataset.phase = view.phase;
  document.title = d.title || view.table;
  document.getElementById("title").textContent = d.title || view.table;
  document.getElementById("round").textContent = view.round ? `${W.round} ${view.round}` : "";
  const phase = document.getElementById("phase");
  phase.textContent = W[view.phase] || view.phase;
  phase.className = `phase ${view.phase}`;
  const lim = d.limits_text;  // written by the display as the table's currency says
  document.getElementById("limits").textContent = lim ? `${W.min} ${lim.min_bet} · ${W.max} ${lim.max_bet}` : "";

  const tilt = document.getElementById("banner-tilt");
  tilt.hidden = !view.tilt;
  const held = view.tilt && view.tilt.held && view.tilt.held.length ? ` [${view.tilt.held.join(" ")}]` : "";
  tilt.textContent = view.tilt ? `${W.tilt}: ${view.tilt.detail || view.tilt.reason}${held}` : "";
  const stale = document.getElementById("banner-stale");
  stale.hidden = !(view.feed && view.feed.stale);
  stale.textContent = W.stale;
  const offline = document.getElementById("banner-offline");
  const off = Object.entries(view.offline || {});
  offline.hidden = !off.length || !!view.tilt;
  offline.textContent = off.length ? `${W.offline}: ${off.map(([k, v]) => v ? `${k} (${v})` : k).join(", ")}` : "";

  const hand = document.getElementById("hand"), stats = document.getElementById("stats");
  const board = document.getElementById("board"), history = document.getElementById("history");
  if (view.game === "baccarat") {
    hand.replaceChildren(baccaratHand(view));
    stats.replaceChildren(baccaratStats(view));
    board.replaceChildren(baccaratBoard(view));
    history.replaceChildren(baccaratHistory(view));
    stats.hidden = board.hidden = false;
  } else {
    hand.replaceChildren(seatGameHand(view));
    stats.replaceChildren();
    board.replaceChildren();
    history.replaceChildren(seatGameHistory(view));
    stats.hidden = board.hidden = true;
  }
  fitStrip();
  scrollRoads();
  if (seenCards.size > 400) seenCards = new Set();
  body.dataset.seq = String(view.seq);
  body.dataset.stale = String(!!(view.feed && view.feed.stale));
  window.__seen[view.seq] = performance.timeOrigin + performance.now();
}

function follow(table) {
  const source = new EventSource(`/feed/${encodeURIComponent(table)}`);
  // Draw at most once a frame, the latest screen only: a burst of events never queues renders.
  let latest = null;
  source.onmessage = msg => {
    if (latest === null) requestAnimationFrame(() => { const text = latest; latest = null; render(JSON.parse(text)); });
    latest = msg.data;
  };
  source.onerror = () => {  // the display process is gone or restarting: EventSource retries by itself
    document.getElementById("banner-stale").hidden = false;
    document.getElementById("banner-stale").textContent = W.stale;
    document.body.dataset.stale = "true";
  };
}

async function start() {
  const wanted = new URLSearchParams(location.search).get("table");
  if (wanted) return follow(wanted);
  const tables = await (await fetch("/tables")).json();
  if (tables.length === 1) return follow(tables[0].table);
  const chooser = document.getElementById("chooser");
  chooser.hidden = false;
  document.getElementById("main").hidden = true;
  for (const t of tables) chooser.append(el("a", {href: `/?table=${encodeURIComponent(t.table)}`, text: t.title || t.table}));
}

addEventListener("resize", () => {  // a screen turned round: redraw the last screen for its new shape
  if (lastView) render(lastView);
});
start();
