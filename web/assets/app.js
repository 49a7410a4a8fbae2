// Oware in the browser. The server decides everything: this page sends what the person taps
// and draws the states it is sent (the sowing animation only shows the server's last move).
"use strict";

const SOUTH = ["a", "b", "c", "d", "e", "f"];
const NORTH = ["A", "B", "C", "D", "E", "F"];
const LETTERS = SOUTH.concat(NORTH); // canonical order: index 0..11
const TOKEN_KEY = "oware.token";
const WATCH_KEY = "oware.watching"; // the room code a watcher follows (watchers hold no token)
const ANIM_KEY = "oware.animate";
const MAX_DRAWN_SEEDS = 24;

const $ = (id) => document.getElementById(id);
const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);

const app = {
  ws: null,
  info: null,
  kind: null,       // "ai" | "local" | "room"
  seat: null,       // "south" | "north" | "both" | "watcher"
  code: null,
  state: null,      // the last state from the server
  shown: null,      // the board drawn now (may lag `state` while animating)
  queue: [],
  animating: false,
  hint: null,
  review: null,     // { moves, states, evals, turning, ply, record, live }
  retry: 0,
  pending: [],
};
window.oware = app; // for people poking around in the console, and for tests

// ---------- connection ----------

function connect() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${proto}://${location.host}/ws`);
  app.ws = ws;
  ws.onopen = () => {
    app.retry = 0;
    setConn(true);
    const token = sessionStorage.getItem(TOKEN_KEY);
    const watching = sessionStorage.getItem(WATCH_KEY);
    const room = new URLSearchParams(location.search).get("room");
    if (token) send({ type: "resume", token });
    else if (watching) send({ type: "watch", code: watching });
    // A join code takes the free seat; a bare six-letter room code can only watch.
    else if (room) send({ type: room.replace(/[-\s]/g, "").length > 6 ? "join_room" : "watch", code: room });
    for (const m of app.pending.splice(0)) send(m);
  };
  ws.onmessage = (e) => {
    let msg;
    try { msg = JSON.parse(e.data); } catch { return; }
    onMessage(msg);
  };
  ws.onclose = () => {
    setConn(false);
    app.ws = null;
    const wait = Math.min(5000, 300 * 2 ** app.retry++);
    setTimeout(connect, wait);
  };
}

function setConn(up) {
  const el = $("conn");
  el.textContent = up ? "connected" : "reconnecting…";
  el.classList.toggle("down", !up);
}

function send(msg) {
  if (app.ws && app.ws.readyState === WebSocket.OPEN) app.ws.send(JSON.stringify(msg));
  else app.pending.push(msg);
}

setInterval(() => { if (app.ws && app.ws.readyState === WebSocket.OPEN) send({ type: "ping" }); }, 25000);

// ---------- messages ----------

function onMessage(msg) {
  switch (msg.type) {
    case "joined": return onJoined(msg);
    case "state": return onState(msg);
    case "hint": return onHint(msg);
    case "review": return onReview(msg);
    case "analysis": return onAnalysis(msg);
    case "notice": return notice(msg.text, "");
    case "error": return onError(msg);
    default: return undefined;
  }
}

function onJoined(msg) {
  app.kind = msg.kind;
  app.seat = msg.seat;
  app.code = msg.code || null;
  app.hint = null;
  app.state = null;
  app.shown = null;
  app.queue = [];
  closeReview();
  forgetSeat();
  if (msg.token) sessionStorage.setItem(TOKEN_KEY, msg.token);
  else if (msg.seat === "watcher" && msg.code) sessionStorage.setItem(WATCH_KEY, msg.code);
  const url = msg.code ? `?room=${msg.code}` : location.pathname;
  history.replaceState(null, "", url);
  $("room-box").hidden = !msg.code;
  if (msg.code) {
    $("room-code-shown").textContent = msg.code;
    $("room-link").textContent = location.origin + msg.link;
  }
  $("setup-error").textContent = "";
  show("game");
}

// Forgets the seat (or the watched room) this tab returns to after a reload.
function forgetSeat() {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(WATCH_KEY);
}

