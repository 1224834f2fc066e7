// Add a reachable model to the roster in one click.

import { api } from "../api.js";
import { flashNow, onClick } from "../forms.js";

export function start() {
  onClick("[data-add]", async (button) => {
    const model = await api("POST", "/api/discover", { model: button.dataset.add });
    const done = document.createElement("span");
    done.className = "badge settled";
    done.textContent = `added as ${model.alias}`;
    button.replaceWith(done);
    // The same probe as `benchwarmers check` ran on it: say how it went.
    const check = model.check ? `; check: ${model.check.status}${model.check.fix ? ` (${model.check.fix})` : ""}` : "";
    flashNow(`Added ${model.alias} to the roster${check}`);
  });
}
