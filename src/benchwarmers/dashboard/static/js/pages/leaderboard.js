// The period choice applies as soon as it changes.
export function start() {
  const select = document.getElementById("days");
  if (select) select.addEventListener("change", () => select.form.submit());
}