function onError(msg) {
  const text = msg.message || "error";
  const returning = sessionStorage.getItem(TOKEN_KEY) || sessionStorage.getItem(WATCH_KEY);
  if (msg.code === "expired" || (msg.code === "not_found" && returning && !app.state)) {
    forgetSeat();
    history.replaceState(null, "", location.pathname);
    app.state = null;
    show("setup");
    $("setup-error").textContent = text;
    return;
  }
  if (msg.code === "room_full") {
    $("setup-error").textContent = text;
    show("setup");
    selectPanel("room");
    return;
  }
  if (document.body.dataset.view === "setup" || msg.code === "bad_record" || (msg.code === "too_large" && !app.state)) {
    $("setup-error").textContent = text;
    if (msg.code === "bad_record" || msg.code === "too_large") { show("setup"); selectPanel("review"); }
    return;
  }
  if (msg.code === "illegal_move" && msg.reason) {
    notice(text, "refused");
    return;
  }
  if (msg.code === "busy" && app.review && !app.review.evals) {
    $("graph-caption").textContent = text;
    return;
  }
  notice(text, "refused");
}

function onState(state) {
  const prev = app.state;
  app.state = state;
  document.body.dataset.ply = state.ply;
  document.body.dataset.over = state.terminal ? "yes" : "no";
  if (app.hint && app.hint.ply !== state.ply) app.hint = null;
  const oneMove = prev && state.last && state.moves.length === prev.moves.length + 1;
  if (oneMove && animationOn() && !app.review) {
    app.queue.push(state);
    if (!app.animating) drain();
  } else {
    app.queue = [];
    app.shown = state;
    renderAll();
  }
  if (oneMove) moveNotice(state.last);
  else if (prev && state.moves.length < prev.moves.length) notice("Move taken back", "");
}

function onHint(msg) {
  if (!app.state || msg.ply !== app.state.ply) return;
  app.hint = msg;
  const v = msg.value == null ? "" : `, ${describeValue(msg.value)}`;
  notice(`Hint: ${msg.move}${v}`, "");
  renderBoard(app.shown || app.state);
}

// ---------- moves and notices ----------

function mySide() {
  const s = app.state;
  if (!s) return null;
  if (app.seat === "south" || app.seat === "north") return app.seat;
  if (app.seat === "both") return s.to_move;
  return null;
}

function isMyTurn() {
  const s = app.state;
  return !!s && !s.terminal && !s.ai_thinking && mySide() === s.to_move;
}

function tap(letter) {
  if (app.review && !app.review.live) return;
  if (!app.state) return;
  send({ type: "move", house: letter });
}

function moveNotice(last) {
  if (last.grand_slam) {
    notice(`Grand slam by ${cap(last.side)} — the capture is cancelled: it would have taken all the opponent's seeds`, "slam");
  } else if (last.captured > 0) {
    const houses = last.captured_houses.map((h) => LETTERS[h]).join(", ");
    notice(`${cap(last.side)} captures ${last.captured} seed${last.captured === 1 ? "" : "s"} (${houses})`, "capture");
  } else {
    notice("", "");
  }
}

function notice(text, kind) {
  const el = $("notice");
  el.textContent = text;
  el.className = kind || "";
}

function describeValue(v) {
  const pct = Math.round((v + 1) * 50);
  if (Math.abs(v) < 0.05) return "about even";
  return v > 0 ? `good for you (${pct}%)` : `hard for you (${pct}%)`;
}

// ---------- animation ----------

function animationOn() { return $("animate").checked; }

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

async function drain() {
  app.animating = true;
  document.body.dataset.animating = "yes";
  while (app.queue.length) {
    const state = app.queue.shift();
    if (app.queue.length === 0 && animationOn()) await animate(state);
    app.shown = state;
    renderAll();
  }
  app.animating = false;
  document.body.dataset.animating = "no";
}

