// The seat dialog: one seat's answer (safe markdown), the prompt, and the verdict form. Verdicts
// go where the page says (`data-verdict-url`): the gateway's /bench/verdict on an open bench,
// /api/verdicts when keys are required (the dashboard holds the admin's session, not a key).

import { api } from "./api.js";
import { $, seatCut, seconds } from "./dom.js";
import { lines, submitting, text } from "./forms.js";
import { renderMarkdown } from "./markdown.js";

let current = null;

export function startSeatDialog() {
  const form = $("#verdict-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submitting(form, () => postVerdict(form));
  });
}

function promptText(request) {
  const messages = (request && request.messages) || [];
  return messages
    .map((m) => {
      const content = Array.isArray(m.content)
        ? m.content.map((part) => (part.type === "text" ? part.text : part.image_url?.url || `[${part.type}]`)).join("\n")
        : String(m.content ?? "");
      return `${m.role}: ${content}`;
    })
    .join("\n\n");
}

export async function openSeat(panelId, call) {
  const panel = await api("GET", `/api/panels/${encodeURIComponent(panelId)}`);
  const seat = [...panel.seats, panel.decision].find((s) => s && s.call === call);
  if (!seat) return;
  current = { panel: panelId, call };
  const dialog = $("#seat-dialog");
  $("#seat-title").textContent = call;
  $("#seat-meta").textContent = [seat.alias, seat.stands_in_for ? `stand-in for ${seat.stands_in_for}` : seat.seat, seat.status, seconds(seat.seconds), `bench/${panel.collection}`]
    .filter(Boolean)
    .join(" · ");
  $("#seat-prompt-text").textContent = promptText(panel.request);
  const error = $("#seat-error");
  error.hidden = !seat.error;
  error.textContent = seat.error || "";
  const cut = $("#seat-cut");
  cut.textContent = seatCut(seat);
  cut.hidden = !cut.textContent;
  const answer = $("#seat-answer");
  // A tool call is an answer: each is shown after the text, as the markdown reply shows it.
  const calls = (seat.tool_calls || []).map((c) => `→ tool call \`${c.function.name}(${c.function.arguments})\``);
  const text = [seat.answer, ...calls].filter(Boolean).join("\n\n");
  answer.classList.toggle("is-empty", !text);
  answer.replaceChildren(text ? renderMarkdown(text) : document.createTextNode("(no answer)"));
  fillVerdict(seat.verdict);
  // A failed seat, or one not called (paced, cooling, retired), has no answer to judge: no verdict form.
  $("#verdict-form").hidden = !["ok", "empty"].includes(seat.status);
  dialog.showModal();
  answer.scrollTop = 0;
}

function fillVerdict(verdict) {
  const form = $("#verdict-form");
  form.reset();
  for (const slot of form.querySelectorAll("[data-error-for]")) slot.hidden = true;
  if (verdict) {
    form.querySelector(`input[name="useful"][value="${verdict.useful}"]`).checked = true;
    form.elements.namedItem("note").value = verdict.note || "";
    form.elements.namedItem("real").value = (verdict.real || []).join("\n");
    form.elements.namedItem("false").value = (verdict.false || []).join("\n");
  }
  $("#verdict-current").textContent = verdict
    ? `Judged ${verdict.useful ? "useful" : "not useful"} by ${verdict.caller}; a new verdict replaces it.`
    : "No verdict yet.";
}

async function postVerdict(form) {
  const chosen = form.querySelector('input[name="useful"]:checked');
  if (!chosen) throw Object.assign(new Error("Choose useful or not useful."), { param: "useful" });
  const body = {
    call: current.call,
    useful: chosen.value === "true",
    note: text(form, "note"),
    real: lines(form, "real"),
    false: lines(form, "false"),
  };
  await api("POST", document.body.dataset.verdictUrl, body);
  $("#seat-dialog").close();
  document.dispatchEvent(new CustomEvent("bench:verdict", { detail: { panel: current.panel, call: current.call } }));
}
