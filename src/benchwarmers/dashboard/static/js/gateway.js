// The Gateway card: recent panels newest first, each seat a chip coloured by its status and
// verdict (grey for seats the panel skipped), and the verdicts owed. It polls a cheap head
// (`/api/panels/head`) every second and fetches the first page again only when that changed,
// so a new panel shows within about a second without a reload.

import { api } from "./api.js";
import { $, append, h, seconds, utcText, when } from "./dom.js";

const POLL_MS = 1000;
const state = { panels: new Map(), next: null, head: null, loaded: false, polling: false, query: "", running: [] };
let onSeat = () => {};

export function startGateway(openSeat) {
  onSeat = openSeat;
  $("#panels").addEventListener("click", (event) => {
    const chip = event.target.closest("button.chip[data-call]");
    if (chip) onSeat(chip.dataset.panel, chip.dataset.call);
  });
  $("#older").addEventListener("click", older);
  document.addEventListener("bench:verdict", (event) => refreshPanel(event.detail.panel));
  const filters = $("#log-filters");
  if (filters) {
    // The filter lives in the query string (`/?owed=1&model=…`): a reload or a shared link shows the
    // same panels, and back / forward step through the filters used.
    const apply = (push, hash = location.hash) => {
      state.query = queryOf(filters);
      if (push) {
        const url = `${location.pathname}${state.query ? `?${state.query}` : ""}${hash}`;
        if (url !== location.pathname + location.search + location.hash) history.pushState(null, "", url);
      }
      state.panels.clear();
      state.loaded = false;
      loadFirst().catch(showProblem);
    };
    fill(filters, location.search);
    state.query = queryOf(filters);
    if (state.query) $("#filter-box").open = true;
    filters.addEventListener("submit", (event) => {
      event.preventDefault();
      apply(true);
    });
    filters.addEventListener("change", () => apply(true));
    window.addEventListener("popstate", () => {
      fill(filters, location.search);
      apply(false);
    });
    // The owed badge links to the log filtered to owed seats: here, that filter without a reload.
    $("#owed-link").addEventListener("click", (event) => {
      event.preventDefault();
      const link = new URL(event.currentTarget.href);
      fill(filters, link.search);
      $("#filter-box").open = true;
      apply(true, link.hash);
    });
  }
  start();
}

// The form's filters as a query string: only the fields that say something.
function queryOf(filters) {
  const params = new URLSearchParams();
  for (const [name, value] of new FormData(filters)) if (String(value).trim()) params.set(name, String(value).trim());
  return params.toString();
}

// The form as a query string says (a field it leaves out is cleared).
function fill(filters, search) {
  const params = new URLSearchParams(search);
  for (const field of filters.elements) {
    if (!field.name) continue;
    if (field.type === "checkbox") field.checked = params.get(field.name) === field.value;
    else field.value = params.get(field.name) || "";
  }
}

function withQuery(path) {
  return state.query ? `${path}&${state.query}` : path;
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
  const page = await api("GET", withQuery("/api/panels?limit=20"));
  state.running = page.running || [];
  setCount(page.count);
  const fresh = page.data.filter((p) => state.loaded && !state.panels.has(p.id)).map((p) => p.id);
  for (const panel of page.data) state.panels.set(panel.id, panel);
  if (!state.loaded) state.next = page.next;
  state.loaded = true;
  setOwed(page.owed);
  render(new Set(fresh));
}