async function animate(state) {
  const last = state.last;
  const board = last.before.slice();
  const step = Math.max(40, Math.min(160, 1400 / Math.max(1, last.path.length)));
  const origin = LETTERS.indexOf(last.move);
  const view = { ...state, board, captured: (app.shown || state).captured, last: null };
  board[origin] = 0;
  renderBoard(view, { sowing: origin });
  for (const h of last.path) {
    await sleep(step);
    board[h] += 1;
    renderBoard(view, { sowing: h });
  }
  if (last.captured_houses.length) {
    await sleep(step);
    for (const h of last.captured_houses) houseEl(h).classList.add("taken");
    await sleep(420);
  }
}

// ---------- drawing ----------

function houseEl(index) { return document.querySelector(`.house[data-index="${index}"]`); }

function buildBoard() {
  const north = $("row-north");
  const south = $("row-south");
  // North's row is drawn right to left (F … A) so that A sits opposite f.
  for (let i = 5; i >= 0; i--) north.appendChild(makeHouse(6 + i, 6 - i));
  for (let i = 0; i < 6; i++) south.appendChild(makeHouse(i, i + 1));
}

function makeHouse(index, column) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "house";
  b.dataset.index = index;
  b.dataset.house = LETTERS[index];
  b.style.gridColumn = String(column + 1);
  b.innerHTML = `<span class="seeds"></span><span class="count">0</span><span class="letter">${LETTERS[index]}</span>`;
  b.addEventListener("click", () => tap(LETTERS[index]));
  return b;
}

// Stable scattered positions for up to MAX_DRAWN_SEEDS seeds in a round pit.
const SPOTS = (() => {
  const spots = [];
  let seed = 7;
  const rnd = () => { seed = (seed * 16807) % 2147483647; return seed / 2147483647; };
  for (let k = 0; k < MAX_DRAWN_SEEDS; k++) {
    const ring = k < 1 ? 0 : k < 7 ? 0.2 : k < 15 ? 0.33 : 0.4;
    const a = k * 2.39996 + rnd() * 0.5;
    spots.push([50 + Math.cos(a) * ring * 100 + (rnd() - 0.5) * 4, 47 + Math.sin(a) * ring * 100 + (rnd() - 0.5) * 4]);
  }
  return spots;
})();

function drawSeeds(container, n) {
  const drawn = Math.min(n, MAX_DRAWN_SEEDS);
  if (container.childElementCount === drawn) return;
  container.textContent = "";
  for (let k = 0; k < drawn; k++) {
    const s = document.createElement("span");
    s.className = "seed";
    s.style.left = `${SPOTS[k][0]}%`;
    s.style.top = `${SPOTS[k][1]}%`;
    container.appendChild(s);
  }
}

function drawStoreSeeds(container, n) {
  const drawn = Math.min(n, 30);
  if (container.childElementCount === drawn) return;
  container.textContent = "";
  for (let k = 0; k < drawn; k++) {
    const s = document.createElement("span");
    s.className = "seed";
    s.style.left = `${22 + (k % 3) * 28 + ((k * 37) % 9) - 4}%`;
    s.style.top = `${12 + Math.floor(k / 3) * 8.2}%`;
    container.appendChild(s);
  }
}

function renderBoard(s, opts = {}) {
  if (!s) return;
  const playable = new Set(!app.review && isMyTurn() ? s.legal : []);
  const last = s.last;
  for (let i = 0; i < 12; i++) {
    const el = houseEl(i);
    const n = s.board[i];
    drawSeeds(el.querySelector(".seeds"), n);
    const count = el.querySelector(".count");
    count.textContent = String(n);
    count.classList.toggle("big", n > MAX_DRAWN_SEEDS);
    el.classList.toggle("playable", playable.has(LETTERS[i]));
    el.classList.toggle("last-from", !!last && LETTERS.indexOf(last.move) === i && opts.sowing === undefined);
    el.classList.toggle("last-to", !!last && last.path.length > 0 && last.path[last.path.length - 1] === i && opts.sowing === undefined);
    el.classList.toggle("sowing", opts.sowing === i);
    el.classList.remove("taken");
    const hinted = app.hint && !app.review && app.hint.move === LETTERS[i];
    el.setAttribute("aria-label", `house ${LETTERS[i]}, ${n} seed${n === 1 ? "" : "s"}${hinted ? ", suggested" : ""}`);
    el.style.outline = hinted ? "3px dashed #ffd166" : "";
  }
  $("captured-south").textContent = s.captured[0];
  $("captured-north").textContent = s.captured[1];
  drawStoreSeeds(document.querySelector("#store-south .seeds"), s.captured[0]);
  drawStoreSeeds(document.querySelector("#store-north .seeds"), s.captured[1]);
}

