// The Workflows pages: the list, with a form that creates a workflow, and
// a workflow's page, where its name, description and status are edited,
// its steps added, removed, reordered, renamed and edited (controls and
// conditions: steps.js) and previewed as the page holds them, saved or
// not; Save is one PUT of the workflow with the whole list in its order.
// The page triggers the workflow as a test, and deletes it.
import { env, h, errorBox, fieldLines, table, fmtTime, pretty, APIError } from "./lib.js";
import { stepTypes, newControls, controlsEditor, conditionsEditor } from "./steps.js";
import { bridgeWorkflowPage } from "./bridge.js";

const typeNames = Object.fromEntries(stepTypes);
const typeOptions = () => stepTypes.map(([v, name]) => h("option", { value: v }, `${name} (${v})`));

export async function workflowsPage() {
  const { workflows } = await env("GET", "/v2/workflows?limit=100");
  workflows.sort((a, b) => a.name.localeCompare(b.name));
  const name = h("input", { id: "workflow-name", type: "text", required: true, autocomplete: "off" });
  const key = h("input", { id: "workflow-id", type: "text", autocomplete: "off", spellcheck: "false" });
  const first = h("select", { id: "workflow-first-step" }, h("option", { value: "" }, "none"), typeOptions());
  const out = h("div", { "aria-live": "polite" });
  const create = async (ev) => {
    ev.preventDefault();
    out.replaceChildren();
    if (!name.value.trim()) {
      out.replaceChildren(h("p", { class: "error", role: "alert" }, "Name the workflow."));
      name.focus();
      return;
    }
    const body = { name: name.value.trim(), steps: [] };
    if (key.value.trim()) body.workflowId = key.value.trim();
    if (first.value) {
      const stepName = typeNames[first.value];
      body.steps.push({ name: stepName, stepId: slug(stepName), type: first.value, controlValues: { ...newControls[first.value] } });
    }
    try {
      const wf = await env("POST", "/v2/workflows", body);
      location.hash = `#/workflows/${encodeURIComponent((wf.data || wf).workflowId)}`;
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  };
  return [h("h1", {}, "Workflows"),
    table(["Name", "Identifier", "Source", "Steps", "Status", "Updated"], workflows.map((w) => h("tr", {},
      h("td", {}, h("a", { href: `#/workflows/${encodeURIComponent(w.workflowId)}` }, w.name)),
      h("td", {}, h("code", {}, w.workflowId)),
      h("td", {}, w.type === "BRIDGE" ? h("span", { class: "badge", title: "synced from the Novu Framework app" }, "code-first") : "dashboard or API"),
      h("td", {}, w.steps.map((s) => s.type).join(" → ")),
      h("td", {}, h("span", { class: "badge" }, w.active ? "active" : "inactive")),
      h("td", {}, fmtTime(w.updatedAt))))),
    h("h2", {}, "Create a workflow"),
    h("form", { class: "row", onsubmit: create },
      h("div", {}, h("label", { for: name.id }, "Name"), name),
      h("div", {}, h("label", { for: key.id }, "Workflow ID (optional)"), key),
      h("div", {}, h("label", { for: first.id }, "First step (optional)"), first),
      h("button", { type: "submit" }, "Create workflow")), out];
}

// slug is the identifier the API derives from a name (httpapi slugify).
const slug = (name) => name.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-+|-+$/g, "");

