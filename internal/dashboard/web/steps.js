// A workflow step's two editors: its controls, with a field that fits each
// (per step type, as the public API takes them), and its conditions
// (controlValues.skip: a JSONLogic rule; the step runs only when it holds)
// as rows of a builder or as JSON. A control no field fits stays editable
// as JSON, so nothing a step holds is lost by saving it here, and the
// controls are saved in the order they are shown.
import { h, pretty } from "./lib.js";

// stepTypes are the types a step may have, with the names shown.
export const stepTypes = [["in_app", "In-app"], ["email", "Email"], ["sms", "SMS"], ["chat", "Chat"], ["push", "Push"],
  ["delay", "Delay"], ["digest", "Digest"], ["throttle", "Throttle"], ["http_request", "HTTP request"]];

// newControls are a new step's first controls, where the type needs some.
export const newControls = {
  delay: { type: "regular", amount: 5, unit: "minutes" },
  digest: { amount: 10, unit: "minutes" },
  throttle: { type: "fixed", amount: 1, unit: "hours" },
  http_request: { method: "POST" },
};

const units = ["seconds", "minutes", "hours", "days", "weeks", "months"];

// A field: k is the control's key, kind its widget; `more` fields that the
// step does not have yet wait under "More controls"; `only` shows a field
// for those values of the step's `mode` field (delay, digest and throttle's
// type) or while that is unset.
const template = (k, rows = 5, hint) => ({ k, kind: "template", rows, hint });
const text = (k, o) => ({ k, kind: "text", ...o });
const number = (k, o) => ({ k, kind: "number", ...o });
const choice = (k, options, o) => ({ k, kind: "select", options, ...o });
const flag = (k, o) => ({ k, kind: "checkbox", ...o });
const json = (k, o) => ({ k, kind: "json", ...o });

const fields = {
  in_app: [template("subject", 2), template("body"), text("avatar", { more: true }), json("primaryAction", { more: true }),
    json("secondaryAction", { more: true }), json("redirect", { more: true }), json("data", { more: true })],
  email: [template("subject", 2), template("body", 8), text("layoutId", { more: true })],
  sms: [template("body")],
  chat: [template("body")],
  push: [template("subject", 2), template("body")],
  delay: [choice("type", ["regular", "timed"], { mode: true }), number("amount", { only: ["regular"] }),
    choice("unit", units, { only: ["regular"] }), text("cron", { only: ["timed"], hint: "e.g. 0 9 * * 1" })],
  digest: [choice("type", ["regular", "timed"], { mode: true }), number("amount", { only: ["regular"] }),
    choice("unit", units, { only: ["regular"] }), text("digestKey", { hint: "optional" }),
    { k: "lookBackWindow", kind: "window", only: ["regular"] }, text("cron", { only: ["timed"], hint: "e.g. 0 9 * * *" })],
  throttle: [choice("type", ["fixed", "dynamic"], { mode: true }), number("amount", { only: ["fixed"] }),
    choice("unit", ["minutes", "hours", "days"], { only: ["fixed"] }), text("dynamicKey", { only: ["dynamic"], hint: "payload path" }),
    number("threshold", { hint: "default 1" }), text("throttleKey", { hint: "optional" })],
  http_request: [choice("method", ["GET", "POST", "PUT", "DELETE", "PATCH"]), text("url"), { k: "headers", kind: "headers" },
    template("body", 4, "JSON"), json("responseBodySchema", { more: true, hint: "JSON Schema" }),
    flag("enforceSchemaValidation", { more: true }), flag("continueOnFailure"), number("timeout", { more: true, hint: "ms" })],
};

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const onlyKeys = (v, keys) => isObject(v) && Object.keys(v).every((k) => keys.includes(k));

// fits says whether field f can show the value v without losing it.
function fits(f, v) {
  switch (f.kind) {
    case "template": case "text": return typeof v === "string";
    case "number": return typeof v === "number" && Number.isFinite(v);
    case "select": return f.options.includes(v);
    case "checkbox": return typeof v === "boolean";
    case "json": return isObject(v);
    case "window": return onlyKeys(v, ["amount", "unit"]) && (v.amount === undefined || typeof v.amount === "number")
      && (v.unit === undefined || units.includes(v.unit));
    case "headers": return Array.isArray(v) && v.every((p) => onlyKeys(p, ["key", "value"])
      && typeof p.key === "string" && typeof p.value === "string");
    default: return false;
  }
}

