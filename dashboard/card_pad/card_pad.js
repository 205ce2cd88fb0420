// The card pad: tap cards into boards with no server round trip per tap.
// Python sends {epoch, players, order, boards, player, row, sizes, seq, notes}; taps change a
// local copy at once and report it with setStateValue("entry", {epoch, seq, boards, player, row}).
// A new epoch from Python (typed boards, a save, an undo) replaces the local copy.
// Every tap is also kept in the browser's localStorage under the draft's id (session and hand):
// a reload that comes before the report reaches the server finds it there, and a pad opened
// again on that draft takes it back when it extends what the server has.
// Clearing a board asks first (a second tap) and can be undone.
// Names and tokens are untrusted: they only ever reach the page through textContent.
const SUITS = ["s", "h", "d", "c"];
const SYMBOLS = { s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" };
const RANKS = ["A", "K", "Q", "J", "T", "9", "8", "7", "6", "5", "4", "3", "2"];
const ROW_NAMES = ["top", "middle", "bottom"];
const instances = new WeakMap();
const STORAGE_KEY = "ofc-card-pad:last";  // the taps of the draft being entered, in this browser

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function chip(token, extra) {
  const node = el("span", "chip");
  const suit = token.length === 2 ? token[1] : "";
  if (SYMBOLS[suit] && RANKS.includes(token[0])) {
    node.textContent = token[0] + SYMBOLS[suit];
    node.classList.add("s-" + suit);
  } else {
    node.textContent = token;
    node.classList.add("bad");
  }
  if (extra) {
    node.classList.add("extra");
    node.title = "extra card";
  }
  return node;
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  if (!data) return;
  let me = instances.get(parentElement);
  const opened = !me;
  if (!me) {
    me = { epoch: null, seq: 0, boards: [], player: 0, row: 0, flash: "", scroll: null,
           clearArmed: null, cleared: null };
    instances.set(parentElement, me);
  }
  me.data = data;
  let restored = false;
  if (me.epoch !== data.epoch) {
    me.epoch = data.epoch;
    me.seq = data.seq || 0;
    me.boards = data.boards.map((rows) => rows.map((row) => row.slice()));
    me.player = data.player;
    me.row = data.row;
    me.flash = "";
    me.clearArmed = null;
    me.cleared = null;
    if (opened) restored = restoreKept();
  }
  if (data.scroll !== undefined && data.scroll !== me.scroll) {
    const first = me.scroll === null;
    me.scroll = data.scroll;
    if (!first || data.scroll > 0) scrollToTop();
  }
  const sizes = data.sizes;

  const openRow = (p, preferred) => {
    const rows = me.boards[p];
    if (preferred !== null && rows[preferred].length < sizes[preferred]) return preferred;
    for (let r = 0; r < 3; r++) if (rows[r].length < sizes[r]) return r;
    return null;
  };
  const nextOpen = (p) => {
    const order = data.order;
    const start = order.indexOf(p);
    for (let step = 1; step < order.length; step++) {
      const q = order[(start + step) % order.length];
      if (openRow(q, 0) !== null) return q;
    }
    return null;
  };
  const emit = () => {
    me.seq += 1;
    keep();
    setStateValue("entry", {
      epoch: me.epoch, seq: me.seq, boards: me.boards, player: me.player, row: me.row,
    });
  };
  function keep() {
    if (!data.draft) return;
    try {
      window.localStorage.setItem(STORAGE_KEY, JSON.stringify({
        draft: data.draft, boards: me.boards, player: me.player, row: me.row, at: Date.now(),
      }));
    } catch (error) { /* private mode or full: the server copy still counts */ }
  }
  function restoreKept() {
    // A pad opened afresh (a reload, a resumed session) on the same draft: the taps kept in
    // this browser come back when they extend what the server has (same cards in the same
    // rows, and more) — the last taps before a reload may not have reached it.
    if (!data.draft) return false;
    let kept = null;
    try { kept = JSON.parse(window.localStorage.getItem(STORAGE_KEY) || "null"); } catch (error) { kept = null; }
    if (!kept || kept.draft !== data.draft || !Array.isArray(kept.boards)
        || kept.boards.length !== me.boards.length) return false;
    let more = 0;
    for (let p = 0; p < me.boards.length; p++) {
      for (let r = 0; r < 3; r++) {
        const server = me.boards[p][r] || [];
        const local = (kept.boards[p] || [])[r] || [];
        if (local.length < server.length) return false;
        for (let i = 0; i < server.length; i++) if (server[i] !== local[i]) return false;
        more += local.length - server.length;
      }
    }
    if (!more) return false;
    me.boards = kept.boards.map((rows) => rows.map((row) => row.slice()));
    me.player = kept.player;
    me.row = kept.row;
    return true;
  }
  function scrollToTop() {
    // after the page changed the hand (a save, an undo, a delete...): its top, with the tabs
    // and the running totals, back in view
    const host = parentElement.getRootNode && parentElement.getRootNode().host;
    const doc = (host && host.ownerDocument) || document;
    const target = (data.scroll_to && doc.querySelector(data.scroll_to)) || host || parentElement;
    requestAnimationFrame(() => target.scrollIntoView({ block: "start" }));
  }
  const tap = (card) => {
    me.flash = "";
    me.clearArmed = null;
    me.cleared = null;
    let p = me.player;
    let r = openRow(p, me.row);
    if (r === null) {
      const q = nextOpen(p);
      if (q === null) {
        me.flash = "Every board is full: save the hand, or take a card back.";
        render();
        return;
      }
      p = q;
      r = openRow(q, 0);
    }
    me.boards[p][r].push(card);
    const next = openRow(p, r);
    if (next !== null) {
      me.player = p;
      me.row = next;
    } else {
      const q = nextOpen(p);
      me.player = q === null ? p : q;
      me.row = q === null ? r : openRow(q, 0);
    }
    render();
    emit();
  };
  const back = () => {
    me.flash = "";
    me.clearArmed = null;
    me.cleared = null;
    const rows = me.boards[me.player];
    let r = rows[me.row].length ? me.row : -1;
    if (r < 0) for (let i = 2; i >= 0; i--) if (rows[i].length) { r = i; break; }
    if (r < 0) return;
    rows[r].pop();
    me.row = r;
    render();
    emit();
  };
  const clear = () => {
    const p = me.player;
    const count = me.boards[p].reduce((n, row) => n + row.length, 0);
    if (!count) return;
    if (!me.clearArmed || me.clearArmed.player !== p || Date.now() - me.clearArmed.at > 4000) {
      const armed = { player: p, at: Date.now() };  // the first tap only asks
      me.clearArmed = armed;
      me.flash = "";
      render();
      setTimeout(() => { if (me.clearArmed === armed) { me.clearArmed = null; render(); } }, 4000);
      return;
    }
    me.clearArmed = null;
    me.cleared = { player: p, rows: me.boards[p].map((row) => row.slice()), row: me.row };
    me.flash = "";
    me.boards[p] = [[], [], []];
    me.row = 0;
    render();
    emit();
  };
  const undoClear = () => {
    const undone = me.cleared;
    if (!undone) return;
    me.cleared = null;
    me.boards[undone.player] = undone.rows;
    me.player = undone.player;
    me.row = undone.row;
    render();
    emit();
  };

  function render() {
    const d = me.data;
    let root = parentElement.querySelector(".pad");
    if (!root) {
      root = el("div", "pad");
      parentElement.appendChild(root);
    }
    root.replaceChildren();
    if (d.summary) {
      const strip = el("div", "summary", d.summary);
      strip.setAttribute("role", "status");
      root.appendChild(strip);
    }
    const used = new Set();
    me.boards.forEach((rows) => rows.forEach((row) => row.forEach((c) => used.add(c))));

    const players = el("div", "players");
    d.order.forEach((p) => {
      const info = d.players[p];
      const count = me.boards[p].reduce((n, row) => n + row.length, 0);
      const button = el("button", "player");
      button.type = "button";
      button.dataset.player = String(p);
      button.setAttribute("aria-pressed", p === me.player ? "true" : "false");
      if (p === me.player) button.classList.add("active");
      const note = d.notes[p] || {};
      const fresh = d.seq === me.seq;
      if (count === 13 && fresh && (note.kind === "ok" || note.kind === "foul")) button.classList.add("done");
      if (fresh && (note.kind === "error" || note.kind === "foul")) button.classList.add("trouble");
      const flag = fresh && note.kind === "foul" ? " · foul" : fresh && note.kind === "error" ? " · fix" : "";
      button.appendChild(el("span", "name", info.name));
      button.appendChild(el("span", "count", `${count}/13${info.badge ? " · " + info.badge : ""}${flag}`));
      button.onclick = () => {
        me.player = p;
        const r = openRow(p, 0);
        me.row = r === null ? 2 : r;
        me.flash = "";
        render();
        emit();
      };
      players.appendChild(button);
    });
    const backButton = el("button", "tool back", "\u232b");
    backButton.type = "button";
    backButton.title = "Take the last card back";
    backButton.setAttribute("aria-label", "Take the last card back");
    backButton.onclick = back;
    players.append(backButton);
    root.appendChild(players);

    const rowsBox = el("div", "rows");
    me.boards[me.player].forEach((cards, r) => {
      const button = el("button", "row");
      button.type = "button";
      button.dataset.row = ROW_NAMES[r];
      if (r === me.row) button.classList.add("active");
      button.appendChild(el("span", "label", `${ROW_NAMES[r]} ${cards.length}/${sizes[r]}`));
      cards.forEach((token, i) => button.appendChild(chip(token, i >= sizes[r])));
      for (let i = cards.length; i < sizes[r]; i++) button.appendChild(el("span", "chip slot", "\u00b7"));
      if (cards.length > sizes[r]) button.appendChild(el("span", "tag", `${cards.length - sizes[r]} extra`));
      button.onclick = () => { me.row = r; me.flash = ""; render(); emit(); };
      rowsBox.appendChild(button);
    });
    root.appendChild(rowsBox);

    const note = d.notes[me.player] || { kind: "pending", text: "" };
    const fresh = d.seq === me.seq;
    const tools = el("div", "tools");
    const line = el("div", "note " + (fresh ? note.kind : "stale"),
      me.flash || (fresh ? note.text : "checking\u2026"));
    if (me.flash) line.className = "note error";
    line.setAttribute("role", "status");
    tools.appendChild(line);
    // clearing a board: far from the take-back key, asks first, and can be undone
    const name = d.players[me.player].name;
    if (me.cleared && me.cleared.player === me.player) {
      const undo = el("button", "tool undo-clear", "Undo clear");
      undo.type = "button";
      undo.title = "Put the cleared cards back";
      undo.onclick = undoClear;
      tools.appendChild(undo);
    } else {
      const armed = me.clearArmed && me.clearArmed.player === me.player;
      const clearButton = el("button", "tool clear" + (armed ? " armed" : ""),
        armed ? "Tap again to clear" : "\u2715 Clear");
      clearButton.type = "button";
      clearButton.title = armed ? "Tap again to clear this board" : "Clear this board";
      clearButton.setAttribute("aria-label", armed ? `Tap again to clear ${name}'s board`
        : `Clear ${name}'s board`);
      clearButton.disabled = !me.boards[me.player].some((row) => row.length);
      clearButton.onclick = clear;
      tools.appendChild(clearButton);
    }
    root.appendChild(tools);
    const others = d.order.filter((p) => p !== me.player && fresh && d.notes[p]
      && d.notes[p].kind === "foul");
    others.forEach((p) => {
      const also = el("div", "note foul other", `${d.players[p].name}: ${d.notes[p].text}`);
      also.dataset.player = String(p);
      root.appendChild(also);
    });

    const deck = el("div", "deck");
    SUITS.forEach((suit) => {
      const line = el("div", "suit");
      RANKS.forEach((rank) => {
        const card = rank + suit;
        const button = el("button", "card s-" + suit, rank + SYMBOLS[suit]);
        button.type = "button";
        button.dataset.card = card;
        button.disabled = used.has(card);
        button.onclick = () => tap(card);
        line.appendChild(button);
      });
      deck.appendChild(line);
    });
    root.appendChild(deck);

  }

  render();
  if (restored) emit();  // the kept taps go to the server at once
}
