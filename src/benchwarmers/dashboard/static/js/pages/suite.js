// The Suite page's open task: the code shown (real line numbers, the key's lines marked, and a
// control's fixed lines), and beside it every seat's answer with its grade. Answers are a model's
// text: rendered by the safe markdown renderer (text nodes only), claims as text nodes.

import { api } from "../api.js";
import { pct, showCharts } from "../charts.js";
import { $, h, seconds } from "../dom.js";
import { flashNow } from "../forms.js";
import { renderMarkdown } from "../markdown.js";

export async function start() {
  await Promise.all([showTrend(), showTask()]);
}

// The per-run chart: each model's pair-correct and hit rates in each run, with their intervals.
async function showTrend() {
  const holder = $("#suite-trend-charts");
  if (!holder) return;
  try {
    const trend = await api("GET", "/api/trends/suite");
    showCharts(holder, [runSpec(trend, "pairs"), runSpec(trend, "hits")]);
  } catch (error) {
    flashNow(error.message, true);
  }
}

const FIGURES = {
  pairs: { rate: "pair_correct_rate", interval: "pair_interval", part: "correct", whole: "pairs", title: "Pair-correct rate per run", of: "pairs" },
  hits: { rate: "hit_rate", interval: "hit_interval", part: "hits", whole: "found", title: "Hit rate per run", of: "claim and bug tasks" },
};

export function runCell(point, figure) {
  const f = FIGURES[figure];
  if (!point || !point[f.whole]) return "–";
  const [low, high] = point[f.interval];
  return `${pct(point[f.rate])} (${pct(low)}–${pct(high)}) · ${point[f.part]} of ${point[f.whole]}`;
}

function runLabel(run, i) {
  const date = new Date(run.created_at * 1000);
  return `#${i + 1} ${date.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" })}`;
}

function runSpec(trend, figure) {
  const f = FIGURES[figure];
  const judged = trend.models.filter((m) => m.points.some((p) => p && p[f.whole]));
  const value = (p, pick) => (p && p[f.whole] ? pick(p) : null);
  return {
    id: `suite-${figure}`,
    title: f.title,
    x: trend.runs.map((_, i) => i),
    xLabels: trend.runs.map(runLabel),
    y: "rate",
    bands: false,
    lines: judged.map((m, index) => ({
      label: m.alias,
      index,
      values: m.points.map((p) => value(p, (q) => q[f.rate])),
      low: m.points.map((p) => value(p, (q) => q[f.interval][0])),
      high: m.points.map((p) => value(p, (q) => q[f.interval][1])),
    })),
    empty: `No ${f.of} graded in these runs yet.`,
    table: {
      columns: ["Run", ...judged.map((m) => m.alias)],
      rows: trend.runs.map((run, i) => [run.run, ...judged.map((m) => runCell(m.points[i], figure))]),
    },
  };
}

async function showTask() {
  const view = $("#task");
  if (!view) return;
  const { run, task } = view.dataset;
  try {
    const [report, shown] = await Promise.all([
      api("GET", `/api/suite/runs/${encodeURIComponent(run)}`),
      api("GET", `/api/suite/tasks/${encodeURIComponent(task)}?run=${encodeURIComponent(run)}`),
    ]);
    const row = report.tasks.find((t) => t.task === task);
    $("#task-source").textContent = sourceLine(shown.source);
    $("#task-code").replaceChildren(...shown.files.map((file) => codeFile(file, shown.key)));
    $("#task-answers").replaceChildren(...(row ? row.seats : []).map((seat) => answerCard(seat, shown.kind)));
    const first = $(".line.is-key, .line.is-fixed", view);
    if (first) first.scrollIntoView({ block: "center", inline: "nearest" });
    view.scrollIntoView({ block: "start" });
  } catch (error) {
    flashNow(error.message, true);
  }
}