function parseJSON(box, what) {
  try {
    return JSON.parse(box.value);
  } catch (e) {
    throw new Error(`${what}: not JSON: ${e.message}`);
  }
}

const input = (id, value, attrs) => {
  const el = h("input", { id, type: "text", spellcheck: "false", autocomplete: "off", ...attrs });
  el.value = value ?? "";
  return el;
};

// widget builds field f's input for value v (had: the step has the key);
// get() is the control's value, undefined to leave it out.
function widget(f, id, v, had) {
  const label = (el, target = id) => h("label", { for: target }, f.k, f.hint ? ` (${f.hint})` : "", el);
  const keep = (s) => (s !== "" || had ? s : undefined);
  switch (f.kind) {
    case "template": {
      const box = h("textarea", { id, rows: f.rows, spellcheck: "false" });
      box.value = v ?? "";
      return { el: [label(), box], focus: box, get: () => keep(box.value) };
    }
    case "text": {
      const el = input(id, v);
      return { el: [label(), el], focus: el, get: () => keep(el.value) };
    }
    case "number": {
      const el = input(id, v, { type: "number", step: "any", inputmode: "decimal" });
      return { el: [label(), el], focus: el, get: () => (el.value === "" ? undefined : Number(el.value)) };
    }
    case "select": {
      const el = h("select", { id }, ["", ...f.options].map((o) => h("option", { value: o }, o || "—")));
      el.value = v ?? "";
      return { el: [label(), el], focus: el, get: () => el.value || undefined, select: el };
    }
    case "checkbox": {
      const el = h("input", { id, type: "checkbox", checked: v === true });
      return { el: h("div", { class: "check" }, el, h("label", { for: id }, f.k)), focus: el,
        get: () => (el.checked ? true : had ? false : undefined) };
    }
    case "json": {
      const box = h("textarea", { id, rows: 3, spellcheck: "false" });
      box.value = v === undefined ? "" : pretty(v);
      return { el: [label(), box], focus: box, get: () => (box.value.trim() ? parseJSON(box, f.k) : undefined) };
    }
    case "window": { // {amount, unit}
      const amount = input(`${id}-amount`, v?.amount, { type: "number", step: "any", inputmode: "decimal" });
      const unit = h("select", { id: `${id}-unit` }, ["", ...units].map((o) => h("option", { value: o }, o || "—")));
      unit.value = v?.unit ?? "";
      return { el: h("div", { class: "row" }, h("div", {}, h("label", { for: amount.id }, `${f.k} amount`), amount),
        h("div", {}, h("label", { for: unit.id }, `${f.k} unit`), unit)), focus: amount,
      get: () => (amount.value === "" && !unit.value ? undefined
        : { ...(amount.value !== "" && { amount: Number(amount.value) }), ...(unit.value && { unit: unit.value }) }) };
    }
    case "headers": return headersWidget(f, id, v, had);
  }
  throw new Error(`no widget for ${f.kind}`);
}

// headersWidget edits [{key, value}] pairs: a row each, added and removed.
function headersWidget(f, id, v, had) {
  const rows = [];
  const list = h("div");
  const add = h("button", { type: "button", class: "secondary", onclick: () => {
    push("", "");
    render();
    rows.at(-1).key.focus();
  } }, "Add header");
  const push = (key, value) => rows.push({ key: input("", key), value: input("", value) });
  const render = () => list.replaceChildren(...rows.map((r, i) => {
    const n = i + 1;
    r.key.id = `${id}-${n}-key`;
    r.value.id = `${id}-${n}-value`;
    return h("div", { class: "row pair" },
      h("div", {}, h("label", { for: r.key.id }, `Header ${n} name`), r.key),
      h("div", {}, h("label", { for: r.value.id }, `Header ${n} value`), r.value),
      h("button", { type: "button", class: "secondary", onclick: () => {
        rows.splice(i, 1);
        render();
        const next = rows[i] || rows[i - 1];
        (next ? next.key : add).focus();
      } }, `Remove header ${n}`));
  }));
  for (const p of v || []) push(p.key, p.value);
  render();
  return { el: h("fieldset", { class: "pairs" }, h("legend", {}, f.k), list, add), focus: add,
    get: () => {
      const out = rows.map((r) => ({ key: r.key.value.trim(), value: r.value.value })).filter((p) => p.key);
      return out.length || had ? out : undefined;
    } };
}