export async function workflowPage(workflowId) {
  const wf = await env("GET", `/v2/workflows/${encodeURIComponent(workflowId)}`);
  if (wf.type === "BRIDGE") return bridgeWorkflowPage(wf);
  const status = h("div", { "aria-live": "polite" });
  const moved = h("p", { class: "muted", "aria-live": "polite" }); // says what changed until Save
  const list = h("div");
  let fresh = 0;

  // stepItem is one step's card and editors; a new step (isNew) is sent
  // with the stepId it shows. Its preview sends the step as the page holds
  // it (type, controls, conditions), so a step not saved yet previews too.
  const stepItem = (step, isNew) => {
    const key = isNew ? `new${++fresh}` : step.stepId;
    const controls = controlsEditor(step, key);
    const conditions = conditionsEditor(step, key);
    const item = { step, isNew, controls, conditions };
    const stepName = h("input", { id: `step-name-${key}`, type: "text", autocomplete: "off", required: true });
    stepName.value = step.name;
    // label is the name shown: the one typed, or the stepId while it is empty.
    item.label = () => stepName.value.trim() || item.step.stepId;
    item.name = () => stepName.value.trim();
    item.title = h("span", {}, step.name);
    stepName.addEventListener("input", () => {
      item.title.textContent = item.label();
      item.el.setAttribute("aria-label", `Step ${item.label()}`);
    });
    const payload = h("textarea", { id: `payload-${key}`, rows: 4, spellcheck: "false" });
    payload.value = "{}";
    const subscriber = h("input", { id: `subscriber-${key}`, type: "text", placeholder: "a sample subscriber" });
    const ctx = h("textarea", { id: `context-${key}`, rows: 2, spellcheck: "false", placeholder: '{"tenant": {"id": "acme", "data": {}}}' });
    const out = h("div", { class: "preview", "aria-live": "polite" });
    const preview = async () => {
      out.replaceChildren(h("p", { class: "muted" }, "Rendering…"));
      let body;
      try {
        body = { workflowId: wf.workflowId,
          step: { stepId: item.step.stepId, name: item.label(), type: item.step.type, controlValues: item.value() },
          payload: JSON.parse(payload.value || "{}"), subscriberId: subscriber.value.trim(),
          context: ctx.value.trim() ? JSON.parse(ctx.value) : undefined };
      } catch (e) {
        out.replaceChildren(h("p", { class: "error", role: "alert" }, e instanceof SyntaxError ? `Not JSON: ${e.message}` : e.message));
        return;
      }
      try {
        const res = await env("POST", "/preview", body);
        if (res.error) {
          out.replaceChildren(h("p", { class: "error", role: "alert" },
            `Template error${res.error.field ? ` in ${res.error.field}` : ""}: ${res.error.message}`));
        } else {
          out.replaceChildren(h("h4", {}, "Preview"), rendered(res.result));
        }
      } catch (e) {
        out.replaceChildren(errorBox(e));
      }
    };
    item.value = () => {
      const values = controls.value();
      const skip = conditions.value();
      if (skip !== undefined) values.skip = skip;
      return values;
    };
    item.number = h("span", {});
    item.ident = h("p", { class: "muted" });
    item.errors = h("div");
    item.up = h("button", { type: "button", class: "secondary", onclick: () => move(item, -1) }, "Move up");
    item.down = h("button", { type: "button", class: "secondary", onclick: () => move(item, 1) }, "Move down");
    item.remove = h("button", { type: "button", class: "secondary", onclick: () => remove(item) }, "Remove step");
    item.showIdent = () => item.ident.replaceChildren("Step identifier: ", h("code", {}, item.step.stepId),
      item.isNew ? " (new: Save adds it)" : " (kept when the step is renamed)");
    item.el = h("section", { class: "card step", "aria-label": `Step ${step.name}` },
      h("h3", {}, item.number, item.title, " ", h("span", { class: "badge" }, step.type)),
      h("div", { class: "field" }, h("label", { for: stepName.id }, "Name"), stepName),
      item.ident,
      h("div", { class: "row" }, item.up, item.down, item.remove),
      h("div", { class: "grid2" },
        h("div", {}, controls.el),
        h("div", {}, h("label", { for: payload.id }, "Payload (JSON)"), payload,
          h("label", { for: subscriber.id }, "Subscriber ID (optional)"), subscriber,
          h("label", { for: ctx.id }, "Context (JSON, optional)"), ctx,
          h("div", { class: "row" }, h("button", { type: "button", class: "secondary", onclick: preview }, "Preview")), out)),
      conditions.el, item.errors);
    return item;
  };
  const items = wf.steps.map((s) => stepItem(s, false));

  // layout puts the cards in the steps' order: their numbers, the moves
  // each may make, the earlier steps each condition may read.
  const layout = () => {
    list.replaceChildren(...(items.length ? items.map((it) => it.el) : [h("p", { class: "muted" }, "No steps yet: add one below.")]));
    items.forEach((it, i) => {
      it.number.textContent = `${i + 1}. `;
      it.up.disabled = i === 0;
      it.down.disabled = i === items.length - 1;
      it.conditions.setEarlier(items.slice(0, i).map((x) => x.step));
      it.showIdent();
    });
  };
  const move = (item, by) => {
    const from = items.indexOf(item);
    const to = from + by;
    if (to < 0 || to >= items.length) return;
    items.splice(from, 1);
    items.splice(to, 0, item);
    layout();
    // The button pressed keeps the focus, or its twin at either end.
    const button = by < 0 ? item.up : item.down;
    (button.disabled ? (by < 0 ? item.down : item.up) : button).focus();
    moved.textContent = `${item.label()} is step ${to + 1} of ${items.length} now; Save keeps the order.`;
  };
  const remove = (item) => {
    const at = items.indexOf(item);
    items.splice(at, 1);
    layout();
    const next = items[at] || items[at - 1];
    (next ? next.remove : addType).focus();
    moved.textContent = `${item.label()} is removed; Save keeps the change.`;
  };

  const addType = h("select", { id: "add-step-type" }, typeOptions());
  const addName = h("input", { id: "add-step-name", type: "text", autocomplete: "off" });
  const addOut = h("div", { "aria-live": "polite" });
  const add = () => {
    addOut.replaceChildren();
    const type = addType.value;
    const name = addName.value.trim() || typeNames[type];
    const taken = new Set(items.map((it) => it.step.stepId));
    const base = slug(name);
    if (!base) {
      addOut.replaceChildren(h("p", { class: "error", role: "alert" }, "Name the step with a letter or a digit."));
      return;
    }
    let stepId = base;
    for (let n = 2; taken.has(stepId); n++) stepId = `${base}-${n}`;
    const item = stepItem({ name, type, stepId, controlValues: { ...newControls[type] } }, true);
    items.push(item);
    layout();
    addName.value = "";
    item.controls.focus();
    moved.textContent = `${name} is added as step ${items.length}; Save keeps it.`;
  };

  const save = async () => {
    status.replaceChildren();
    for (const it of items) {
      it.errors.replaceChildren();
      it.conditions.clearError();
    }
    let steps;
    try {
      steps = items.map((it) => ({ stepId: it.step.stepId, name: it.name(), type: it.step.type, controlValues: it.value() }));
    } catch (e) {
      status.replaceChildren(h("p", { class: "error", role: "alert" }, e instanceof SyntaxError ? `Not JSON: ${e.message}` : e.message));
      return;
    }
    const sent = items.slice();
    try {
      const res = await env("PUT", `/v2/workflows/${encodeURIComponent(wf.workflowId)}`, { name: wfName.value.trim(),
        workflowId: wf.workflowId, description: wfDescription.value.trim(), tags: wf.tags, active: wfActive.checked,
        severity: wf.severity, steps });
      const now = (res && (res.data || res)) || {};
      Object.assign(wf, { name: now.name, description: now.description, active: now.active });
      title.textContent = wf.name;
      document.title = `${wf.name} · Herald dashboard`;
      const saved = now.steps || [];
      sent.forEach((it, i) => {
        if (saved[i]) it.step = saved[i];
        it.isNew = false;
      });
      layout();
      moved.textContent = "";
      status.replaceChildren(h("p", { class: "ok", role: "status" }, "Saved."));
    } catch (e) {
      status.replaceChildren(errorBox(e));
      showStepErrors(e, sent);
    }
  };

  const to = h("input", { id: "test-to", type: "text", required: true });
  const testPayload = h("textarea", { id: "test-payload", rows: 3, spellcheck: "false" });
  testPayload.value = "{}";
  const testOut = h("div", { "aria-live": "polite" });
  const trigger = async () => {
    testOut.replaceChildren();
    try {
      const res = await env("POST", "/v1/events/trigger", { name: wf.workflowId, to: to.value.trim(), payload: JSON.parse(testPayload.value || "{}") });
      const tx = (res.data || res).transactionId;
      testOut.replaceChildren(h("p", { class: "ok", role: "status" }, "Triggered: ",
        h("a", { href: `#/activity?transactionId=${encodeURIComponent(tx)}` }, tx)));
    } catch (e) {
      testOut.replaceChildren(e instanceof APIError ? errorBox(e) : h("p", { class: "error", role: "alert" }, e.message));
    }
  };

  // Deleting asks once more in the page (no dialog): Confirm delete or Cancel.
  const delOut = h("div", { "aria-live": "polite" });
  const askDelete = h("button", { type: "button", class: "secondary", onclick: () => {
    confirmRow.hidden = false;
    askDelete.hidden = true;
    confirmDelete.focus();
  } }, "Delete workflow");
  const cancelDelete = h("button", { type: "button", class: "secondary", onclick: () => {
    confirmRow.hidden = true;
    askDelete.hidden = false;
    askDelete.focus();
  } }, "Cancel");
  const confirmDelete = h("button", { type: "button", class: "danger", onclick: async () => {
    delOut.replaceChildren();
    try {
      await env("DELETE", `/v2/workflows/${encodeURIComponent(wf.workflowId)}`);
      location.hash = "#/workflows";
    } catch (e) {
      delOut.replaceChildren(errorBox(e));
    }
  } }, "Confirm delete");
  const confirmRow = h("div", { class: "row", hidden: true },
    h("p", { class: "error" }, "Delete this workflow, its steps and its translations? This cannot be undone."), confirmDelete, cancelDelete);

  const title = h("h1", {}, wf.name);
  const wfName = h("input", { id: "workflow-name", type: "text", required: true, autocomplete: "off" });
  wfName.value = wf.name;
  const wfDescription = h("textarea", { id: "workflow-description", rows: 2 });
  wfDescription.value = wf.description || "";
  const wfActive = h("input", { id: "workflow-active", type: "checkbox", checked: wf.active });
  layout();
  return [h("p", {}, h("a", { href: "#/workflows" }, "← Workflows")),
    title,
    h("section", { class: "card", "aria-label": "Workflow" },
      h("dl", { class: "kv" }, h("dt", {}, "Identifier"), h("dd", {}, h("code", {}, wf.workflowId))),
      h("div", { class: "field" }, h("label", { for: wfName.id }, "Workflow name"), wfName),
      h("label", { for: wfDescription.id }, "Description"), wfDescription,
      h("div", { class: "check" }, wfActive, h("label", { for: wfActive.id }, "Active"),
        h("span", { class: "muted" }, "(an inactive workflow is not triggered)"))),
    h("h2", {}, "Steps"), list,
    h("section", { class: "card", "aria-label": "Add a step" }, h("h3", {}, "Add a step"),
      h("form", { class: "row", onsubmit: (ev) => { ev.preventDefault(); add(); } },
        h("div", {}, h("label", { for: addType.id }, "Step type"), addType),
        h("div", {}, h("label", { for: addName.id }, "Step name"), addName),
        h("button", { type: "submit", class: "secondary" }, "Add step")), addOut),
    moved,
    h("div", { class: "row" }, h("button", { type: "button", onclick: save }, "Save")), status,
    h("h2", {}, "Trigger a test"),
    h("label", { for: "test-to" }, "Subscriber ID"), to,
    h("label", { for: "test-payload" }, "Payload (JSON)"), testPayload,
    h("div", { class: "row" }, h("button", { type: "button", class: "secondary", onclick: trigger }, "Trigger")), testOut,
    h("h2", {}, "Delete"), h("div", { class: "row" }, askDelete), confirmRow, delOut];
}

// showStepErrors puts the API's field errors of steps.N.… in step N's card
// too: the conditions' (controlValues.skip) beside them, the others under
// the card's fields.
function showStepErrors(err, sent) {
  const lines = fieldLines(err).slice(1);
  const fields = Object.keys((err.body && err.body.errors) || {});
  fields.forEach((field, i) => {
    const m = /^steps\.(\d+)\.(.*)$/.exec(field);
    const it = m && sent[Number(m[1])];
    if (!it) return;
    if (m[2].startsWith("controlValues.skip")) it.conditions.showError([lines[i]]);
    else it.errors.append(h("p", { class: "error", role: "alert" }, lines[i]));
  });
}

function rendered(result) {
  return h("dl", { class: "kv" }, Object.entries(result || {}).flatMap(([k, v]) =>
    [h("dt", {}, k), h("dd", {}, typeof v === "string" ? h("pre", {}, v) : h("pre", {}, pretty(v)))]));
}
