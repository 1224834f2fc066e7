import { startCollectionForm } from "../collection-form.js";
import { startGateway } from "../gateway.js";
import { flashNow } from "../forms.js";
import { openSeat, startSeatDialog } from "../seat.js";

export function start() {
  startCollectionForm();
  startSeatDialog();
  startGateway((panel, call) => openSeat(panel, call).catch((error) => flashNow(error.message, true)));
}