// controlsEditor edits a step's controls (all but skip, the conditions'):
// the fields of its type in the order the step has them, then those it
// has not yet (the rarer under "More controls"), then, as JSON, any
// control no field fits. value() returns them in that order, or throws
// when a JSON box does not parse. key makes the inputs' ids unique.
export function controlsEditor(step, key) {
  const values = step.controlValues || {};
  const own = Object.keys(values).filter((k) => k !== "skip");
  const spec = fields[step.type];
  if (!spec) return jsonControls(step, key, own);
  const known = new Map(spec.map((f) => [f.k, f]));
  const shown = own.filter((k) => known.has(k) && fits(known.get(k), values[k])).map((k) => known.get(k));
  const absent = spec.filter((f) => !own.includes(f.k));
  const widgets = [...shown, ...absent.filter((f) => !f.more), ...absent.filter((f) => f.more)].map((f) => {
    const w = widget(f, `control-${key}-${f.k}`, values[f.k], own.includes(f.k));
    return { f, ...w, wrap: h("div", { class: "field" }, w.el) };
  });
  const mode = widgets.find((w) => w.f.mode && w.select);
  const visible = (w) => !w.f.only || !mode || !mode.select.value || w.f.only.includes(mode.select.value);
  const showMode = () => { for (const w of widgets) w.wrap.hidden = !visible(w); };
  if (mode) mode.select.addEventListener("change", showMode);
  showMode();
  const otherKeys = own.filter((k) => !shown.some((f) => f.k === k));
  const other = h("textarea", { id: `control-${key}-other`, rows: 4, spellcheck: "false" });
  other.value = otherKeys.length ? pretty(Object.fromEntries(otherKeys.map((k) => [k, values[k]]))) : "";
  const more = widgets.filter((w) => w.f.more && !own.includes(w.f.k));
  const main = widgets.filter((w) => !more.includes(w));
  const el = [main.map((w) => w.wrap),
    h("details", { class: "more", open: otherKeys.length > 0 }, h("summary", {}, "More controls"), more.map((w) => w.wrap),
      h("label", { for: other.id }, "Other controls (JSON)"), other)];
  return {
    el, focus: () => widgets[0]?.focus.focus(),
    value: () => {
      const out = {};
      for (const w of widgets) {
        if (!visible(w)) continue;
        const v = w.get();
        if (v !== undefined) out[w.f.k] = v;
      }
      const rest = other.value.trim() ? parseJSON(other, "Other controls") : {};
      if (!isObject(rest)) throw new Error("Other controls: not a JSON object");
      delete rest.skip; // the conditions' own
      return Object.assign(out, rest);
    },
  };
}

// jsonControls edits the controls of a type without fields of its own: a
// text box per control when all are text, else one JSON box.
function jsonControls(step, key, own) {
  const values = step.controlValues || {};
  if (own.length && own.every((k) => typeof values[k] === "string")) {
    const boxes = own.map((k) => {
      const box = h("textarea", { id: `control-${key}-${k}`, rows: k === "subject" ? 2 : 5, spellcheck: "false" });
      box.value = values[k];
      return { k, box };
    });
    return { el: boxes.map(({ k, box }) => [h("label", { for: box.id }, k), box]), focus: () => boxes[0].box.focus(),
      value: () => Object.fromEntries(boxes.map(({ k, box }) => [k, box.value])) };
  }
  const box = h("textarea", { id: `controls-${key}`, rows: 8, spellcheck: "false" });
  box.value = pretty(Object.fromEntries(own.map((k) => [k, values[k]])));
  return { el: [h("label", { for: box.id }, "Controls (JSON)"), box], focus: () => box.focus(),
    value: () => parseJSON(box, "Controls") };
}

// ---- Conditions ----------------------------------------------------------------

// operators the builder offers: each takes the field and a value, but
// null and notNull, which take the field alone (Novu's operations beside
// json-logic-js's; docs/dashboard.md).
const operators = [["==", "equals"], ["!=", "does not equal"], [">", "greater than"], [">=", "at least"],
  ["<", "less than"], ["<=", "at most"], ["contains", "contains"], ["doesNotContain", "does not contain"],
  ["startsWith", "starts with"], ["doesNotBeginWith", "does not start with"], ["endsWith", "ends with"],
  ["doesNotEndWith", "does not end with"], ["in", "is in (a list or text)"], ["notIn", "is not in (a list)"],
  ["between", "between [min, max]"], ["notBetween", "not between [min, max]"], ["null", "is null (missing)"],
  ["notNull", "is not null"], ["moreThanXAgo", "more than {amount, unit} ago"], ["lessThanXAgo", "less than {amount, unit} ago"]];