function seatLabel(side) {
  const s = app.state;
  const seat = s.seats[side === "south" ? 0 : 1];
  if (seat.player === "ai") return `${cap(side)}: AI (${seat.name})`;
  const me = app.seat === side || app.seat === "both";
  const who = me ? (app.seat === "both" ? "player" : "you") : "friend";
  return `${cap(side)}: ${who}${seat.connected ? "" : " (not connected)"}`;
}

function renderStatus() {
  const s = app.state;
  const el = $("status");
  el.classList.remove("mine");
  if (app.review && !app.review.live) {
    el.textContent = "Reviewing a loaded game";
    return;
  }
  if (s.terminal) {
    el.textContent = s.ending || "Game over";
    return;
  }
  const side = cap(s.to_move);
  if (s.ai_thinking) el.textContent = `${side} (AI) is thinking…`;
  else if (app.seat === "both") el.textContent = `${side} to move`;
  else if (app.seat === "watcher") el.textContent = `${side} to move (you are watching)`;
  else if (s.to_move === app.seat) { el.textContent = `Your turn (${side})`; el.classList.add("mine"); }
  else el.textContent = `${side} to move — waiting for your ${app.kind === "ai" ? "opponent" : "friend"}`;
  document.body.dataset.turn = isMyTurn() ? "mine" : "theirs";
}

function renderMoves(moves, current, clickable) {
  const ol = $("moves");
  ol.textContent = "";
  for (let i = 0; i < moves.length; i += 2) {
    const li = document.createElement("li");
    for (const k of [i, i + 1]) {
      if (k >= moves.length) break;
      const span = document.createElement("span");
      span.className = "mv";
      span.dataset.ply = k + 1;
      span.textContent = moves[k];
      if (k + 1 === current) span.classList.add("current");
      span.addEventListener("click", () => clickable(k + 1));
      li.appendChild(span);
      li.appendChild(document.createTextNode(" "));
    }
    ol.appendChild(li);
  }
  const cur = ol.querySelector(".current");
  if (cur) cur.scrollIntoView({ block: "nearest" });
}

function renderControls() {
  const s = app.state;
  const player = app.seat !== "watcher";
  const over = s.terminal;
  const hintable = (app.kind === "ai" || app.kind === "local") && isMyTurn();
  $("btn-hint").hidden = app.kind === "room";
  $("btn-hint").disabled = !hintable;
  $("btn-undo").hidden = app.kind === "room";
  $("btn-undo").disabled = !s.can_undo;
  $("btn-draw").hidden = app.kind === "ai" || !player;
  $("btn-draw").textContent = app.kind === "local" ? "Agree a draw" : "Offer draw";
  $("btn-draw").disabled = over || (s.draw_offer && s.draw_offer === app.seat);
  $("btn-resign").hidden = !player;
  $("btn-resign").disabled = over;
  $("btn-rematch").hidden = !over || !player;
  $("btn-rematch").textContent = app.kind === "room" ? (s.rematch_offer === app.seat ? "Rematch asked…" : "Rematch (sides swap)") : "New game";
  $("btn-review").hidden = !over || !!app.review;
  const offer = $("offer");
  const theirs = (side) => side && player && side !== app.seat && app.seat !== "both";
  if (!over && s.draw_offer && theirs(s.draw_offer)) {
    offer.hidden = false;
    offer.innerHTML = `${cap(s.draw_offer)} offers a draw. <button type="button" id="accept-draw" class="primary small">Accept</button> <button type="button" id="decline-draw" class="small">Decline</button>`;
    $("accept-draw").onclick = () => send({ type: "accept_draw" });
    $("decline-draw").onclick = () => send({ type: "decline_draw" });
  } else if (!over && s.draw_offer) {
    offer.hidden = false;
    offer.textContent = `${cap(s.draw_offer)} offers a draw.`;
  } else if (over && s.rematch_offer && theirs(s.rematch_offer)) {
    offer.hidden = false;
    offer.innerHTML = `${cap(s.rematch_offer)} asks for a rematch (sides swap). <button type="button" id="accept-rematch" class="primary small">Play again</button>`;
    $("accept-rematch").onclick = () => send({ type: "rematch" });
  } else {
    offer.hidden = true;
  }
  const seats = [seatLabel("south"), seatLabel("north")];
  if (s.watchers) seats.push(`${s.watchers} watching`);
  $("seats").textContent = seats.join(" · ");
}

