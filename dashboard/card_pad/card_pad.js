// The card pad: tap cards into boards with no server round trip per tap.
// Python sends {epoch, players, order, boards, player, row, sizes, seq, notes}; taps change a
// local copy at once and report it with setStateValue("entry", {epoch, seq, boards, player, row}).
// A new epoch from Python (typed boards, a save, an undo) replaces the local copy.
// Names and tokens are untrusted: they only ever reach the page through textContent.
const SUITS = ["s", "h", "d", "c"];
const SYMBOLS = { s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" };
const RANKS = ["A", "K", "Q", "J", "T", "9", "8", "7", "6", "5", "4", "3", "2"];
const ROW_NAMES = ["top", "middle", "bottom"];
const instances = new WeakMap();

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
  if (!me) {
    me = { epoch: null, seq: 0, boards: [], player: 0, row: 0, flash: "" };
    instances.set(parentElement, me);
  }
  console.log("PADRENDER", data.epoch, data.seq, me.epoch, me.seq);
  me.data = data;
  if (me.epoch !== data.epoch) {
    me.epoch = data.epoch;
    me.seq = data.seq || 0;
    me.boards = data.boards.map((rows) => rows.map((row) => row.slice()));
    me.player = data.player;
    me.row = data.row;
    me.flash = "";
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
    setStateValue("entry", {
      epoch: me.epoch, seq: me.seq, boards: me.boards, player: me.player, row: me.row,
    });
  };
  const tap = (card) => {
    me.flash = "";
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
    me.flash = "";
    me.boards[me.player] = [[], [], []];
    me.row = 0;
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
      button.appendChild(el("span", "name", info.name));
      button.appendChild(el("span", "count", `${count}/13${info.badge ? " · " + info.badge : ""}`));
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
    const clearButton = el("button", "tool clear", "\u2715");
    clearButton.type = "button";
    clearButton.title = "Clear this board";
    clearButton.setAttribute("aria-label", "Clear this board");
    clearButton.onclick = clear;
    players.append(backButton, clearButton);
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
    const line = el("div", "note " + (fresh ? note.kind : "stale"),
      me.flash || (fresh ? note.text : "checking\u2026"));
    if (me.flash) line.className = "note error";
    line.setAttribute("role", "status");
    root.appendChild(line);

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
}
