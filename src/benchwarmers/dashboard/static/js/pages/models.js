// The roster: a filter, and the model popup (override the window and output cap, Vision / OCR,
// family, free, enabled), which sends only what was changed; Restore on a retired model's row.

import { aliasPath, api } from "../api.js";
import { $, $$, h } from "../dom.js";
import { flashNow, number, onClick, reloadWith, submitting, text } from "../forms.js";

let model = null;

export function start() {
  const filter = $("#model-filter");
  filter?.addEventListener("input", () => {
    const needle = filter.value.trim().toLowerCase();
    let shown = 0;
    for (const row of $$("#model-table tbody tr")) {
      row.hidden = needle !== "" && !row.dataset.search.toLowerCase().includes(needle);
      if (!row.hidden) shown++;
    }
    $("#model-count").textContent = `${shown} models`;
  });
  onClick("[data-model]", (button) => open(button.dataset.model));
  // The admin API `benchwarmers model restore` uses too; the reload shows its status back to ok.
  onClick("[data-restore]", async (button) => {
    const restored = await api("POST", `/api/models/${aliasPath(button.dataset.restore)}/restore`);
    reloadWith(`${restored.alias} restored (${restored.status}): members ask it again and it may sit explorer seats`);
  });
  const form = $("#model-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submitting(form, save);
  });
}

async function open(alias) {
  model = await api("GET", `/api/models/${aliasPath(alias)}`);
  const form = $("#model-form");
  form.reset();
  for (const slot of form.querySelectorAll("[data-error-for]")) slot.hidden = true;
  $("#model-dialog-title").textContent = model.alias;
  $("#model-dialog-status").textContent = `${model.endpoint} · ${model.model_id} · ${model.status}`;
  form.elements.namedItem("context").value = model.context_window ?? "";
  form.elements.namedItem("output").value = model.output_cap ?? "";
  form.elements.namedItem("family").value = model.family ?? "";
  form.elements.namedItem("vision").checked = model.vision === true;
  form.elements.namedItem("free").checked = model.free === true;
  form.elements.namedItem("enabled").checked = model.enabled;
  const rows = model.sources.map((f) => {
    const inUse = model.facts[f.fact]?.source === f.source;
    return h(
      "tr",
      { class: inUse ? "in-use" : "" },
      h("td", {}, f.fact),
      h("td", { class: "mono small" }, typeof f.value === "object" ? JSON.stringify(f.value) : String(f.value)),
      h("td", {}, f.source, inUse ? h("span", { class: "badge settled" }, "in use") : null),
      h("td", { class: "small" }, new Date(f.learned_at * 1000).toLocaleString()),
    );
  });
  $("#model-facts tbody").replaceChildren(
    ...(rows.length ? rows : [h("tr", {}, h("td", { colspan: "4", class: "muted" }, "No facts recorded."))]),
  );
  $("#model-dialog").showModal();
}

async function save() {
  const form = $("#model-form");
  const changes = {};
  const context = number(form, "context");
  if (context !== null && context !== model.context_window) changes.context = context;
  const output = number(form, "output");
  if (output !== null && output !== model.output_cap) changes.output = output;
  const family = text(form, "family");
  if (family && family !== model.family) changes.family = family;
  for (const name of ["vision", "free"]) {
    const ticked = form.elements.namedItem(name).checked;
    if (ticked !== (model[name] === true)) changes[name] = ticked;
  }
  const enabled = form.elements.namedItem("enabled").checked;
  if (enabled !== model.enabled) changes.enabled = enabled;
  if (!Object.keys(changes).length) {
    $("#model-dialog").close();
    flashNow(`Nothing changed on ${model.alias}`);
    return;
  }
  await api("PATCH", `/api/models/${aliasPath(model.alias)}`, changes);
  reloadWith(`Saved ${model.alias}: ${Object.keys(changes).join(", ")}`);
}
