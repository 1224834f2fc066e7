// Charts over time, drawn by uPlot (static/vendor/uplot, loaded by the pages that chart): lines with
// their interval bands, in the theme's colours (read from its CSS variables, drawn again when the
// theme changes), as wide as their container (drawn again when it resizes), and each with its
// figures as a table in a <details> below it, its caption naming the chart, for screen readers and
// for anyone who wants the numbers. The table and the lines are built from the same figures.

import { h } from "./dom.js";

export const SERIES_COLOURS = 6; // --series-1 … --series-6 in every theme
const HEIGHT = 260;
const PHONE_HEIGHT = 220;
const drawn = new Map(); // the plot's holder → {spec, holder, chart, width}

export function pct(value) {
  return value === null || value === undefined ? "–" : `${Math.round(value * 100)}%`;
}

// Dollars as the server's cost.usd writes them: to the cent from a dollar up, else to a millionth.
export function usd(value) {
  if (value >= 1) return `$${value.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  const [whole, cents] = value.toFixed(6).split(".");
  return `$${whole}.${cents.replace(/0+$/, "").padEnd(2, "0")}`;
}

export function secondsText(value) {
  if (value === null || value === undefined) return "–";
  return value < 10 ? `${value.toFixed(2)} s` : `${value.toFixed(1)} s`;
}

function css(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

// A theme colour (#rrggbb) with an alpha, for an interval's band.
function faded(colour, alpha) {
  const hex = colour.replace("#", "");
  if (!/^[0-9a-f]{6}$/i.test(hex)) return colour;
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return `rgba(${r}, ${g}, ${b}, ${alpha})`;
}

export function colourOf(index) {
  return css(`--series-${(index % SERIES_COLOURS) + 1}`);
}

// Past the palette, lines are dashed so two models never look the same.
function dashOf(index) {
  return index >= SERIES_COLOURS ? [6, 4] : undefined;
}

// Each point's interval as a whisker (a band alone shows nothing at a point with no neighbour), each
// line's a few pixels apart so overlapping intervals stay apart.
function whiskers(spec) {
  return (u) => {
    const ctx = u.ctx;
    const ratio = window.devicePixelRatio || 1;
    const ranged = spec.lines.filter((line) => line.low && line.high);
    ctx.save();
    ctx.lineWidth = 1.5 * ratio;
    ranged.forEach((line, n) => {
      const shift = (n - (ranged.length - 1) / 2) * 3 * ratio;
      ctx.strokeStyle = colourOf(line.index);
      ctx.beginPath();
      line.values.forEach((value, i) => {
        if (value === null || line.low[i] === null || line.high[i] === null) return;
        const x = u.valToPos(spec.x[i], "x", true) + shift;
        const top = u.valToPos(line.high[i], "y", true);
        const bottom = u.valToPos(line.low[i], "y", true);
        ctx.moveTo(x, top);
        ctx.lineTo(x, bottom);
        ctx.moveTo(x - 3 * ratio, top);
        ctx.lineTo(x + 3 * ratio, top);
        ctx.moveTo(x - 3 * ratio, bottom);
        ctx.lineTo(x + 3 * ratio, bottom);
      });
      ctx.stroke();
    });
    ctx.restore();
  };
}

// The x axis: one slot per bucket (or run), labelled by `xLabels`, as many labels as fit the width.
function xAxis(spec, axis) {
  const last = spec.x.length - 1;
  return {
    range: () => [-0.5, last + 0.5],
    axis: {
      ...axis,
      splits: (u) => {
        const fit = Math.max(2, Math.floor(u.width / 90));
        const step = Math.max(1, Math.ceil(spec.x.length / fit));
        return spec.x.filter((i) => (last - i) % step === 0); // the newest always labelled
      },
      values: (_, ticks) => ticks.map((t) => spec.xLabels[t] ?? ""),
    },
  };
}

// spec.lines: [{label, values, index (its colour), low?, high?, dash?}]; spec.x: positions 0…n-1 with
// spec.xLabels; spec.y: "rate" (0–100%), "seconds" or "usd"; spec.bands: false to show intervals as
// whiskers alone (between discrete runs a band would claim values nobody measured).
function options(spec, width, theme) {
  const series = [{}];
  const bands = [];
  for (const line of spec.lines) {
    const colour = colourOf(line.index);
    series.push({
      label: line.label,
      stroke: colour,
      width: 2,
      dash: line.dash ?? dashOf(line.index),
      spanGaps: false,
      points: { show: true, size: 6, stroke: colour, fill: colour },
    });
    if (line.low && line.high && spec.bands !== false) {
      const high = series.length;
      series.push({ label: `${line.label} high`, stroke: "transparent", width: 0, points: { show: false } });
      series.push({ label: `${line.label} low`, stroke: "transparent", width: 0, points: { show: false } });
      bands.push({ series: [high, high + 1], fill: faded(colour, 0.1) });
    }
  }
  const axis = { stroke: theme.muted, grid: { stroke: theme.grid, width: 1 }, ticks: { stroke: theme.grid, width: 1 } };
  const y = { ...axis, size: 56 };
  const x = xAxis(spec, axis);
  const scales = { x: { time: false, range: x.range } };
  if (spec.y === "rate") {
    scales.y = { range: [0, 1] };
    y.values = (_, ticks) => ticks.map((t) => `${Math.round(t * 100)}%`);
    y.splits = () => [0, 0.25, 0.5, 0.75, 1];
  } else if (spec.y === "seconds") {
    scales.y = { range: (_, min, max) => [0, max > 0 ? max * 1.15 : 1] };
    y.values = (_, ticks) => ticks.map((t) => `${+t.toPrecision(2)} s`);
    y.size = 64;
  } else if (spec.y === "usd") {
    scales.y = { range: (_, min, max) => [0, max > 0 ? max * 1.15 : 0.01] };
    y.values = (_, ticks) => ticks.map((t) => usd(t));
    y.size = 76;
  }
  return {
    width,
    height: width < 500 ? PHONE_HEIGHT : HEIGHT,
    series,
    bands,
    scales,
    axes: [x.axis, y],
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    hooks: { draw: [whiskers(spec)] },
  };
}

function dataOf(spec) {
  const data = [spec.x];
  for (const line of spec.lines) {
    data.push(line.values);
    if (line.low && line.high && spec.bands !== false) data.push(line.high, line.low);
  }
  return data;
}

function themeColours() {
  return { muted: css("--muted"), grid: css("--border") };
}

function legend(spec) {
  return h(
    "ul",
    { class: "chart-legend", "aria-hidden": "true" },
    (spec.legend || spec.lines).map((line) =>
      h(
        "li",
        {},
        h("span", { class: `swatch s-${(line.index % SERIES_COLOURS) + 1}${line.dash || line.index >= SERIES_COLOURS ? " dashed" : ""}` }),
        line.label,
      ),
    ),
  );
}

// The figures: `table` = {columns: [header], rows: [[row header, ...cells]]}.
function figuresTable(title, table) {
  return h(
    "details",
    { class: "chart-data" },
    h("summary", {}, "The figures as a table"),
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "table compact" },
        h("caption", {}, title),
        h("thead", {}, h("tr", {}, table.columns.map((c, i) => h("th", { scope: "col", class: i ? "num" : "" }, c)))),
        h(
          "tbody",
          {},
          table.rows.map(([head, ...cells]) =>
            h("tr", {}, h("th", { scope: "row" }, head), cells.map((c) => h("td", { class: "num" }, c))),
          ),
        ),
      ),
    ),
  );
}

// A figure: its title, the chart (an image to assistive technology, named by the title; the table
// below it holds the numbers), its legend and the table. `spec` = {id, title, note?, x, xLabels?, y,
// lines, table, empty?}. Without lines, a line saying there is nothing to draw yet.
function chartFigure(spec) {
  const titleId = `${spec.id}-title`;
  const figure = h("figure", { class: "chart", id: spec.id, dataset: { chart: spec.id } });
  figure.append(h("figcaption", { id: titleId, class: "chart-title" }, spec.title));
  if (spec.note) figure.append(h("p", { class: "muted small" }, spec.note));
  if (!spec.lines.length) {
    figure.append(h("p", { class: "empty" }, spec.empty || "Nothing to draw yet."));
    return { figure, entry: null };
  }
  const holder = h("div", { class: "chart-plot", role: "img", "aria-labelledby": titleId });
  figure.append(holder, legend(spec), figuresTable(spec.title, spec.table));
  return { figure, entry: { spec, holder, chart: null, width: 0 } };
}

function draw(entry) {
  entry.chart?.destroy();
  const width = Math.max(200, Math.floor(entry.holder.clientWidth));
  entry.holder.replaceChildren();
  entry.chart = new window.uPlot(options(entry.spec, width, themeColours()), dataOf(entry.spec), entry.holder);
  entry.width = width;
}

// A phone turned, a window narrowed: the same chart at the new width (and the phone's height).
const resized = new ResizeObserver((seen) => {
  for (const { target } of seen) {
    const entry = drawn.get(target);
    const width = Math.floor(target.clientWidth);
    if (!entry?.chart || !target.isConnected || width === entry.width || width < 1) continue;
    const height = width < 500 ? PHONE_HEIGHT : HEIGHT;
    entry.chart.setSize({ width: Math.max(200, width), height });
    entry.width = width;
  }
});

// A theme picked: its colours, once its stylesheet has loaded.
document.getElementById("theme-css")?.addEventListener("load", () => {
  for (const entry of drawn.values()) if (entry.holder.isConnected) draw(entry);
});

// Put the figures of `specs` in `container` (in place of what it held) and draw them.
export function showCharts(container, specs) {
  for (const [holder, entry] of drawn) {
    if (container.contains(holder)) {
      entry.chart?.destroy();
      resized.unobserve(holder);
      drawn.delete(holder);
    }
  }
  const made = specs.map(chartFigure);
  container.replaceChildren(...made.map((m) => m.figure));
  for (const { entry } of made) {
    if (!entry) continue;
    drawn.set(entry.holder, entry);
    draw(entry);
    resized.observe(entry.holder);
  }
}
