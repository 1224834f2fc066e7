// Every page: the theme, the flash message, local times, dialogs; then the page's own module.

import { localTimes, wireDialogs } from "./dom.js";
import { showFlash } from "./forms.js";
import { restoreTheme } from "./theme.js";

const PAGES = {
  collections: () => import("./pages/collections.js"),
  models: () => import("./pages/models.js"),
  leaderboard: () => import("./pages/leaderboard.js"),
  trends: () => import("./pages/trends.js"),
  suite: () => import("./pages/suite.js"),
  discover: () => import("./pages/discover.js"),
  settings: () => import("./pages/settings.js"),
  panel: () => import("./pages/panel.js"),
  playground: () => import("./pages/playground.js"),
};

restoreTheme();
showFlash();
localTimes(document);
wireDialogs(document);
const load = PAGES[document.body.dataset.page];
if (load) load().then((page) => page.start());
