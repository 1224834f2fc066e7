// The judging view: a panel's prompt above every seat's answer side by side (stacked on a phone), each
// with one-click Useful / Not useful, an optional note and claims, saved without leaving the page.
// Keys (outside text fields): 1–9 pick a seat, u / n judge the picked seat and move to the next owed one,
// j / k the older / newer panel, o the next panel that owes a verdict, ? the list of keys.
// Used by the panel page and the playground; verdicts go where the page says (`data-verdict-url`).

import { api } from "./api.js";
import { $, $$, append, h, seatCut, seconds, utcText, when } from "./dom.js";
import { clearErrors, lines, showError, text } from "./forms.js";
import { renderMarkdown } from "./markdown.js";

const NOT_CALLED = { paced: "not called: no slot under a known rate limit", cooling: "not called: cooling after a 429", retired: "not asked: retired for failing" };
// Keys typed while a verdict is saving wait their turn (in order): a fast judge loses none.
const state = { panel: null, picked: -1, root: null, onNavigate: null, queue: Promise.resolve() };

function later(action) {
  state.queue = state.queue.then(action).catch(() => {});
}

export function promptOf(request) {
  const messages = (request && request.messages) || [];
  return messages
    .map((m) => {
      const content = Array.isArray(m.content)
        ? m.content.map((part) => (part.type === "text" ? part.text : "[image]")).join("\n")
        : String(m.content ?? "");
      return messages.length > 1 ? `${m.role}: ${content}` : content;
    })
    .join("\n\n");
}

const owes = (seat) => seat.status === "ok" && !seat.verdict;
const judgeable = (seat) => seat.status === "ok" || seat.status === "empty";

// Draw `panel` (as /api/panels/{id} returns it) into `root`; `onNavigate(direction)` handles j/k/o.
export function showPanel(root, panel, onNavigate = null) {
  state.panel = panel;
  state.root = root;
  state.onNavigate = onNavigate;
  const owed = panel.seats.filter(owes).length;
  const head = h(
    "header",
    { class: "judge-head" },
    h("div", {},
      h("h1", { class: "mono", id: "judge-title" }, `bench/${panel.collection}`),
      h("p", { class: "muted small" },
        h("time", { datetime: new Date(panel.created * 1000).toISOString(), title: utcText(new Date(panel.created * 1000)) }, when(panel.created)),
        ` · shape ${panel.shape} (${panel.shape_by}) · asked by ${panel.caller}`,
        panel.seconds ? ` · ${seconds(panel.seconds)}` : "",
      ),
    ),
    h("p", { class: "owed", id: "judge-owed", "aria-live": "polite" }, owedText(owed)),
  );
  const prompt = h("section", { class: "judge-prompt", "aria-label": "Prompt" },
    h("h2", { class: "sr-only" }, "Prompt"),
    h("pre", { id: "judge-prompt" }, promptOf(panel.request)));
  const grid = h("div", { class: "seat-grid", id: "seat-grid", style: null });
  grid.dataset.count = String(Math.min(panel.seats.length, 4));
  panel.seats.forEach((seat, i) => grid.append(seatCard(seat, i)));
  const skipped = (panel.skipped || []).map((s) => `${s.seat} ${s.alias} (${s.why})`);
  const note = skipped.length ? h("p", { class: "muted small", id: "judge-skipped" }, `Skipped: ${skipped.join("; ")}`) : null;
  // Through append, which drops the missing note: replaceChildren would write a null as the text "null".
  root.replaceChildren();
  append(root, [head, prompt, grid, note, keysHelp(onNavigate !== null)]);
  const first = panel.seats.findIndex(owes);
  pick(first >= 0 ? first : 0, false);
}

function owedText(owed) {
  return owed ? `${owed} verdict${owed === 1 ? "" : "s"} owed` : "every answer judged";
}

function seatCard(seat, index) {
  const label = `${index + 1}`;
  const status = h("span", { class: `seat-status status-${seat.status}` }, seat.status);
  const card = h(
    "article",
    {
      class: `seat-card state-${seat.status}`,
      tabindex: "-1",
      "aria-labelledby": `seat-${index}-title`,
      dataset: { call: seat.call, index: String(index), status: seat.status },
    },
    h("header", { class: "seat-card-head" },
      h("kbd", { class: "seat-key", "aria-hidden": "true" }, label),
      h("div", {},
        h("h2", { id: `seat-${index}-title`, class: "mono seat-alias" }, seat.alias),
        h("p", { class: "muted small" }, `${seat.stands_in_for ? `stand-in for ${seat.stands_in_for}` : seat.seat} · `, status, seat.seconds ? ` · ${seconds(seat.seconds)}` : ""),
      ),
      h("span", { class: "verdict-state", "data-verdict-state": "" }),
    ),
  );
  if (seat.status === "error") {
    card.append(h("p", { class: "seat-error" }, `Failed (${seat.error_kind || "error"}): ${seat.error || "no reason given"}`),
      h("p", { class: "muted small" }, "A failed seat needs no verdict: its failure already counts against the model."));
  } else if (NOT_CALLED[seat.status]) {
    card.append(h("p", { class: "muted" }, `${NOT_CALLED[seat.status]}${seat.error ? `: ${seat.error}` : ""}`));
  } else {
    const answer = h("div", { class: `answer markdown${seat.answer ? "" : " is-empty"}`, "aria-label": `Answer of ${seat.alias}` });
    answer.append(seat.answer ? renderMarkdown(seat.answer) : document.createTextNode("(empty answer: not owed, judge it not useful if you like)"));
    card.append(answer);
    if (seatCut(seat)) card.append(h("p", { class: "muted small seat-cut" }, seatCut(seat)));
    card.append(verdictForm(seat, index));
  }
  paint(card, seat);
  return card;
}