function sourceLine(source) {
  if (!source) return "";
  return [source.attribution || source.repo, source.license, source.commit && `at ${source.commit.slice(0, 12)}`]
    .filter(Boolean)
    .join(" · ");
}

// Which lines of this file to mark: the key's defect, or the lines a control's fix wrote.
function marks(file, key) {
  if (!key || key.path !== file.path) return { span: null, kind: "" };
  if (key.lines) return { span: key.lines, kind: "is-key" };
  if (key.fixed_lines) return { span: key.fixed_lines, kind: "is-fixed" };
  return { span: null, kind: "" };
}

function codeFile(file, key) {
  const { span, kind } = marks(file, key);
  const label = kind === "is-key" ? "the key's line" : "a line the fix wrote";
  const lines = file.text.replace(/\n$/, "").split("\n");
  const rows = lines.map((text, i) => {
    const n = file.start + i;
    const marked = span && n >= span[0] && n <= span[1];
    return h(
      "div",
      { class: marked ? `line ${kind}` : "line", dataset: { line: String(n) } },
      h("span", { class: "ln", "aria-hidden": "true" }, String(n)),
      marked ? h("span", { class: "sr-only" }, `${label}: `) : null,
      h("code", { class: "src" }, text || " "),
    );
  });
  return h(
    "figure",
    { class: "code-file" },
    h("figcaption", { class: "mono small" }, `${file.path} · lines ${file.start}–${file.end}`),
    h("div", { class: "code", role: "group", "aria-label": file.path }, rows),
  );
}

function grade(seat, kind) {
  if (seat.skipped) return [h("span", { class: "badge" }, `skipped: ${seat.skipped}`)];
  if (seat.hit === null) return [h("span", { class: "badge" }, seat.status === "ok" ? "not graded" : seat.status)];
  const badges = [];
  if (kind === "control") {
    badges.push(
      seat.flagged
        ? h("span", { class: "badge bad", dataset: { grade: "flagged" } }, "flagged the fixed lines")
        : h("span", { class: "badge ok", dataset: { grade: "clear" } }, "left the fixed lines alone"),
    );
  } else if (seat.hit) {
    badges.push(h("span", { class: "badge ok", dataset: { grade: "hit" } }, "hit"));
  } else {
    badges.push(h("span", { class: "badge bad", dataset: { grade: "miss" } }, "missed"));
  }
  if (seat.located.length) badges.push(h("span", { class: "badge warn" }, `${seat.located.length} located`));
  const wrong = seat.false.length;
  badges.push(h("span", { class: wrong ? "badge bad" : "badge" }, `${wrong} false claim${wrong === 1 ? "" : "s"}`));
  badges.push(h("span", { class: "badge" }, seat.useful ? "useful" : "not useful"));
  return badges;
}

function claims(title, list, cls) {
  if (!list.length) return null;
  return h(
    "details",
    { class: `claims ${cls}`, open: true },
    h("summary", {}, `${title} (${list.length})`),
    h("ul", {}, list.map((claim) => h("li", { title: claim }, claim))),
  );
}

function answerCard(seat, kind) {
  const meta = [`#${seat.attempt}`, seat.status, seconds(seat.seconds)].filter(Boolean).join(" · ");
  const answer = h("div", { class: seat.answer ? "answer" : "answer is-empty" });
  answer.append(seat.answer ? renderMarkdown(seat.answer) : document.createTextNode("(no answer)"));
  return h(
    "article",
    { class: "seat-answer", dataset: { alias: seat.alias, call: seat.call } },
    h(
      "header",
      { class: "seat-answer-head" },
      h("strong", { class: "mono alias" }, seat.alias),
      h("span", { class: "mono small call" }, seat.call),
      h("span", { class: "muted small" }, meta),
    ),
    h("div", { class: "tags grades" }, grade(seat, kind)),
    claims("Hits", seat.hits, "is-hit"),
    claims("Located, not named", seat.located, "is-located"),
    claims("False claims", seat.false, "is-false"),
    answer,
  );
}