const unary = new Set(["null", "notNull"]);
const known = new Set(operators.map(([op]) => op));

// toRows reads a JSONLogic rule as the builder's rows, or null when the
// builder cannot show it: {} or nothing is no row; one rule of the field
// and a value is a row; "and"/"or" of such rules are rows joined so.
export function toRows(rule) {
  if (rule === undefined || rule === null || (isObject(rule) && !Object.keys(rule).length)) return { join: "and", rows: [] };
  if (!isObject(rule) || Object.keys(rule).length !== 1) return null;
  const [op] = Object.keys(rule);
  if ((op === "and" || op === "or") && Array.isArray(rule[op])) {
    const rows = rule[op].map(toRow);
    return rows.includes(null) ? null : { join: op, rows };
  }
  const row = toRow(rule);
  return row && { join: "and", rows: [row] };
}

function toRow(rule) {
  if (!isObject(rule) || Object.keys(rule).length !== 1) return null;
  const [op] = Object.keys(rule);
  const args = rule[op];
  if (!known.has(op) || !Array.isArray(args) || args.length !== (unary.has(op) ? 1 : 2)) return null;
  const field = args[0];
  if (!onlyKeys(field, ["var"]) || typeof field.var !== "string") return null;
  return { field: field.var, op, value: args[1] };
}

// fromRows writes the builder's rows as JSONLogic; no row is no rule.
export function fromRows(join, rows) {
  if (!rows.length) return undefined;
  return { [join]: rows.map((r) => ({ [r.op]: unary.has(r.op) ? [{ var: r.field }] : [{ var: r.field }, r.value] })) };
}

// A value is typed as JSON when it parses (false, 3, "3", ["a", "b"],
// {"var": …}), else it is the text; shown so that it reads back the same.
export const parseValue = (s) => { try { return JSON.parse(s); } catch { return s; } };
export function showValue(v) {
  if (v === undefined) return "";
  if (typeof v !== "string") return JSON.stringify(v);
  return parseValue(v) === v ? v : JSON.stringify(v);
}

// outputs are the fields a step gives the steps after it (steps.<stepId>.…).
const outputs = { in_app: ["read", "seen", "lastReadDate", "lastSeenDate"], throttle: ["throttled", "executionCount", "threshold"],
  digest: ["eventCount", "events"], delay: ["duration"], http_request: [""] };
const bindings = ["payload.", "subscriber.subscriberId", "subscriber.firstName", "subscriber.lastName", "subscriber.email",
  "subscriber.phone", "subscriber.locale", "subscriber.data.", "subscriber.isOnline", "workflow.workflowId", "workflow.tags"];

