// What every page of the dashboard uses: the client of the dashboard's
// routes (/dashboard/api/, the session cookie; the data routes under
// /dashboard/api/env/<environment>/), the element builder, and the few
// shared pieces of page (an error, a table). Text from the server is only
// ever set as text (textContent), never parsed as HTML.

const API = "/dashboard/api";

// state is the signed-in session, the environment shown and the page's
// polling timer.
export const state = { session: null, env: localStorage.getItem("herald.env") || "development", timer: null };

// hooks.unauthorized runs when a data route answers 401 (the session
// ended): app.js shows the sign-in form.
export const hooks = { unauthorized: () => {} };

export class APIError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

export async function call(method, path, body) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(API + path, init);
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = { message: text }; }
  }
  if (res.status === 401 && path !== "/session") hooks.unauthorized();
  if (!res.ok) throw new APIError(res.status, data);
  return data;
}

// env calls a route of the environment shown.
export const env = (method, path, body) => call(method, `/env/${encodeURIComponent(state.env)}${path}`, body);

// h builds an element: h("a", {href: "#"}, "text", child, …). Strings are
// text nodes; attributes starting with "on" are listeners.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export const $ = (sel) => document.querySelector(sel);
export const fmtTime = (t) => (t ? new Date(t).toLocaleString() : "—");
export const pretty = (v) => JSON.stringify(v, null, 2);

// fieldLines are the lines of an API error: its message, then each field's.
export function fieldLines(err) {
  const lines = [err.message];
  const fields = err.body && err.body.errors;
  if (fields) {
    for (const [field, e] of Object.entries(fields)) lines.push(`${field}: ${(e.messages || []).join("; ")}`);
  }
  return lines;
}

export function errorBox(err) {
  return h("div", { class: "error", role: "alert" }, fieldLines(err).map((l) => h("div", {}, l)));
}

export function table(headers, rows) {
  return h("div", { class: "table-wrap" },
    h("table", {}, h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: headers.length, class: "muted" }, "Nothing yet.")))));
}
