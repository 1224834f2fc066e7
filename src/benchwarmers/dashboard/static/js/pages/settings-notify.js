// Settings → Notifications: add a target (an Apprise URL, never shown back), try one, remove one.

import { api } from "../api.js";
import { $ } from "../dom.js";
import { onClick, reloadWith, submitting, text } from "../forms.js";

export function startNotify() {
  const form = $("#notify-form");
  form?.addEventListener("submit", (event) => {
    event.preventDefault();
    submitting(form, async () => {
      const made = await api("POST", "/api/notify", { url: text(form, "url"), name: text(form, "name") || null });
      form.reset();
      reloadWith(`Added ${made.name} (${made.label}): new alerts go to it; try it with Test`);
    });
  });
  onClick("[data-test-notify]", async (button) => {
    const shown = button.closest("tr").querySelector("[data-notify-result]");
    shown.textContent = "Sending…";
    const tried = await api("POST", `/api/notify/${encodeURIComponent(button.dataset.testNotify)}/test`);
    shown.className = `small ${tried.status === "ok" ? "status-ok" : "danger"}`;
    shown.textContent = tried.status === "ok" ? "sent: check that it arrived" : `failed: ${tried.error}`;
  });
  onClick("[data-remove-notify]", async (button) => {
    const name = button.dataset.removeNotify;
    if (!window.confirm(`Stop sending alerts to ${name}? Its URL is deleted.`)) return;
    await api("DELETE", `/api/notify/${encodeURIComponent(name)}`);
    reloadWith(`Removed ${name}`);
  });
}
