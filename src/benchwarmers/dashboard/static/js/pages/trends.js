// The Trends page: each model's useful rate per shape (with its 95% interval), its errors and its
// seconds, and the value of the bench's free calls, over the chosen days: the figures of
// /api/trends/useful, /calls and /value, drawn as they come.

import { api } from "../api.js";
import { $ } from "../dom.js";
import { flashNow } from "../forms.js";
import { pct, secondsText, showCharts, usd } from "../charts.js";

export async function start() {
  const view = $("#trends");
  const select = $("#days");
  if (select) select.addEventListener("change", () => select.form.submit());
  if (!view) return;
  const days = view.dataset.days;
  try {
    const [useful, calls, value] = await Promise.all([
      api("GET", `/api/trends/useful?days=${days}`),
      api("GET", `/api/trends/calls?days=${days}`),
      api("GET", `/api/trends/value?days=${days}`),
    ]);
    showCharts($("#useful-charts"), usefulSpecs(useful));
    showCharts($("#calls-charts"), [errorSpec(calls), secondsSpec(calls)]);
    showCharts($("#value-charts"), [valueSpec(value)]);
  } catch (error) {
    flashNow(error.message, true);
  }
}

const byWhat = (trend) => (trend.bucket === "hour" ? "hour" : "day");

// The x axis: a slot per bucket, labelled by its day (`Mar 4`) or its hour (`14:00`, the day at midnight).
function axisOf(trend) {
  const labels = trend.buckets.map((b) => {
    const date = new Date(b.start * 1000);
    const day = date.toLocaleDateString([], { month: "short", day: "numeric" });
    if (trend.bucket === "day" || date.getHours() === 0) return day;
    return `${String(date.getHours()).padStart(2, "0")}:00`;
  });
  return { x: trend.buckets.map((_, i) => i), xLabels: labels };
}

// The table's rows: the buckets where some line has a figure (`has(point)`), each labelled.
function rows(trend, series, has, cell) {
  return trend.buckets.flatMap((bucket, i) =>
    series.some((s) => has(s.points[i])) ? [[bucket.label, ...series.map((s) => cell(s.points[i]))]] : [],
  );
}

export function usefulCell(p) {
  return p.verdicts ? `${pct(p.rate)} (${pct(p.low)}–${pct(p.high)}) · ${p.useful} of ${p.verdicts}` : "–";
}

function usefulSpecs(trend) {
  const shapes = [...new Set(trend.series.map((s) => s.shape))].sort();
  if (!shapes.length) {
    return [{ id: "useful", title: "Useful rate over time", lines: [], empty: "No verdicts in these days yet: judge a panel's seats and their rates show here." }];
  }
  return shapes.map((shape) => {
    const series = trend.series.filter((s) => s.shape === shape);
    return {
      id: `useful-${shape}`,
      title: `Useful rate on ${shape}, by ${byWhat(trend)}`,
      note: "Each model's share of useful verdicts on the seats seated then, with its 95% interval as a band.",
      ...axisOf(trend),
      y: "rate",
      lines: series.map((s, index) => ({
        label: s.alias,
        index,
        values: s.points.map((p) => p.rate),
        low: s.points.map((p) => p.low),
        high: s.points.map((p) => p.high),
      })),
      table: {
        columns: [byWhat(trend) === "hour" ? "Hour" : "Day", ...series.map((s) => s.alias)],
        rows: rows(trend, series, (p) => p.verdicts > 0, usefulCell),
      },
    };
  });
}

export function errorCell(p) {
  return p.seats ? `${pct(p.error_rate)} · ${p.errors} of ${p.seats}` : "–";
}

function errorSpec(trend) {
  return {
    id: "errors",
    title: `Failed seats, by ${byWhat(trend)}`,
    note: "Each model's share of its seats that failed (errors of any class; empty answers are not counted here).",
    ...axisOf(trend),
    y: "rate",
    lines: trend.series.map((s, index) => ({ label: s.alias, index, values: s.points.map((p) => p.error_rate) })),
    empty: "No seats in these days yet.",
    table: {
      columns: [byWhat(trend) === "hour" ? "Hour" : "Day", ...trend.series.map((s) => s.alias)],
      rows: rows(trend, trend.series, (p) => p.seats > 0, errorCell),
    },
  };
}

export function secondsCell(p) {
  return p.p50 === null ? "–" : `${secondsText(p.p50)} / ${secondsText(p.p90)}`;
}

function secondsSpec(trend) {
  const lines = trend.series.flatMap((s, index) => [
    { label: `${s.alias} p50`, index, values: s.points.map((p) => p.p50) },
    { label: `${s.alias} p90`, index, values: s.points.map((p) => p.p90), dash: [6, 4] },
  ]);
  return {
    id: "seconds",
    title: `Seconds to answer (p50 and p90), by ${byWhat(trend)}`,
    note: "Over the seats that answered: the median (solid line) and the 90th percentile (dashed), each model in its colour.",
    ...axisOf(trend),
    y: "seconds",
    lines,
    legend: trend.series.map((s, index) => ({ label: s.alias, index })),
    empty: "No answered seats in these days yet.",
    table: {
      columns: [byWhat(trend) === "hour" ? "Hour" : "Day", ...trend.series.map((s) => `${s.alias} p50 / p90`)],
      rows: rows(trend, trend.series, (p) => p.p50 !== null, secondsCell),
    },
  };
}

function valueSpec(trend) {
  const has = trend.points.some((p) => p.calls > 0);
  return {
    id: "value",
    title: `What the calls would have cost at list prices, by ${byWhat(trend)}`,
    note: `The part run on free models is what running free saved: ${usd(trend.total.free_usd)} of ${usd(trend.total.cost_usd)} over these days.`,
    ...axisOf(trend),
    y: "usd",
    lines: has
      ? [
          // A day without calls cost nothing: a zero, not a gap.
          { label: "Free calls' value", index: 0, values: trend.points.map((p) => p.free_usd) },
          { label: "Every call at list price", index: 1, values: trend.points.map((p) => p.cost_usd) },
        ]
      : [],
    empty: "No calls in these days yet.",
    table: {
      columns: [byWhat(trend) === "hour" ? "Hour" : "Day", "Calls", "Free calls' value", "Every call at list price"],
      rows: trend.buckets.flatMap((bucket, i) => {
        const p = trend.points[i];
        return p.calls ? [[bucket.label, String(p.calls), usd(p.free_usd), usd(p.cost_usd)]] : [];
      }),
    },
  };
}
