// The collection form: create or edit, members as removable chips, the server's validation
// (the same rules as `benchwarmers collection add`) shown beside the field it is about.

import { api } from "./api.js";
import { $, h } from "./dom.js";
import { number, onClick, reloadWith, submitting, text } from "./forms.js";

let members = [];
let editing = null;

export function startCollectionForm() {
  const data = JSON.parse($("#collection-data").textContent);
  const byName = new Map(data.map((c) => [c.name, c]));
  const form = $("#collection-form");
  $("#new-collection").addEventListener("click", () => open(null));
  for (const step of document.querySelectorAll("[data-new-collection]")) step.addEventListener("click", () => open(null));
  onClick("[data-edit]", async (button) => open(byName.get(button.dataset.edit)));
  onClick("[data-delete]", async (button) => {
    const name = button.dataset.delete;
    if (!window.confirm(`Delete bench/${name}? Its recorded panels stay.`)) return;
    await api("DELETE", `/api/collections/${encodeURIComponent(name)}`);
    reloadWith(`Deleted bench/${name}`);
  });
  $("#member-add").addEventListener("click", addTyped);
  $("#member-input").addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      addTyped();
    }
  });
  $("#member-list").addEventListener("click", (event) => {
    const remove = event.target.closest("button[data-member]");
    if (remove) {
      members = members.filter((m) => m !== remove.dataset.member);
      drawMembers();
    }
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submitting(form, save);
  });
}

function open(collection) {
  const form = $("#collection-form");
  form.reset();
  for (const slot of form.querySelectorAll("[data-error-for]")) slot.hidden = true;
  editing = collection ? collection.name : null;
  $("#collection-form-title").textContent = collection ? `Edit bench/${collection.name}` : "New collection";
  const name = form.elements.namedItem("name");
  name.readOnly = Boolean(collection);
  if (collection) {
    name.value = collection.name;
    form.elements.namedItem("description").value = collection.description || "";
    form.elements.namedItem("tags").value = (collection.tags || []).join(" ");
    form.elements.namedItem("require_tags").value = (collection.require_tags || []).join(" ");
    form.elements.namedItem("exclude_tags").value = (collection.exclude_tags || []).join(" ");
    form.elements.namedItem("shape").value = collection.shape || "";
    form.querySelector(`input[name="reply"][value="${collection.reply}"]`).checked = true;
    form.elements.namedItem("merger").value = collection.merger || "";
    form.elements.namedItem("max_explorers").value = collection.max_explorers ?? "";
    form.elements.namedItem("max_calls").value = collection.max_calls ?? "";
    form.elements.namedItem("daily_panels").value = collection.daily_panels ?? "";
    form.elements.namedItem("daily_tokens").value = collection.daily_tokens ?? "";
  }
  form.elements.namedItem("auto_swap").checked = Boolean(collection && collection.auto_swap);
  form.elements.namedItem("stand_ins").checked = Boolean(collection && collection.stand_ins);
  members = collection ? [...collection.members] : [];
  drawMembers();
  $("#collection-dialog").showModal();
  (collection ? form.elements.namedItem("description") : name).focus();
}

function addTyped() {
  const input = $("#member-input");
  for (const alias of input.value.split(/[\s,]+/).filter(Boolean)) {
    if (!members.includes(alias)) members.push(alias);
  }
  input.value = "";
  drawMembers();
}

function drawMembers() {
  $("#member-list").replaceChildren(
    ...members.map((alias) =>
      h(
        "li",
        { class: "mono" },
        alias,
        h("button", { type: "button", "data-member": alias, "aria-label": `Remove ${alias}`, title: "Remove" }, "✕"),
      ),
    ),
  );
}

async function save() {
  addTyped(); // an alias typed but not yet added counts
  const form = $("#collection-form");
  const body = {
    description: text(form, "description"),
    tags: text(form, "tags").split(/[\s,]+/).filter(Boolean),
    require_tags: text(form, "require_tags").split(/[\s,]+/).filter(Boolean),
    exclude_tags: text(form, "exclude_tags").split(/[\s,]+/).filter(Boolean),
    members,
    shape: text(form, "shape") || null,
    reply: form.querySelector('input[name="reply"]:checked').value,
    merger: text(form, "merger") || null,
    max_explorers: number(form, "max_explorers"),
    max_calls: number(form, "max_calls"),
    auto_swap: form.elements.namedItem("auto_swap").checked,
    daily_panels: number(form, "daily_panels"),
    daily_tokens: number(form, "daily_tokens"),
    stand_ins: form.elements.namedItem("stand_ins").checked,
  };
  if (editing) {
    await api("PUT", `/api/collections/${encodeURIComponent(editing)}`, body);
    reloadWith(`Saved bench/${editing}`);
  } else {
    const name = text(form, "name");
    await api("POST", "/api/collections", { name, ...body });
    reloadWith(`Created bench/${name}`);
  }
}
