// The panel page: one panel to judge, and the way to the next one (j / k / o, or the buttons).

import { api } from "../api.js";
import { $ } from "../dom.js";
import { flashNow } from "../forms.js";
import { showPanel, startKeys } from "../judge.js";

let current = null;

export async function start() {
  const root = $("#judge");
  startKeys();
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-go]");
    if (button) go(button.dataset.go);
  });
  try {
    current = await api("GET", `/api/panels/${encodeURIComponent(root.dataset.panelId)}`);
    showPanel(root, current, go);
  } catch (error) {
    flashNow(error.message, true);
  }
}

async function go(direction) {
  if (!current) return;
  let found = [];
  if (direction === "j") found = (await api("GET", `/api/panels?limit=1&before=${current.created}`)).data;
  else if (direction === "k") found = (await api("GET", `/api/panels?limit=1&after=${current.created}`)).data;
  else {
    // The next owed panel: an older one first (working down the log), else the newest one owed.
    found = (await api("GET", `/api/panels?owed=1&limit=1&before=${current.created}`)).data;
    if (!found.length) found = (await api("GET", "/api/panels?owed=1&limit=2")).data.filter((p) => p.id !== current.id);
  }
  if (!found.length) {
    flashNow(direction === "o" ? "No other panel owes a verdict." : `No ${direction === "j" ? "older" : "newer"} panel.`);
    return;
  }
  location.assign(`/panels/${encodeURIComponent(found[0].id)}`);
}