function renderAll() {
  const s = app.state;
  if (!s) return;
  if (app.review && !app.review.live) return renderReview();
  renderStatus();
  renderControls();
  if (app.review) return renderReview();
  renderBoard(app.shown || s);
  renderMoves(s.moves, s.moves.length, () => startReview(s.record));
}

// ---------- review ----------

function startReview(record) {
  if (!record) return;
  send({ type: "review", record });
}

function onReview(msg) {
  const live = !!app.state && msg.record === app.state.record.split("\t")[0];
  app.review = { moves: msg.moves, states: msg.states, evals: null, turning: null, marks: [], ply: msg.moves.length,
    record: msg.record, live, resultText: live ? app.state.ending : resultText(msg.states[msg.states.length - 1]) };
  if (!live) {
    app.kind = null;
    $("room-box").hidden = true;
    $("seats").textContent = "";
  }
  show("game");
  notice("", "");
  $("review").hidden = false;
  $("graph-caption").textContent = "Evaluating every position…";
  $("btn-back-live").hidden = !live || !!(app.state && app.state.terminal);
  const full = live ? app.state.record : msg.record;
  // A data: link (a record is at most a few KB), so the page needs no blob: permission.
  const a = $("download");
  a.href = `data:text/plain;charset=utf-8,${encodeURIComponent(full + "\n")}`;
  a.download = `oware-${new Date().toISOString().slice(0, 10)}.txt`;
  document.body.dataset.review = "yes";
  renderReview();
}

function resultText(state) {
  if (!state.result) return `Position after ${state.ply} plies`;
  const w = state.result.winner;
  const who = w === "draw" ? "Draw" : `${cap(w)} wins`;
  return `${who} ${state.captured[0]}–${state.captured[1]} (${state.result.reason})`;
}

function onAnalysis(msg) {
  const r = app.review;
  if (!r || msg.moves !== r.record) return;
  r.evals = msg.evals;
  r.turning = msg.turning_point;
  r.marks = msg.table_marks || [];
  const t = r.turning;
  let caption = t
    ? `South's chances after every move (by ${msg.by}); turning point: move ${t} (${r.moves[t - 1]}), the biggest swing`
    : `South's chances after every move (by ${msg.by})`;
  if (r.marks.length) {
    const list = r.marks.map((m) => `${m.move} (${m.letter})`).join(", ");
    caption += `. Endgame tables: ${r.marks.length === 1 ? "move" : "moves"} ${list} threw away a proven result (red)`;
  }
  $("graph-caption").textContent = caption;
  renderReview();
}

function closeReview() {
  app.review = null;
  $("review").hidden = true;
  document.body.dataset.review = "no";
}

function goto(ply) {
  const r = app.review;
  if (!r) return;
  r.ply = Math.max(0, Math.min(r.moves.length, ply));
  renderReview();
}

