// The playground: ask a collection from the browser (text and images), watch the seats run, then judge
// them in the same view as a logged panel. It asks through the gateway like any caller: as `local` on an
// open bench, or with a gateway key the user pastes when keys are required.

import { ApiError, api } from "../api.js";
import { $, h } from "../dom.js";
import { submitting } from "../forms.js";
import { showPanel, startKeys } from "../judge.js";

const KEY = "bw-playground-key";

export function start() {
  const form = $("#ask-form");
  if (!form) return;
  startKeys();
  const key = $("#ask-key");
  if (key) key.value = sessionStorage.getItem(KEY) || "";
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submitting(form, () => ask(form));
  });
  $("#ask-prompt").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });
}

function readImage(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(new Error(`could not read ${file.name}`));
    reader.readAsDataURL(file);
  });
}

async function ask(form) {
  const prompt = form.elements.namedItem("prompt").value;
  if (!prompt.trim()) throw Object.assign(new Error("Write a prompt first."), { param: "messages" });
  const select = $("#ask-model");
  const images = await Promise.all([...$("#ask-images").files].map(readImage));
  const content = images.length
    ? [{ type: "text", text: prompt }, ...images.map((url) => ({ type: "image_url", image_url: { url } }))]
    : prompt;
  const body = { model: select.value, messages: [{ role: "user", content }] };
  const root = $("#judge");
  const members = select.selectedOptions[0].dataset.members.split(",").filter(Boolean);
  running(root, select.value, members, Number(select.selectedOptions[0].dataset.explorers || 0));
  const headers = { "content-type": "application/json", accept: "application/json" };
  const key = $("#ask-key");
  if (key && key.value.trim()) {
    headers.authorization = `Bearer ${key.value.trim()}`;
    sessionStorage.setItem(KEY, key.value.trim());
  }
  let reply;
  try {
    const response = await fetch("/v1/chat/completions", { method: "POST", headers, body: JSON.stringify(body), credentials: "same-origin" });
    reply = await response.json().catch(() => null);
    if (!response.ok) throw new ApiError(response.status, reply);
  } catch (error) {
    root.hidden = true;
    clearInterval(root._timer);
    throw error;
  }
  clearInterval(root._timer);
  const panel = await api("GET", `/api/panels/${encodeURIComponent(reply.bench.panel)}`);
  showPanel(root, panel);
  const link = h("p", { class: "small" }, h("a", { href: `/panels/${encodeURIComponent(panel.id)}` }, "Open this panel in the log view"));
  root.append(link);
  const first = root.querySelector(".seat-card.is-picked");
  if (first) first.focus({ preventScroll: true });
}

// While the seats run: one card per member (and the explorer seats), with the seconds ticking.
function running(root, model, members, explorers) {
  const started = Date.now();
  const clock = h("span", { id: "running-clock" }, "0 s");
  const cards = [...members, ...Array.from({ length: explorers }, (_, i) => `explorer ${i + 1} (the bench picks)`)].map((name) =>
    h("article", { class: "seat-card is-running" }, h("header", { class: "seat-card-head" }, h("h2", { class: "mono seat-alias" }, name)),
      h("p", { class: "muted" }, h("span", { class: "spinner", "aria-hidden": "true" }), " running…")),
  );
  const grid = h("div", { class: "seat-grid", id: "seat-grid" }, cards);
  grid.dataset.count = String(Math.min(cards.length, 4));
  root.replaceChildren(h("header", { class: "judge-head" }, h("h2", { class: "mono" }, model), h("p", { class: "muted", id: "running" }, "Seats running · ", clock)), grid);
  root.hidden = false;
  clearInterval(root._timer);
  root._timer = setInterval(() => (clock.textContent = `${Math.round((Date.now() - started) / 1000)} s`), 500);
}
