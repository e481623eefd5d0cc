// The page of a workflow synced from a Novu Framework app (its API type is
// BRIDGE): its steps and their content are written in the app's code, so
// the page shows them as the app declared them, edits what may change here
// — each step's control values (JSON, checked against the schema the app
// declares when the step runs) and whether the workflow is active — and
// previews a step through the app itself: the API's step preview of a
// synced step calls the bridge's preview action with the controls and the
// payload the page holds, saved or not.
import { env, h, errorBox, pretty, APIError } from "./lib.js";

export function bridgeWorkflowPage(wf) {
  const status = h("div", { "aria-live": "polite" });
  const cards = wf.steps.map((step) => {
    const key = step.stepId;
    const values = h("textarea", { id: `controls-${key}`, rows: 6, spellcheck: "false" });
    values.value = pretty(step.controlValues || {});
    const schema = step.controls && step.controls.dataSchema;
    const payload = h("textarea", { id: `payload-${key}`, rows: 4, spellcheck: "false" });
    payload.value = "{}";
    const subscriber = h("input", { id: `subscriber-${key}`, type: "text", placeholder: "a sample subscriber" });
    const out = h("div", { class: "preview", "aria-live": "polite" });
    const card = { step, values };
    const preview = async () => {
      out.replaceChildren(h("p", { class: "muted" }, "Asking the bridge…"));
      let body;
      try {
        body = { controlValues: JSON.parse(values.value || "{}"), previewPayload: { payload: JSON.parse(payload.value || "{}") } };
      } catch (e) {
        out.replaceChildren(h("p", { class: "error", role: "alert" }, `Not JSON: ${e.message}`));
        return;
      }
      if (subscriber.value.trim()) body.previewPayload.subscriber = { subscriberId: subscriber.value.trim() };
      try {
        const res = await env("POST", `/v2/workflows/${encodeURIComponent(wf.workflowId)}/step/${encodeURIComponent(step.stepId)}/preview`, body);
        const result = (res.data || res).result || {};
        out.replaceChildren(h("h4", {}, "Preview (rendered by the bridge)"), outputs(result.preview));
      } catch (e) {
        out.replaceChildren(errorBox(e));
      }
    };
    card.el = h("section", { class: "card step", "aria-label": `Step ${step.name}` },
      h("h3", {}, step.name, " ", h("span", { class: "badge" }, step.type)),
      h("p", { class: "muted" }, "Step identifier: ", h("code", {}, step.stepId), " (written in the app's code)"),
      h("div", { class: "grid2" },
        h("div", {}, h("label", { for: values.id }, "Control values (JSON)"), values,
          schema ? h("details", {}, h("summary", {}, "Control schema declared by the app"), h("pre", {}, pretty(schema))) : null),
        h("div", {}, h("label", { for: payload.id }, "Payload (JSON)"), payload,
          h("label", { for: subscriber.id }, "Subscriber ID (optional)"), subscriber,
          h("div", { class: "row" }, h("button", { type: "button", class: "secondary", onclick: preview }, "Preview")), out)));
    return card;
  });

  const active = h("input", { id: "workflow-active", type: "checkbox", checked: wf.active });
  const save = async () => {
    status.replaceChildren();
    let steps;
    try {
      steps = cards.map((c) => ({ stepId: c.step.stepId, name: c.step.name, type: c.step.type, controlValues: JSON.parse(c.values.value || "{}") }));
    } catch (e) {
      status.replaceChildren(h("p", { class: "error", role: "alert" }, `Not JSON: ${e.message}`));
      return;
    }
    try {
      const res = await env("PUT", `/v2/workflows/${encodeURIComponent(wf.workflowId)}`, { name: wf.name, workflowId: wf.workflowId,
        description: wf.description, tags: wf.tags, active: active.checked, severity: wf.severity, steps });
      const now = (res && (res.data || res)) || {};
      wf.active = now.active;
      status.replaceChildren(h("p", { class: "ok", role: "status" }, "Saved."));
    } catch (e) {
      status.replaceChildren(errorBox(e));
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

  return [h("p", {}, h("a", { href: "#/workflows" }, "← Workflows")),
    h("h1", {}, wf.name),
    h("section", { class: "card", "aria-label": "Workflow" },
      h("p", { class: "notice" }, h("span", { class: "badge" }, "code-first"),
        " Synced from the environment's Novu Framework app (the bridge). Its steps and their content are written in the app's code:",
        " change them there and run ", h("code", {}, "npx novu sync"), " again. Here you can change the step control values and whether it is active."),
      h("dl", { class: "kv" }, h("dt", {}, "Identifier"), h("dd", {}, h("code", {}, wf.workflowId)),
        wf.description ? [h("dt", {}, "Description"), h("dd", {}, wf.description)] : null),
      h("div", { class: "check" }, active, h("label", { for: active.id }, "Active"),
        h("span", { class: "muted" }, "(an inactive workflow is not triggered)"))),
    h("h2", {}, "Steps"), cards.length ? cards.map((c) => c.el) : h("p", { class: "muted" }, "The app declares no steps."),
    h("div", { class: "row" }, h("button", { type: "button", onclick: save }, "Save")), status,
    h("h2", {}, "Trigger a test"),
    h("label", { for: to.id }, "Subscriber ID"), to,
    h("label", { for: testPayload.id }, "Payload (JSON)"), testPayload,
    h("div", { class: "row" }, h("button", { type: "button", class: "secondary", onclick: trigger }, "Trigger")), testOut];
}

// outputs shows a step's outputs as the bridge rendered them.
function outputs(preview) {
  return h("dl", { class: "kv" }, Object.entries(preview || {}).flatMap(([k, v]) =>
    [h("dt", {}, k), h("dd", {}, h("pre", {}, typeof v === "string" ? v : pretty(v)))]));
}
