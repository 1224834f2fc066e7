// The Gateway card: recent panels newest first, each seat a chip coloured by its status and
// verdict (grey for seats the panel skipped), and the verdicts owed. It polls a cheap head
// (`/api/panels/head`) every second and fetches the first page again only when that changed,
// so a new panel shows within about a second without a reload.

import { api } from "./api.js";
import { $, append, h, seconds, when } from "./dom.js";

const POLL_MS = 1000;
const state = { panels: new Map(), next: null, head: null, loaded: false, polling: false };
let onSeat = () => {};

export function startGateway(openSeat) {
  onSeat = openSeat;
  $("#panels").addEventListener("click", (event) => {
    const chip = event.target.closest("button.chip[data-call]");
    if (chip) onSeat(chip.dataset.panel, chip.dataset.call);
  });
  $("#older").addEventListener("click", older);
  document.addEventListener("bench:verdict", (event) => refreshPanel(event.detail.panel));
  start();
}

async function start() {
  try {
    state.head = JSON.stringify(await api("GET", "/api/panels/head"));
    await loadFirst();
  } catch (error) {
    showProblem(error);
  }
  setInterval(poll, POLL_MS);
}

async function poll() {
  if (document.hidden || state.polling) return;
  state.polling = true;
  try {
    const head = JSON.stringify(await api("GET", "/api/panels/head"));
    if (head !== state.head) {
      state.head = head;
      await loadFirst();
    }
  } catch {
    // A restart or a dropped connection: the next tick tries again.
  } finally {
    state.polling = false;
  }
}

async function loadFirst() {
  const page = await api("GET", "/api/panels?limit=20");
  const fresh = page.data.filter((p) => state.loaded && !state.panels.has(p.id)).map((p) => p.id);
  for (const panel of page.data) state.panels.set(panel.id, panel);
  if (!state.loaded) state.next = page.next;
  state.loaded = true;
  setOwed(page.owed);
  render(new Set(fresh));
}

async function older() {
  if (state.next === null) return;
  const page = await api("GET", `/api/panels?limit=20&before=${encodeURIComponent(state.next)}`);
  for (const panel of page.data) state.panels.set(panel.id, panel);
  state.next = page.next;
  setOwed(page.owed);
  render(new Set());
}

async function refreshPanel(id) {
  try {
    const full = await api("GET", `/api/panels/${encodeURIComponent(id)}`);
    if (state.panels.has(id)) state.panels.set(id, { ...state.panels.get(id), seats: full.seats, owed: full.owed });
    await loadFirst();
  } catch (error) {
    showProblem(error);
  }
}

function setOwed(count) {
  const badge = $("#owed-count");
  badge.textContent = String(count);
  badge.classList.toggle("is-zero", count === 0);
  $("#owed-label").textContent = count === 1 ? "verdict owed" : "verdicts owed";
}

function showProblem(error) {
  const list = $("#panels");
  list.replaceChildren(h("li", { class: "empty" }, `Could not load panels: ${error.message}`));
}

function render(fresh) {
  const list = $("#panels");
  const panels = [...state.panels.values()].sort((a, b) => b.created - a.created);
  if (!panels.length) {
    list.replaceChildren(
      h("li", { class: "empty", id: "panels-empty" }, "No panels yet. Send one: model bench/<name> through any OpenAI client."),
    );
  } else {
    list.replaceChildren(...panels.map((p) => panelItem(p, fresh.has(p.id))));
  }
  $("#older").hidden = state.next === null;
}

function panelItem(panel, isNew) {
  const head = h(
    "div",
    { class: "panel-head" },
    h("time", { datetime: new Date(panel.created * 1000).toISOString() }, when(panel.created)),
    h("span", { class: "collection mono" }, `bench/${panel.collection}`, panel.reply === "merged" ? ":merged" : ""),
    h("span", {}, "shape ", h("strong", { class: "shape" }, panel.shape), ` · ${panel.shape_by}`),
    h("span", { class: "asked-by" }, "Asked by ", h("strong", {}, panel.caller)),
    h("span", {}, seconds(panel.seconds)),
    panel.owed ? h("span", { class: "panel-owed" }, `${panel.owed} owed`) : null,
  );
  const chips = h("div", { class: "chips" });
  for (const seat of panel.seats) chips.append(seatChip(panel, seat));
  for (const skipped of panel.skipped || []) chips.append(skippedChip(skipped));
  return h(
    "li",
    { class: `panel${isNew ? " is-new" : ""}`, dataset: { panelId: panel.id } },
    head,
    chips,
    panel.note ? h("p", { class: "panel-note" }, panel.note) : null,
    h("span", { class: "sr-only" }, `panel ${panel.id}`),
  );
}

const NOT_CALLED = ["paced", "cooling", "retired"];

function seatLabel(call) {
  return call.slice(call.lastIndexOf(".") + 1);
}

function seatChip(panel, seat) {
  const verdict = seat.verdict;
  // Paced, cooling and retired seats were not called: nothing to judge, nothing failed.
  const notCalled = NOT_CALLED.includes(seat.status);
  const judgeable = seat.status === "ok" || seat.status === "empty";
  const classes = ["chip", `status-${seat.status}`];
  let mark = "?";
  let verdictText = "no verdict yet";
  if (notCalled) {
    mark = "–";
    verdictText = "not called";
  } else if (verdict) {
    classes.push(verdict.useful ? "is-useful" : "is-not-useful");
    mark = verdict.useful ? "✓" : "✗";
    verdictText = verdict.useful ? "useful" : "not useful";
  } else if (judgeable) {
    classes.push("is-owed");
    mark = seat.status === "empty" ? "∅" : "?";
    verdictText = "verdict owed";
  } else if (seat.status === "retired") {
    mark = "–";
    verdictText = "retired, not asked";
  } else {
    mark = "!";
    verdictText = "failed";
  }
  const label = `${seatLabel(seat.call)} ${seat.alias}: ${seat.status}, ${seconds(seat.seconds)}, ${verdictText}`;
  return h(
    "button",
    {
      type: "button",
      class: classes.join(" "),
      title: seat.error ? `${label}\n${seat.error}` : label,
      "aria-label": label,
      dataset: { call: seat.call, panel: panel.id, status: seat.status, verdict: verdict ? String(verdict.useful) : "none" },
    },
    h("span", { class: "mark", "aria-hidden": "true" }, mark),
    h("span", { class: "seat" }, seatLabel(seat.call)),
    h("span", { class: "alias" }, seat.alias),
  );
}

function skippedChip(skipped) {
  const label = `${skipped.seat} ${skipped.alias}: skipped, ${skipped.why}`;
  return append(
    h("span", { class: "chip is-skipped", title: label, "aria-label": label, tabindex: "0" }),
    [h("span", { class: "mark", "aria-hidden": "true" }, "–"), h("span", { class: "seat" }, skipped.seat), h("span", { class: "alias" }, skipped.alias)],
  );
}
