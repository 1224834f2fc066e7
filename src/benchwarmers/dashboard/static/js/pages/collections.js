import { startCollectionForm } from "../collection-form.js";
import { $ } from "../dom.js";
import { startGateway } from "../gateway.js";
import { flashNow } from "../forms.js";
import { openSeat, startSeatDialog } from "../seat.js";

export function start() {
  startCollectionForm();
  startSeatDialog();
  startGateway((panel, call) => openSeat(panel, call).catch((error) => flashNow(error.message, true)));
  const copy = $("#copy-snippet");
  if (copy) {
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText($("#sdk-snippet").textContent);
        $("#copy-snippet-status").textContent = "Copied to the clipboard.";
      } catch {
        $("#copy-snippet-status").textContent = "Select the snippet and copy it (the clipboard is not available here).";
      }
    });
  }
}
