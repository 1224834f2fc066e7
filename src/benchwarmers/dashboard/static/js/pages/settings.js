// Settings: theme, endpoints, gateway keys (a new key is shown once), gateway settings, shapes, decision
// models, alerts, notifications (settings-notify.js). Each change goes through the admin API and shows
// by reloading the page.

import { aliasPath, api } from "../api.js";
import { $, $$ } from "../dom.js";
import { flashNow, number, onClick, reloadWith, submitting, text } from "../forms.js";
import { applyTheme } from "../theme.js";
import { startNotify } from "./settings-notify.js";

function onSubmit(selector, action) {
  const form = $(selector);
  form?.addEventListener("submit", (event) => {
    event.preventDefault();
    submitting(form, () => action(form));
  });
}

export function start() {
  for (const radio of $$('#theme-picker input[name="theme"]')) {
    radio.addEventListener("change", () => {
      applyTheme(radio.value);
      flashNow(`Theme: ${radio.value}`);
    });
  }

  onSubmit("#endpoint-form", async (form) => {
    const name = text(form, "name");
    await api("POST", "/api/endpoints", {
      name,
      preset: text(form, "preset") || null,
      kind: text(form, "kind") || null,
      base_url: text(form, "base_url") || null,
      api_key_env: text(form, "api_key_env") || null,
      api_key: text(form, "api_key") || null,
      free_tier: form.elements.namedItem("free_tier").checked ? true : null,
    });
    reloadWith(`Added endpoint ${name}; refresh it to list its models`);
  });
  onClick("[data-refresh]", async (button) => {
    const name = button.dataset.refresh;
    button.textContent = "Refreshing…";
    try {
      const done = await api("POST", `/api/endpoints/${encodeURIComponent(name)}/refresh`);
      reloadWith(`${name}: ${done.listed} models listed, ${done.added} new, ${done.gone} gone`);
    } finally {
      button.textContent = "Refresh";
    }
  });
  onClick("[data-test-endpoint]", async (button) => {
    const name = button.dataset.testEndpoint;
    const shown = button.closest("tr").querySelector("[data-test-result]");
    shown.textContent = "Testing…";
    const found = await api("POST", `/api/endpoints/${encodeURIComponent(name)}/test`);
    shown.className = `small ${found.status === "ok" ? "status-ok" : "danger"}`;
    shown.textContent = `${found.status}: ${found.listing}${found.fix ? ` (${found.fix})` : ""}`;
  });
  onClick("[data-edit-endpoint]", async (button) => {
    const dialog = $("#endpoint-dialog");
    const form = $("#endpoint-edit-form");
    form.reset();
    form.elements.namedItem("name").value = button.dataset.editEndpoint;
    form.elements.namedItem("base_url").value = button.dataset.baseUrl;
    form.elements.namedItem("base_url").disabled = button.dataset.kind === "llm";
    form.elements.namedItem("api_key_env").value = button.dataset.keyEnv;
    form.elements.namedItem("free_tier").checked = button.dataset.freeTier === "true";
    $("#endpoint-dialog-title").textContent = `Edit endpoint ${button.dataset.editEndpoint}`;
    dialog.dataset.keyEnv = button.dataset.keyEnv;
    dialog.dataset.baseUrl = button.dataset.baseUrl;
    dialog.showModal();
  });
  onSubmit("#endpoint-edit-form", async (form) => {
    const dialog = $("#endpoint-dialog");
    const name = text(form, "name");
    const body = { free_tier: form.elements.namedItem("free_tier").checked };
    const url = text(form, "base_url");
    if (url && url !== dialog.dataset.baseUrl) body.base_url = url;
    const key = text(form, "api_key");
    const keyEnv = text(form, "api_key_env");
    if (key) body.api_key = key;
    else if (keyEnv && keyEnv !== dialog.dataset.keyEnv) body.api_key_env = keyEnv;
    await api("PATCH", `/api/endpoints/${encodeURIComponent(name)}`, body);
    reloadWith(key ? `Saved ${name}: its key was replaced` : `Saved ${name}`);
  });
  onClick("[data-remove-endpoint]", async (button) => {
    const name = button.dataset.removeEndpoint;
    if (!window.confirm(`Remove endpoint ${name} and its models from the roster?`)) return;
    await api("DELETE", `/api/endpoints/${encodeURIComponent(name)}`);
    reloadWith(`Removed endpoint ${name}`);
  });

  onSubmit("#key-form", async (form) => {
    const scope = $$('input[name="collections"]:checked', form).map((c) => c.value);
    const made = await api("POST", "/api/keys", {
      name: text(form, "name"),
      collections: scope.length ? scope : null,
      rpm: number(form, "rpm"),
      daily_panels: number(form, "daily_panels"),
      daily_tokens: number(form, "daily_tokens"),
    });
    form.reset();
    form.closest("details").open = false;
    $("#new-key-value").textContent = made.key;
    $("#new-key").hidden = false;
    $("#copy-key").focus();
  });
  $("#copy-key").addEventListener("click", copyKey);
  $("#key-done").addEventListener("click", () => {
    $("#new-key-value").textContent = "";
    reloadWith("Key made: only its last four characters are shown from now on");
  });
  onClick("[data-revoke]", async (button) => {
    const name = button.dataset.revoke;
    if (!window.confirm(`Revoke the key ${name}? Apps using it are refused at once.`)) return;
    await api("DELETE", `/api/keys/${encodeURIComponent(name)}`);
    reloadWith(`Revoked ${name}`);
  });

  onSubmit("#limits-form", async (form) => {
    const values = {};
    // One input per setting, rendered from the server's settings model; an empty one stays as it is.
    for (const input of $$("input[name]", form)) values[input.name] = number(form, input.name);
    await api("PUT", "/api/settings", values);
    reloadWith("Saved the gateway settings");
  });

  onSubmit("#shape-form", async (form) => {
    const name = text(form, "name");
    if (!name) throw Object.assign(new Error("Name the shape: one lower-case word."), { param: "name" });
    await api("PUT", `/api/shapes/${encodeURIComponent(name)}`, { description: text(form, "description") });
    reloadWith(`Saved shape ${name}`);
  });
  onClick("[data-edit-shape]", async (button) => {
    const form = $("#shape-form");
    form.elements.namedItem("name").value = button.dataset.editShape;
    form.elements.namedItem("description").value = button.dataset.description;
    form.elements.namedItem("description").focus();
  });
  onClick("[data-remove-shape]", async (button) => {
    const name = button.dataset.removeShape;
    if (!window.confirm(`Remove shape ${name}? Recorded verdicts keep it.`)) return;
    await api("DELETE", `/api/shapes/${encodeURIComponent(name)}`);
    reloadWith(`Removed shape ${name}`);
  });

  onSubmit("#decision-form", async (form) => {
    const alias = text(form, "alias");
    await api("POST", "/api/decision-models", { alias, kind: text(form, "kind") });
    reloadWith(`${alias} answered; it labels automatic shapes now`);
  });
  onClick("[data-remove-decision]", async (button) => {
    const alias = button.dataset.removeDecision;
    await api("DELETE", `/api/decision-models/${aliasPath(alias)}`);
    reloadWith(`Removed decision model ${alias}`);
  });

  onClick("[data-ack]", async (button) => {
    const alert = await api("POST", `/api/alerts/${encodeURIComponent(button.dataset.ack)}/ack`);
    reloadWith(`Acknowledged: ${alert.label} ${alert.subject}`);
  });

  startNotify();
}

async function copyKey() {
  const key = $("#new-key-value").textContent;
  const status = $("#copy-status");
  try {
    await navigator.clipboard.writeText(key);
    status.textContent = "Copied to the clipboard.";
  } catch {
    const range = document.createRange();
    range.selectNodeContents($("#new-key-value"));
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    status.textContent = "Selected: press Ctrl+C (⌘C) to copy.";
  }
}