function renderReview() {
  const r = app.review;
  const st = r.states[r.ply];
  const last = r.ply > 0 && app.state && r.live && r.ply === r.moves.length ? app.state.last : null;
  const view = { ...st, last: last || (r.ply > 0 ? { move: r.moves[r.ply - 1], path: [], captured_houses: [] } : null) };
  renderBoard(view);
  $("result").textContent = r.resultText || "";
  $("rv-pos").textContent = `${r.ply} / ${r.moves.length}`;
  $("rv-first").disabled = $("rv-back").disabled = r.ply === 0;
  $("rv-last").disabled = $("rv-forward").disabled = r.ply === r.moves.length;
  const mark = tableMark(r, r.ply);
  if (!r.live) {
    let text = r.ply === 0 ? "Start position" : `After move ${r.ply}: ${r.moves[r.ply - 1]}`;
    if (mark) text += ` — threw away a ${mark.from} the endgame tables prove (at best a ${mark.to} now)`;
    $("status").textContent = text;
  }
  renderMoves(r.moves, r.ply, goto);
  for (const m of r.marks || []) {
    const span = $("moves").querySelector(`[data-ply="${m.move}"]`);
    if (span) {
      span.classList.add("table-mark");
      span.title = `Threw away a ${m.from} the endgame tables prove (at best a ${m.to})`;
    }
  }
  drawGraph();
}

/** The review's table mark of the move that led to state `ply`, if any. */
function tableMark(r, ply) {
  return (r.marks || []).find((m) => m.move === ply) || null;
}

function drawGraph() {
  const r = app.review;
  const svg = $("graph");
  const W = 600, H = 160, n = Math.max(1, r.moves.length);
  const x = (k) => (k / n) * W;
  const y = (v) => H / 2 - v * (H / 2 - 8);
  let out = `<line class="zero" x1="0" y1="${H / 2}" x2="${W}" y2="${H / 2}"/>`;
  if (r.evals) {
    const pts = r.evals.map((v, k) => `${x(k).toFixed(1)},${y(v).toFixed(1)}`);
    out += `<polygon class="south-area" points="0,${H / 2} ${pts.join(" ")} ${x(r.evals.length - 1).toFixed(1)},${H / 2}"/>`;
    out += `<polyline class="line" points="${pts.join(" ")}"/>`;
    if (r.turning) out += `<line class="turn" x1="${x(r.turning)}" y1="0" x2="${x(r.turning)}" y2="${H}"/>`;
    for (const m of r.marks || []) {
      const v = r.evals[m.move] ?? 0;
      out += `<circle class="table-mark" data-move="${m.move}" cx="${x(m.move).toFixed(1)}" cy="${y(v).toFixed(1)}" r="5"/>`;
    }
  }
  out += `<line class="cursor" x1="${x(r.ply)}" y1="0" x2="${x(r.ply)}" y2="${H}"/>`;
  svg.innerHTML = out;
}

$("graph").addEventListener("click", (e) => {
  const r = app.review;
  if (!r) return;
  const box = e.currentTarget.getBoundingClientRect();
  goto(Math.round(((e.clientX - box.left) / box.width) * r.moves.length));
});

// ---------- setup ----------

function show(view) {
  document.body.dataset.view = view;
  $("setup").hidden = view !== "setup";
  $("game").hidden = view !== "game";
}

function selectPanel(name) {
  for (const b of document.querySelectorAll("#modes button")) b.classList.toggle("active", b.dataset.panel === name);
  for (const p of document.querySelectorAll(".panel")) p.hidden = p.id !== `panel-${name}`;
}

function checked(name) {
  const el = document.querySelector(`input[name="${name}"]:checked`);
  return el ? el.value : "south";
}

async function loadInfo() {
  try {
    const res = await fetch("/api/info");
    app.info = await res.json();
    const sel = $("ai-select");
    sel.textContent = "";
    for (const ai of app.info.ais) {
      const o = document.createElement("option");
      o.value = ai.index;
      o.textContent = `${ai.label} — ${ai.spec}`;
      sel.appendChild(o);
    }
  } catch (e) {
    $("setup-error").textContent = `cannot reach the server: ${e}`;
  }
}

