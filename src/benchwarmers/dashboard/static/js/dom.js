// Building the page from data: elements and text nodes only. Text from the server (a model's
// answer, an alias, an error) is only ever a text node or an attribute value, never markup.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") el.className = value;
    else if (name === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export const $ = (selector, root = document) => root.querySelector(selector);
export const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

export function when(ts) {
  if (!ts) return "";
  const date = new Date(ts * 1000);
  const today = new Date().toDateString() === date.toDateString();
  return today
    ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })
    : date.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
}

// An answer the bench's answer cap cut (a seat's `truncated_at`): said beside it, never silent.
export function cutText(bytes) {
  return `Answer cut at ${bytes.toLocaleString("en")} bytes by the bench's answer cap (answer_cap_kb): the model wrote more.`;
}

// What a reader is told of a cut answer: the answer cap's cut, or the model's own token limit
// (`truncated: "length"`, finish_reason length); "" when it was not cut.
export function seatCut(seat) {
  if (seat.truncated_at != null) return cutText(seat.truncated_at);
  if (seat.truncated === "length") return "Answer cut by max_tokens (finish_reason: length): the model had more to write.";
  return "";
}

export function seconds(value) {
  if (value === null || value === undefined) return "";
  return value < 10 ? `${value.toFixed(2)} s` : `${value.toFixed(1)} s`;
}

// `2026-12-01 19:41:06 UTC`: the exact time, as the title of a shown time.
export function utcText(date) {
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

// Times the server wrote in its own zone, shown in the browser's; the title holds the exact UTC.
export function localTimes(root) {
  for (const el of $$("time[data-ts]", root)) {
    const date = new Date(Number(el.dataset.ts) * 1000);
    el.textContent = date.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
    el.title = utcText(date);
  }
}

// [data-close] buttons close their dialog, and so does a click on the backdrop.
export function wireDialogs(root) {
  for (const dialog of $$("dialog", root)) {
    dialog.addEventListener("click", (event) => {
      if (event.target === dialog) dialog.close();
      else if (event.target.closest("[data-close]")) dialog.close();
    });
  }
}