// conditionsEditor edits a step's conditions: the builder's rows, or a
// JSON box for a rule the builder cannot show. value() is the rule
// (undefined for none) or throws; untouched, it is the step's own rule as
// it came. setEarlier(steps) offers those steps' outputs as fields.
export function conditionsEditor(step, key) {
  const initial = step.controlValues ? step.controlValues.skip : undefined;
  let dirty = false;
  const paths = h("datalist", { id: `cond-${key}-paths` });
  const join = h("select", { id: `cond-${key}-join` },
    h("option", { value: "and" }, "all of the conditions hold"), h("option", { value: "or" }, "any of the conditions holds"));
  const rows = [];
  const list = h("div");
  const error = h("div", { id: `cond-${key}-error`, class: "field-error" });
  const box = h("textarea", { id: `cond-${key}-json`, rows: 5, spellcheck: "false", placeholder: '{"and": [{"==": [{"var": "payload.vip"}, true]}]}' });
  const asJSON = h("input", { id: `cond-${key}-as-json`, type: "checkbox" });
  const addRow = (r = { field: "", op: "==", value: undefined }) => {
    const field = input("", r.field, { list: paths.id, placeholder: "payload.vip" });
    const op = h("select", {}, operators.map(([o, words]) => h("option", { value: o }, `${o} (${words})`)));
    op.value = r.op;
    const value = input("", showValue(r.value), { placeholder: "true, 3, \"text\" or text" });
    const showValueInput = () => { value.parentElement.hidden = unary.has(op.value); };
    op.addEventListener("change", showValueInput);
    rows.push({ field, op, value, showValueInput });
  };
  const none = h("p", { class: "muted" }, "None: the step always runs.");
  const joinRow = h("div", {}, h("label", { for: join.id }, "Run the step when"), join);
  const renderRows = () => {
    none.hidden = rows.length > 0;
    joinRow.hidden = rows.length === 0;
    list.replaceChildren(...rows.map(row));
  };
  const row = (r, i) => {
    const n = i + 1;
    [r.field.id, r.op.id, r.value.id] = [`cond-${key}-${n}-field`, `cond-${key}-${n}-op`, `cond-${key}-${n}-value`];
    const el = h("div", { class: "row cond" },
      h("div", { class: "cond-field" }, h("label", { for: r.field.id }, `Condition ${n} field`), r.field),
      h("div", {}, h("label", { for: r.op.id }, `Condition ${n} operator`), r.op),
      h("div", { class: "cond-value" }, h("label", { for: r.value.id }, `Condition ${n} value`), r.value),
      h("button", { type: "button", class: "secondary", onclick: () => {
        rows.splice(i, 1);
        dirty = true;
        renderRows();
        const next = rows[i] || rows[i - 1];
        (next ? next.field : add).focus();
      } }, `Remove condition ${n}`));
    r.showValueInput();
    return el;
  };
  const add = h("button", { type: "button", class: "secondary", onclick: () => {
    addRow();
    dirty = true;
    renderRows();
    rows.at(-1).field.focus();
  } }, "Add condition");
  const load = (parsed) => {
    rows.length = 0;
    join.value = parsed.join;
    for (const r of parsed.rows) addRow(r);
    renderRows();
  };
  const builderRule = () => fromRows(join.value, rows.map((r, i) => {
    if (!r.field.value.trim()) throw new Error(`Conditions of ${step.name}: condition ${i + 1} names no field`);
    return { field: r.field.value.trim(), op: r.op.value, value: parseValue(r.value.value) };
  }));
  const builder = h("div", {}, none, joinRow, list, h("div", { class: "row" }, add));
  const jsonPart = h("div", {}, h("label", { for: box.id }, "Conditions (JSON)"), box);
  const note = h("p", { class: "muted" });
  const showMode = () => {
    builder.hidden = asJSON.checked;
    jsonPart.hidden = !asJSON.checked;
  };
  asJSON.addEventListener("change", () => {
    note.textContent = "";
    if (asJSON.checked) {
      try {
        const rule = builderRule();
        box.value = rule === undefined ? "" : pretty(rule);
      } catch { box.value = ""; }
    } else {
      let parsed = null;
      try { parsed = toRows(box.value.trim() ? JSON.parse(box.value) : undefined); } catch { /* not JSON */ }
      if (!parsed) {
        asJSON.checked = true;
        note.textContent = "The builder cannot show these conditions: edit them as JSON.";
      } else {
        load(parsed);
      }
    }
    showMode();
  });
  const parsed = toRows(initial);
  if (parsed) {
    load(parsed);
  } else {
    asJSON.checked = true;
    box.value = pretty(initial);
    note.textContent = "The builder cannot show these conditions: they are shown as JSON.";
  }
  showMode();
  const el = h("fieldset", { class: "conditions", oninput: () => { dirty = true; }, onchange: () => { dirty = true; } },
    h("legend", {}, "Conditions: the step runs only when they hold"), builder, jsonPart, h("div", { class: "check" }, asJSON, h("label", { for: asJSON.id }, "Edit conditions as JSON")), note, error, paths);
  return {
    el,
    value: () => {
      if (!dirty) return initial;
      if (!asJSON.checked) return builderRule();
      if (!box.value.trim()) return undefined;
      return parseJSON(box, `Conditions of ${step.name}`);
    },
    setEarlier: (steps) => {
      const ids = steps.flatMap((s) => (outputs[s.type] || []).map((o) => `steps.${s.stepId}.${o}`));
      paths.replaceChildren(...[...bindings, ...ids].map((p) => h("option", { value: p })));
    },
    showError: (lines) => {
      error.replaceChildren(h("div", { class: "error", role: "alert" }, lines.map((l) => h("div", {}, l))));
      box.setAttribute("aria-invalid", "true");
      box.setAttribute("aria-describedby", error.id);
    },
    clearError: () => {
      error.replaceChildren();
      box.removeAttribute("aria-invalid");
      box.removeAttribute("aria-describedby");
    },
  };
}
