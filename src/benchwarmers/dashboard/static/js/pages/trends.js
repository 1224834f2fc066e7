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

const starts = (trend) => trend.buckets.map((b) => b.start);
const byWhat = (trend) => (trend.bucket === "hour" ? "hour" : "day");

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
      x: starts(trend),
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
    x: starts(trend),
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
    note: "Over the seats that answered: the median (solid) and the 90th percentile (dashed).",
    x: starts(trend),
    y: "seconds",
    lines,
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
    x: starts(trend),
    y: "usd",
    lines: has
      ? [
          { label: "Free calls' value", index: 0, values: trend.points.map((p) => (p.calls ? p.free_usd : null)) },
          { label: "Every call at list price", index: 1, values: trend.points.map((p) => (p.calls ? p.cost_usd : null)) },
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
