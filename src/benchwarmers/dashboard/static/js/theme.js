// Themes: the choice is kept in a cookie (so the server renders the right stylesheet, no flash)
// and in localStorage (so it comes back if the cookie is cleared). Until one is picked the page
// follows the system's light or dark preference (two stylesheets, each for its media query).

export const THEMES = ["dark", "hardwood", "rainforest"];
const KEY = "bw-theme";

export function applyTheme(name) {
  if (!THEMES.includes(name)) return;
  const link = document.getElementById("theme-css");
  link.href = `${link.dataset.base}${name}.css`;
  link.removeAttribute("media");
  document.getElementById("theme-css-light")?.remove();
  document.documentElement.dataset.theme = name;
  document.cookie = `bw_theme=${name}; path=/; max-age=31536000; samesite=lax`;
  try {
    localStorage.setItem(KEY, name);
  } catch {
    /* the cookie alone remembers it */
  }
}

export function restoreTheme() {
  let saved = null;
  try {
    saved = localStorage.getItem(KEY);
  } catch {
    return;
  }
  const hasCookie = document.cookie.split("; ").some((c) => c.startsWith("bw_theme="));
  if (saved && !hasCookie && saved !== document.documentElement.dataset.theme) applyTheme(saved);
}
