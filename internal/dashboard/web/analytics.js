// The Analytics page: the environment's messages per UTC day of the last
// 7, 30 or 90 days (the dashboard's /analytics route: a message counts on
// the day it was created), drawn by the page as two SVG bar charts — by
// channel (stacked) and by outcome (sent, delivered, opened, failed, side
// by side) — with the same numbers in a table, which is what screen
// readers read (the charts are images named for it).
import { env, h, table } from "./lib.js";

const channelNames = { in_app: "In-app", email: "Email", sms: "SMS", chat: "Chat", push: "Push" };
const outcomeNames = { sent: "Sent", delivered: "Delivered", opened: "Opened", failed: "Failed" };
const periods = [7, 30, 90];

// SVG is the SVG namespace, as the page's parser names it (no address in
// the code: the dashboard loads nothing from outside Herald).
const SVG = (() => {
  const t = document.createElement("template");
  t.innerHTML = "<svg></svg>";
  return t.content.firstChild.namespaceURI;
})();

// s builds an SVG element, as h does an HTML one.
function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  for (const c of children.flat(Infinity)) {
    if (c !== undefined && c !== null) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// niceMax is the top of the scale: max rounded up to 1, 2 or 5 × 10^k.
function niceMax(max) {
  if (max <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= max);
}

const W = 960, H = 220, left = 44, right = 8, top = 10, bottom = 26;
const plotW = W - left - right, plotH = H - top - bottom;

// chart draws one bar chart: for each day, the bars of series (stacked
// or side by side), each with its own class and a tooltip.
function chart({ id, caption, days, series, value, stacked }) {
  const totals = days.map((d) => (stacked ? series.reduce((sum, k) => sum + value(d, k), 0) : Math.max(...series.map((k) => value(d, k)))));
  const max = niceMax(Math.max(0, ...totals));
  const y = (v) => top + plotH - (v / max) * plotH;
  const slot = plotW / days.length;
  const grid = [0, max / 2, max].map((v) => [
    s("line", { x1: left, x2: W - right, y1: y(v), y2: y(v), class: "grid" }),
    s("text", { x: left - 6, y: y(v) + 4, class: "axis", "text-anchor": "end" }, Number.isInteger(v) ? v : v.toFixed(1)),
  ]);
  const labelled = [0, Math.floor((days.length - 1) / 2), days.length - 1].filter((i, n, all) => all.indexOf(i) === n);
  const xLabels = labelled.map((i) => s("text", { x: left + slot * (i + 0.5), y: H - 8, class: "axis", "text-anchor": "middle" },
    days[i].date.slice(5)));
  const bars = days.map((d, i) => {
    const x0 = left + slot * i + slot * 0.15;
    const width = slot * 0.7;
    let base = 0;
    return series.map((k, j) => {
      const v = value(d, k);
      if (!v) return null;
      const tip = s("title", {}, `${d.date} · ${(channelNames[k] || outcomeNames[k])}: ${v}`);
      if (stacked) {
        const r = s("rect", { x: x0, width, y: y(base + v), height: y(base) - y(base + v), class: `bar s-${k}` }, tip);
        base += v;
        return r;
      }
      const w = width / series.length;
      return s("rect", { x: x0 + w * j, width: w, y: y(v), height: y(0) - y(v), class: `bar s-${k}` }, tip);
    });
  });
  const legend = h("ul", { class: "legend" }, series.map((k) => h("li", {},
    h("span", { class: `swatch s-${k}`, "aria-hidden": "true" }), channelNames[k] || outcomeNames[k])));
  return h("figure", { class: "chart" },
    h("figcaption", { id }, caption),
    s("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-labelledby": id, preserveAspectRatio: "xMidYMid meet" },
      grid, bars, xLabels),
    legend);
}

export async function analyticsPage() {
  const params = new URLSearchParams(location.hash.split("?")[1] || "");
  const days = periods.includes(Number(params.get("days"))) ? Number(params.get("days")) : 30;
  const res = await env("GET", `/analytics?days=${days}`);
  const period = h("select", { id: "analytics-period", onchange: () => { location.hash = `#/analytics?days=${period.value}`; } },
    periods.map((n) => h("option", { value: n, selected: n === days }, `Last ${n} days`)));
  const t = res.total;
  const newestFirst = [...res.data].reverse();
  return [h("h1", {}, "Analytics"),
    h("p", { class: "muted" }, `Messages per day (UTC), ${res.from} to ${res.to}; a message counts on the day it was created.`,
      " Delivered: a provider reported it delivered (in-app: created). Opened: a provider reported it opened."),
    h("div", { class: "row" }, h("div", {}, h("label", { for: period.id }, "Period"), period)),
    h("dl", { class: "kv totals" },
      h("dt", {}, "Messages"), h("dd", {}, String(t.messages)),
      res.outcomes.flatMap((o) => [h("dt", {}, outcomeNames[o] || o), h("dd", {}, String(t.outcomes[o]))])),
    t.messages ? [] : h("p", { class: "muted" }, "No message in this period."),
    chart({ id: "chart-channels", caption: "Messages per day by channel", days: res.data, series: res.channels,
      value: (d, k) => d.channels[k] || 0, stacked: true }),
    chart({ id: "chart-outcomes", caption: "Messages per day by outcome", days: res.data, series: res.outcomes,
      value: (d, k) => d.outcomes[k] || 0, stacked: false }),
    h("h2", {}, "Per day"),
    table(["Date", ...res.channels.map((c) => channelNames[c] || c), ...res.outcomes.map((o) => outcomeNames[o] || o), "Messages"],
      newestFirst.map((d) => h("tr", {},
        h("td", {}, d.date),
        res.channels.map((c) => h("td", {}, String(d.channels[c]))),
        res.outcomes.map((o) => h("td", {}, String(d.outcomes[o]))),
        h("td", {}, String(d.messages)))))];
}