function verdictForm(seat, index) {
  const v = seat.verdict;
  const form = h("form", { class: "verdict-bar", novalidate: true, dataset: { index: String(index) } },
    h("div", { class: "verdict-buttons", role: "group", "aria-label": `Verdict on ${seat.alias}` },
      h("button", { type: "button", class: "button good", dataset: { useful: "true" }, "aria-pressed": String(v?.useful === true) }, "Useful ", h("kbd", {}, "u")),
      h("button", { type: "button", class: "button bad", dataset: { useful: "false" }, "aria-pressed": String(v?.useful === false) }, "Not useful ", h("kbd", {}, "n")),
    ),
    h("details", { class: "claims" },
      h("summary", {}, "Note and claims"),
      h("label", {}, "Note", h("textarea", { name: "note", rows: "2" })),
      h("label", {}, "Real claims ", h("span", { class: "hint" }, "one a line"), h("textarea", { name: "real", rows: "2" })),
      h("label", {}, "False claims ", h("span", { class: "hint" }, "one a line"), h("textarea", { name: "false", rows: "2" })),
      h("p", { class: "muted small" }, "Saved with the next Useful / Not useful."),
    ),
    h("p", { class: "form-error", "data-error-for": "", role: "alert", hidden: true }),
  );
  if (v) {
    form.elements.namedItem("note").value = v.note || "";
    form.elements.namedItem("real").value = (v.real || []).join("\n");
    form.elements.namedItem("false").value = (v.false || []).join("\n");
  }
  form.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-useful]");
    if (button) later(() => judge(index, button.dataset.useful === "true"));
  });
  form.addEventListener("submit", (event) => event.preventDefault());
  return form;
}

function paint(card, seat) {
  const badge = $("[data-verdict-state]", card);
  card.classList.toggle("is-owed", owes(seat));
  card.classList.toggle("is-useful", seat.verdict?.useful === true);
  card.classList.toggle("is-not-useful", seat.verdict?.useful === false);
  badge.textContent = seat.verdict ? (seat.verdict.useful ? "✓ useful" : "✗ not useful") : owes(seat) ? "verdict owed" : "";
  for (const button of $$("button[data-useful]", card)) {
    button.setAttribute("aria-pressed", String(seat.verdict ? String(seat.verdict.useful) === button.dataset.useful : false));
  }
}

function pick(index, focus = true) {
  const cards = $$(".seat-card", state.root);
  if (!cards.length) return;
  state.picked = Math.max(0, Math.min(index, cards.length - 1));
  cards.forEach((card, i) => card.classList.toggle("is-picked", i === state.picked));
  if (focus) {
    cards[state.picked].focus({ preventScroll: true });
    cards[state.picked].scrollIntoView({ block: "nearest" });
  }
}

async function judge(index, useful) {
  const seat = state.panel.seats[index];
  if (!seat || !judgeable(seat)) return;
  const card = $$(".seat-card", state.root)[index];
  const form = $("form.verdict-bar", card);
  clearErrors(form);
  try {
    const body = { call: seat.call, useful, note: text(form, "note"), real: lines(form, "real"), false: lines(form, "false") };
    await api("POST", document.body.dataset.verdictUrl, body);
    seat.verdict = { ...body, caller: seat.verdict?.caller || "you" };
    paint(card, seat);
    $("#judge-owed").textContent = owedText(state.panel.seats.filter(owes).length);
    document.dispatchEvent(new CustomEvent("bench:verdict", { detail: { panel: state.panel.id, call: seat.call } }));
    // On to the next seat still owed (after this one, then from the start); else stay here.
    const order = [...state.panel.seats.keys()].map((k) => (index + 1 + k) % state.panel.seats.length);
    const next = order.find((k) => owes(state.panel.seats[k]));
    pick(next === undefined ? index : next);
  } catch (error) {
    showError(form, error);
  }
}

function keysHelp(navigates) {
  const keys = [["1–9", "pick a seat"], ["u", "useful"], ["n", "not useful"]];
  if (navigates) keys.push(["j / k", "older / newer panel"], ["o", "next panel that owes a verdict"]);
  return h("details", { class: "keys-help", id: "keys-help" },
    h("summary", {}, "Keyboard shortcuts ", h("kbd", {}, "?")),
    h("dl", {}, keys.map(([key, what]) => [h("dt", {}, h("kbd", {}, key)), h("dd", {}, what)])));
}

export function startKeys() {
  document.addEventListener("keydown", (event) => {
    if (!state.panel || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target instanceof HTMLElement && target.closest("input, textarea, select, [contenteditable]")) return;
    if (document.querySelector("dialog[open]")) return;
    const key = event.key;
    let handled = true;
    if (/^[1-9]$/.test(key) && Number(key) <= state.panel.seats.length) later(() => pick(Number(key) - 1));
    else if (key === "u" || key === "n") later(() => judge(state.picked, key === "u"));
    else if ((key === "j" || key === "k" || key === "o") && state.onNavigate) state.onNavigate(key);
    else if (key === "?") $("#keys-help").open = !$("#keys-help").open;
    else handled = false;
    if (handled) event.preventDefault();
  });
}
