// The hand replay: every street of one hand drawn in the browser. Python sends the whole hand
// once (boards street by street, verdicts, graded decisions); a street step redraws here, with
// no server round trip. Names and card tokens are untrusted: they only reach the page through
// textContent.
const SYMBOLS = { s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" };
const ROWS = ["top", "middle", "bottom"];
const SIZES = { top: 3, middle: 5, bottom: 5 };
const instances = new WeakMap();

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function chip(token) {
  const node = el("span", "chip");
  const suit = token.length === 2 ? token[1] : "";
  if (SYMBOLS[suit]) {
    node.textContent = token[0] + SYMBOLS[suit];
    node.classList.add("s-" + suit);
  } else {
    node.textContent = token;
  }
  node.title = token;
  return node;
}

function boardAt(player, street, last) {
  const rows = { top: [], middle: [], bottom: [] };
  if (!last) {
    ROWS.forEach((row) => { rows[row] = player.final[row].slice(); });
    return rows;
  }
  player.streets.slice(0, street).forEach((cards) => cards.forEach((placed) => {
    if (rows[placed.row]) rows[placed.row].push(placed.card);
  }));
  return rows;
}

function gradeLine(grade) {
  const box = el("div", "grade" + (grade.mistake ? " mistake" : ""));
  const head = el("div", "grade-head");
  head.appendChild(el("span", "grade-title", `Graded street ${grade.street}`));
  const loss = grade.loss === null ? "\u2013" : grade.loss.toFixed(2);
  const spread = grade.exact ? "exact" : (grade.se === null ? "" : `\u00b1 ${grade.se.toFixed(2)}`);
  head.appendChild(el("span", "grade-loss",
    `gave up ${loss}${spread ? " " + spread : ""} points` + (grade.mistake ? " \u00b7 a mistake" : "")
    + (grade.uncertain ? " \u00b7 uncertain" : "")));
  box.appendChild(head);
  box.appendChild(el("div", "grade-play", `played: ${grade.chosen}`));
  if (grade.best !== grade.chosen) box.appendChild(el("div", "grade-play best", `best: ${grade.best}`));
  if (grade.kind) box.appendChild(el("div", "grade-note", grade.kind));
  if (grade.bot) {
    const gap = grade.gap === null ? "" : ` (would have kept ${grade.gap.toFixed(2)} points more)`;
    box.appendChild(el("div", "grade-note", `the grader's bot: ${grade.bot}${gap}`));
  }
  return box;
}

export default function (component) {
  const { data, parentElement } = component;
  if (!data) return;
  let me = instances.get(parentElement);
  if (!me || me.hand !== data.hand.key) {
    me = { hand: data.hand.key, street: data.street };
    instances.set(parentElement, me);
  }
  me.data = data;

  function step(street) {
    const last = me.data.last_street;
    me.street = Math.max(1, Math.min(last, street));
    render();
  }

  function render() {
    const d = me.data;
    const last = d.last_street;
    let root = parentElement.querySelector(".hand-replay");
    if (!root) {
      root = el("div", "hand-replay");
      root.tabIndex = 0;
      root.addEventListener("keydown", (event) => {
        if (event.key === "ArrowLeft") { step(me.street - 1); event.preventDefault(); }
        if (event.key === "ArrowRight") { step(me.street + 1); event.preventDefault(); }
      });
      parentElement.appendChild(root);
    }
    root.replaceChildren();
    root.dataset.street = String(me.street);

    if (last > 1) {
      const bar = el("div", "streets");
      bar.appendChild(el("span", "streets-label", "Street"));
      const back = el("button", "nav", "\u2039");
      back.type = "button";
      back.setAttribute("aria-label", "Previous street");
      back.disabled = me.street <= 1;
      back.onclick = () => step(me.street - 1);
      bar.appendChild(back);
      for (let s = 1; s <= last; s++) {
        const button = el("button", "street", String(s));
        button.type = "button";
        button.dataset.street = String(s);
        if (s === me.street) button.classList.add("active");
        if (d.graded_streets.includes(s)) {
          button.classList.add("graded");
          button.title = `Street ${s}: a graded decision`;
        }
        button.setAttribute("aria-pressed", s === me.street ? "true" : "false");
        button.onclick = () => step(s);
        bar.appendChild(button);
      }
      const next = el("button", "nav", "\u203a");
      next.type = "button";
      next.setAttribute("aria-label", "Next street");
      next.disabled = me.street >= last;
      next.onclick = () => step(me.street + 1);
      bar.appendChild(next);
      root.appendChild(bar);
    } else if (last === 0) {
      root.appendChild(el("div", "muted", "This source recorded only the final boards, not the streets."));
    }

    const grid = el("div", "players");
    d.players.forEach((player) => {
      const card = el("div", "player");
      const title = el("div", "player-name");
      title.appendChild(el("strong", null, player.name));
      if (player.badges.length) title.appendChild(el("span", "badges", " \u00b7 " + player.badges.join(", ")));
      card.appendChild(title);
      const rows = boardAt(player, me.street, last);
      ROWS.forEach((row) => {
        const line = el("div", "row");
        line.dataset.row = row;
        line.appendChild(el("span", "label", row));
        rows[row].forEach((token) => line.appendChild(chip(token)));
        for (let i = rows[row].length; i < SIZES[row]; i++) line.appendChild(el("span", "chip slot", "\u00b7"));
        card.appendChild(line);
      });
      if (last) {
        const here = player.streets[me.street - 1] || [];
        const placed = here.filter((p) => p.row !== "discard");
        const thrown = here.filter((p) => p.row === "discard");
        if (placed.length || thrown.length) {
          const line = el("div", "placed");
          line.appendChild(el("span", "muted", `street ${me.street}: placed `));
          placed.forEach((p) => { const c = chip(p.card); c.title = `${p.card} \u2192 ${p.row}`; line.appendChild(c); });
          if (thrown.length) {
            line.appendChild(el("span", "muted", " discarded "));
            thrown.forEach((p) => line.appendChild(chip(p.card)));
          }
          card.appendChild(line);
        } else if (me.street > 1) {
          card.appendChild(el("div", "muted", "Nothing this street (a Fantasyland board is set at once)."));
        }
      }
      if (me.street === last || !last) {
        card.appendChild(el("div", player.foul ? "verdict foul" : "verdict", player.verdict));
        card.appendChild(el("div", "muted", player.result));
      }
      d.grades.filter((g) => g.player_index === player.index && g.street === me.street)
        .forEach((g) => card.appendChild(gradeLine(g)));
      grid.appendChild(card);
    });
    root.appendChild(grid);
    const drawn = d.grades.filter((g) => g.street === me.street).length;
    if (d.grades.length) {
      root.appendChild(el("div", "muted footnote", drawn
        ? "Graded: the play made against the best play the grader found, and the points it gave up."
        : `No graded decision on street ${me.street}; graded streets are marked.`));
    }
  }

  render();
}
