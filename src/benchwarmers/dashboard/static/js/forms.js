// Forms: inline errors beside the field the server named, a busy state, and a message that
// survives the reload that shows a change.

import { ApiError } from "./api.js";
import { $, $$ } from "./dom.js";

const FLASH = "bw-flash";

export function clearErrors(form) {
  for (const slot of $$("[data-error-for]", form)) {
    slot.hidden = true;
    slot.textContent = "";
  }
  for (const field of $$("[aria-invalid]", form)) field.removeAttribute("aria-invalid");
}

export function showError(form, error) {
  const param = error.param || "";
  const slot = $(`[data-error-for="${CSS.escape(param)}"]`, form) || $('[data-error-for=""]', form);
  if (slot) {
    slot.textContent = error.message;
    slot.hidden = false;
  } else {
    flashNow(error.message, true);
  }
  const field = param && form.elements.namedItem(param);
  if (field instanceof HTMLElement) {
    field.setAttribute("aria-invalid", "true");
    field.focus();
  }
}

// Run `action` for a form: errors land inline; the submit button is disabled meanwhile.
export async function submitting(form, action) {
  const buttons = $$('button[type="submit"]', form);
  clearErrors(form);
  for (const b of buttons) b.disabled = true;
  try {
    await action();
  } catch (error) {
    showError(form, error instanceof ApiError ? error : { message: String(error.message || error), param: error.param });
  } finally {
    for (const b of buttons) b.disabled = false;
  }
}

export function text(form, name) {
  const field = form.elements.namedItem(name);
  return field ? field.value.trim() : "";
}

// "" → null; otherwise the number as typed (the server says if it is not a whole one).
export function number(form, name) {
  const raw = text(form, name);
  if (raw === "") return null;
  const value = Number(raw);
  return Number.isNaN(value) ? raw : value;
}

export function lines(form, name) {
  return text(form, name).split("\n").map((l) => l.trim()).filter(Boolean);
}

export function reloadWith(message) {
  try {
    sessionStorage.setItem(FLASH, message);
  } catch {
    /* private mode: the change still shows on the page */
  }
  location.reload();
}

export function flashNow(message, isError = false) {
  const box = $("#flash");
  if (!box) return;
  box.textContent = message;
  box.classList.toggle("is-error", isError);
  box.hidden = false;
}

export function showFlash() {
  let message = null;
  try {
    message = sessionStorage.getItem(FLASH);
    sessionStorage.removeItem(FLASH);
  } catch {
    return;
  }
  if (message) flashNow(message);
}

// A button that acts on the server and then shows the result by reloading.
export function onClick(selector, handler) {
  document.addEventListener("click", async (event) => {
    const button = event.target.closest(selector);
    if (!button) return;
    button.disabled = true;
    try {
      await handler(button);
    } catch (error) {
      flashNow(error.message || String(error), true);
    } finally {
      button.disabled = false;
    }
  });
}