async function older() {
  if (state.next === null) return;
  const page = await api("GET", withQuery(`/api/panels?limit=20&before=${encodeURIComponent(state.next)}`));
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

function setCount(count) {
  const shown = $("#log-count");
  if (shown) shown.textContent = `${count} panel${count === 1 ? "" : "s"}${state.query ? " match" : ""}`;
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

// What a re-render must not take from the user: open prompts and the focused chip or link.
function remember(list) {
  const open = new Set([...list.querySelectorAll("li.panel details[open]")].map((d) => d.closest("li").dataset.panelId));
  const active = document.activeElement;
  const focus = active && list.contains(active)
    ? active.dataset.call ? `[data-call="${CSS.escape(active.dataset.call)}"]` : active.getAttribute("href") ? `a[href="${CSS.escape(active.getAttribute("href"))}"]${active.classList.contains("button") ? ".button" : ":not(.button)"}` : null
    : null;
  return () => {
    for (const id of open) {
      const details = list.querySelector(`li.panel[data-panel-id="${CSS.escape(id)}"] details`);
      if (details) details.open = true;
    }
    const again = focus && list.querySelector(focus);
    if (again) again.focus({ preventScroll: true });
  };
}

function render(fresh) {
  const list = $("#panels");
  const restore = remember(list);
  const panels = [...state.panels.values()].sort((a, b) => b.created - a.created);
  const running = state.running.filter((r) => !state.panels.has(r.id)).map(runningItem);
  if (!panels.length && !running.length) {
    list.replaceChildren(
      h("li", { class: "empty", id: "panels-empty" }, state.query ? "No panel matches these filters." : "No panels yet. Send one: model bench/<name> through any OpenAI client, or the Playground."),
    );
  } else {
    list.replaceChildren(...running, ...panels.map((p) => panelItem(p, fresh.has(p.id))));
  }
  $("#older").hidden = state.next === null;
  restore();
}

function runningItem(run) {
  return h(
    "li",
    { class: "panel is-running", dataset: { panelId: run.id } },
    h("div", { class: "panel-head" },
      h("span", { class: "spinner", "aria-hidden": "true" }),
      h("span", { class: "collection mono" }, `bench/${run.collection}`),
      h("span", {}, "seats running…"),
      h("span", { class: "asked-by" }, "Asked by ", h("strong", {}, run.caller))),
    promptBlock(run.prompt),
  );
}

// The prompt's first lines, all of it a click away: 40 panels of one collection are told apart by it.
function promptBlock(prompt) {
  if (!prompt) return null;
  const lines = prompt.split("\n");
  const short = lines.slice(0, 2).join("\n");
  if (lines.length <= 2 && prompt.length <= 220) return h("p", { class: "panel-prompt" }, prompt);
  return h("details", { class: "panel-prompt" },
    h("summary", {}, short.length > 220 ? `${short.slice(0, 219)}…` : short),
    h("pre", {}, prompt));
}

function panelItem(panel, isNew) {
  const head = h(
    "div",
    { class: "panel-head" },
    h("time", { datetime: new Date(panel.created * 1000).toISOString(), title: utcText(new Date(panel.created * 1000)) }, when(panel.created)),
    h("a", { class: "collection mono", href: `/panels/${encodeURIComponent(panel.id)}`, "aria-label": `Judge panel ${panel.id} of bench/${panel.collection}` }, `bench/${panel.collection}`, panel.reply === "merged" ? ":merged" : ""),
    h("span", {}, "shape ", h("strong", { class: "shape" }, panel.shape), ` · ${panel.shape_by}`),
    h("span", { class: "asked-by" }, "Asked by ", h("strong", {}, panel.caller)),
    h("span", {}, seconds(panel.seconds)),
    panel.owed ? h("span", { class: "panel-owed" }, `${panel.owed} owed`) : null,
    h("a", { class: "button small-button", href: `/panels/${encodeURIComponent(panel.id)}` }, panel.owed ? "Judge" : "Open"),
  );
  const chips = h("div", { class: "chips" });
  for (const seat of panel.seats) chips.append(seatChip(panel, seat));
  for (const skipped of panel.skipped || []) chips.append(skippedChip(skipped));
  return h(
    "li",
    { class: `panel${isNew ? " is-new" : ""}`, dataset: { panelId: panel.id } },
    head,
    promptBlock(panel.prompt),
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
  } else if (seat.status === "empty") {
    classes.push("is-empty-answer");
    mark = "∅";
    verdictText = "empty answer, no verdict owed";
  } else if (judgeable) {
    classes.push("is-owed");
    mark = "?";
    verdictText = "verdict owed";
  } else if (seat.status === "retired") {
    mark = "–";
    verdictText = "retired, not asked";
  } else {
    mark = "!";
    verdictText = "failed";
  }
  const cause = seat.status === "error" ? ` (${seat.error || seat.error_kind || "no reason given"})` : "";
  const label = `${seatLabel(seat.call)} ${seat.alias}: ${seat.status}${cause}, ${seconds(seat.seconds)}, ${verdictText}`;
  return h(
    "button",
    {
      type: "button",
      class: classes.join(" "),
      title: label,
      "aria-label": label,
      dataset: { call: seat.call, panel: panel.id, status: seat.status, verdict: verdict ? String(verdict.useful) : "none" },
    },
    h("span", { class: "mark", "aria-hidden": "true" }, mark),
    h("span", { class: "seat" }, seatLabel(seat.call)),
    h("span", { class: "alias" }, seat.alias),
    // The failure's cause as text on the chip, not only in a tooltip (touch screens have no hover).
    seat.status === "error" ? h("span", { class: "cause" }, failureCause(seat)) : null,
  );
}

function failureCause(seat) {
  const status = /\((\d{3})\)/.exec(seat.error || "") || /\b(4\d\d|5\d\d)\b/.exec(seat.error || "");
  return [seat.error_kind || "error", status ? status[1] : null].filter(Boolean).join(" ");
}

function skippedChip(skipped) {
  const label = `${skipped.seat} ${skipped.alias}: skipped, ${skipped.why}`;
  return append(
    h("span", { class: "chip is-skipped", title: label, "aria-label": label, tabindex: "0" }),
    [h("span", { class: "mark", "aria-hidden": "true" }, "–"), h("span", { class: "seat" }, skipped.seat), h("span", { class: "alias" }, skipped.alias)],
  );
}