function wire() {
  for (const b of document.querySelectorAll("#modes button")) {
    b.addEventListener("click", () => {
      if (app.state && !app.state.terminal && document.body.dataset.view === "game" && app.seat !== "watcher") {
        if (!confirm("Leave the game in progress?")) return;
      }
      show("setup");
      selectPanel(b.dataset.panel);
    });
  }
  $("start-ai").onclick = () => send({ type: "new_ai", ai: Number($("ai-select").value || 0), side: checked("ai-side") });
  $("start-local").onclick = () => send({ type: "new_local" });
  $("create-room").onclick = () => send({ type: "create_room", side: checked("room-side") });
  $("join-room").onclick = () => send({ type: "join_room", code: $("room-code").value.trim() });
  $("watch-room").onclick = () => send({ type: "watch", code: $("room-code").value.trim() });
  $("review-text").onclick = () => send({ type: "review", record: $("record-text").value });
  $("record-file").onchange = async (e) => {
    const f = e.target.files[0];
    if (!f) return;
    if (f.size > 64 * 1024) { $("setup-error").textContent = "that file is too large to be a game record"; return; }
    send({ type: "review", record: await f.text() });
  };
  $("btn-hint").onclick = () => { notice("Searching for a hint…", ""); send({ type: "hint" }); };
  $("btn-undo").onclick = () => send({ type: "undo" });
  $("btn-resign").onclick = () => { if (confirm("Resign this game?")) send({ type: "resign" }); };
  $("btn-draw").onclick = () => send({ type: "offer_draw" });
  $("btn-rematch").onclick = () => { closeReview(); send({ type: "rematch" }); };
  $("btn-review").onclick = () => startReview(app.state.record);
  $("btn-leave").onclick = () => {
    send({ type: "leave" });
    forgetSeat();
    history.replaceState(null, "", location.pathname);
    app.state = null;
    closeReview();
    show("setup");
  };
  $("btn-close-review").onclick = () => {
    const live = app.review && app.review.live;
    closeReview();
    if (live) renderAll(); else show("setup");
  };
  $("btn-back-live").onclick = () => { closeReview(); renderAll(); };
  $("rv-first").onclick = () => goto(0);
  $("rv-back").onclick = () => goto(app.review.ply - 1);
  $("rv-forward").onclick = () => goto(app.review.ply + 1);
  $("rv-last").onclick = () => goto(app.review.moves.length);
  $("copy-link").onclick = async () => {
    try { await navigator.clipboard.writeText($("room-link").textContent); notice("Link copied", ""); }
    catch { notice(`Send this link: ${$("room-link").textContent}`, ""); }
  };
  const anim = $("animate");
  anim.checked = localStorage.getItem(ANIM_KEY) !== "off";
  anim.onchange = () => localStorage.setItem(ANIM_KEY, anim.checked ? "on" : "off");
  document.addEventListener("keydown", onKey);
}

function onKey(e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) return;
  if (app.review) {
    const r = app.review;
    if (e.key === "ArrowLeft") { goto(r.ply - 1); e.preventDefault(); return; }
    if (e.key === "ArrowRight") { goto(r.ply + 1); e.preventDefault(); return; }
    if (e.key === "Home") { goto(0); e.preventDefault(); return; }
    if (e.key === "End") { goto(r.moves.length); e.preventDefault(); return; }
  }
  if (document.body.dataset.view !== "game" || !app.state) return;
  const k = e.key.toLowerCase();
  const i = SOUTH.indexOf(k);
  if (i >= 0 && e.key.length === 1) {
    const side = mySide() || app.state.to_move;
    tap(side === "north" ? NORTH[i] : SOUTH[i]);
    e.preventDefault();
  } else if (k === "h" && !$("btn-hint").hidden && !$("btn-hint").disabled) {
    $("btn-hint").click();
  } else if (k === "u" && !$("btn-undo").hidden && !$("btn-undo").disabled) {
    $("btn-undo").click();
  }
}

buildBoard();
wire();
loadInfo();
const roomParam = new URLSearchParams(location.search).get("room");
if (roomParam) { $("room-code").value = roomParam; selectPanel("room"); }
show("setup");
connect();
