// The Webhooks pages: the environment's endpoints (the public API's
// /v2/webhooks/endpoints, through the dashboard's forwarding), a form that
// creates one, and an endpoint's page: its settings and event types
// edited, disabled or enabled, its secret rotated, the endpoint deleted
// (after a confirmation in the page), and its recent deliveries, polled.
// A secret is shown once, in the answer that made it (create, rotate):
// the pages read endpoints from the list, which masks them.
import { state, call, env, h, errorBox, table, fmtTime, APIError } from "./lib.js";

let eventTypes = null; // the event types an endpoint may take, read once

const types = async () => {
  eventTypes = eventTypes || (await call("GET", "/webhook-event-types")).data;
  return eventTypes;
};

const endpointsPath = "/v2/webhooks/endpoints";
const typesText = (e) => (e.eventTypes.length ? e.eventTypes.join(", ") : "all");

// typeChoices are the event types as checkboxes (key names their ids);
// none checked means every type, those added later included.
function typeChoices(all, checked, key) {
  const boxes = all.map((t) => h("input", { id: `wh-${key}-${t}`, type: "checkbox", value: t, checked: checked.includes(t) }));
  const el = h("fieldset", {}, h("legend", {}, "Event types"),
    h("p", { class: "hint" }, "None checked: every event type, those added later included."),
    h("div", { class: "choices" }, boxes.map((b) => h("div", { class: "check" }, b, h("label", { for: b.id }, b.value)))));
  return { el, value: () => boxes.filter((b) => b.checked).map((b) => b.value) };
}

// secretShown shows a secret once, with what to do with it; Done draws the
// page again, without it.
function secretShown(message, secret, done) {
  const hint = h("p", { class: "muted", "aria-live": "polite" });
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      hint.textContent = "Copied.";
    } catch {
      hint.textContent = "Select the secret and copy it.";
    }
  };
  return h("div", { class: "card", role: "status" },
    h("p", {}, message, " Copy it now: it is not shown again."),
    h("pre", { class: "new-secret" }, secret),
    h("div", { class: "row" }, h("button", { type: "button", class: "secondary", onclick: copy }, "Copy secret"),
      h("button", { type: "button", class: "secondary", onclick: done }, "Done")), hint);
}

// Each page takes route, which draws the page shown again.
export async function webhooksPage(route) {
  const [list, all] = await Promise.all([env("GET", endpointsPath), types()]);
  const url = h("input", { id: "webhook-url", type: "url", required: true, autocomplete: "off", "aria-describedby": "webhook-url-hint" });
  const description = h("input", { id: "webhook-description", type: "text", autocomplete: "off" });
  const chosen = typeChoices(all, [], "new");
  const out = h("div", { "aria-live": "polite" });
  const create = async (ev) => {
    ev.preventDefault();
    out.replaceChildren();
    const body = { url: url.value.trim(), eventTypes: chosen.value() };
    if (description.value.trim()) body.description = description.value.trim();
    try {
      const e = await env("POST", endpointsPath, body);
      out.replaceChildren(secretShown(`Endpoint created for ${e.url}. Its signing secret:`, e.secret, route),
        h("p", {}, h("a", { href: `#/webhooks/${encodeURIComponent(e.id)}` }, "Open the endpoint")));
      listBox.replaceChildren(endpointsTable([...list, e]));
      out.querySelector("button")?.focus();
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  };
  const listBox = h("div", {}, endpointsTable(list));
  return [h("h1", {}, "Webhooks"),
    h("p", { class: "muted" }, "Herald posts the environment's events (messages, workflows, preferences) to these endpoints,",
      " signed with each endpoint's secret as Standard Webhooks sign them."),
    listBox,
    h("section", { class: "card", "aria-label": "Create an endpoint" }, h("h2", {}, "Create an endpoint"),
      h("form", { onsubmit: create },
        h("label", { for: url.id }, "Endpoint URL"), url,
        h("p", { id: "webhook-url-hint", class: "hint" }, "An absolute http or https URL on your app."),
        h("label", { for: description.id }, "Description (optional)"), description,
        chosen.el,
        h("button", { type: "submit" }, "Create endpoint"))),
    out];
}

function endpointsTable(list) {
  return table(["URL", "Description", "Event types", "Status"], list.map((e) => h("tr", {},
    h("td", {}, h("a", { href: `#/webhooks/${encodeURIComponent(e.id)}` }, e.url)),
    h("td", {}, e.description || ""),
    h("td", {}, typesText(e)),
    h("td", {}, h("span", { class: `badge ${e.disabled ? "failed" : "completed"}` }, e.disabled ? "disabled" : "enabled")))));
}

export async function webhookPage(id, route) {
  const [list, all] = await Promise.all([env("GET", endpointsPath), types()]);
  const e = list.find((x) => x.id === id);
  if (!e) throw new APIError(404, { message: "No such webhook endpoint in this environment" });
  const path = `${endpointsPath}/${encodeURIComponent(id)}`;
  const out = h("div", { "aria-live": "polite" });
  const act = (fn) => async () => {
    out.replaceChildren();
    try {
      await fn();
    } catch (err) {
      out.replaceChildren(errorBox(err));
    }
  };

  const url = h("input", { id: "webhook-url", type: "url", required: true, autocomplete: "off", value: e.url });
  const description = h("input", { id: "webhook-description", type: "text", autocomplete: "off", value: e.description || "" });
  const chosen = typeChoices(all, e.eventTypes, "edit");
  const save = act(async () => {
    await env("PATCH", path, { url: url.value.trim(), description: description.value.trim(), eventTypes: chosen.value() });
    route();
  });
  const toggle = act(async () => {
    await env("PATCH", path, { disabled: !e.disabled });
    route();
  });
  const rotate = act(async () => {
    const r = await env("POST", `${path}/rotate-secret`);
    out.replaceChildren(secretShown("The endpoint's new signing secret (the old one still signs beside it for 24 hours):", r.secret, route));
    out.querySelector("button")?.focus();
  });

  // Deleting asks once more in the page (no dialog): Confirm delete or Cancel.
  const askDelete = h("button", { type: "button", class: "secondary", onclick: () => {
    confirmRow.hidden = false;
    askDelete.hidden = true;
    confirmDelete.focus();
  } }, "Delete endpoint");
  const cancelDelete = h("button", { type: "button", class: "secondary", onclick: () => {
    confirmRow.hidden = true;
    askDelete.hidden = false;
    askDelete.focus();
  } }, "Cancel");
  const confirmDelete = h("button", { type: "button", class: "danger", onclick: act(async () => {
    clearInterval(state.timer); // no poll of the deliveries of an endpoint gone
    await env("DELETE", path);
    location.hash = "#/webhooks";
  }) }, "Confirm delete");
  const confirmRow = h("div", { class: "row", hidden: true },
    h("p", { class: "error" }, "Delete this endpoint and its deliveries? Its events are no longer sent. This cannot be undone."),
    confirmDelete, cancelDelete);

  // The recent deliveries, polled so that new attempts appear.
  const deliveries = h("div", { "aria-live": "polite" });
  const load = async () => {
    try {
      const rows = await env("GET", `${path}/deliveries`);
      deliveries.replaceChildren(table(["Event type", "Attempt", "Status code", "Success", "Error", "Attempted at", "Next attempt"],
        rows.map((d) => h("tr", {},
          h("td", {}, d.eventType),
          h("td", {}, String(d.attempt)),
          h("td", {}, d.statusCode === null ? "no answer" : String(d.statusCode)),
          h("td", {}, h("span", { class: `badge ${d.success ? "success" : "failed"}` }, d.success ? "yes" : "no")),
          h("td", {}, d.error || ""),
          h("td", {}, fmtTime(d.attemptedAt)),
          h("td", {}, d.nextAttemptAt ? fmtTime(d.nextAttemptAt) : "—")))));
    } catch (err) {
      if (err.status !== 401 && err.status !== 404) deliveries.replaceChildren(errorBox(err));
    }
  };
  await load();
  state.timer = setInterval(load, 3000);

  return [h("p", {}, h("a", { href: "#/webhooks" }, "← Webhooks")),
    h("h1", {}, e.url),
    h("dl", { class: "kv" },
      h("dt", {}, "Status"), h("dd", {}, h("span", { class: `badge ${e.disabled ? "failed" : "completed"}` }, e.disabled ? "disabled" : "enabled")),
      h("dt", {}, "Event types"), h("dd", {}, typesText(e)),
      h("dt", {}, "Description"), h("dd", {}, e.description || "—"),
      h("dt", {}, "Signing secret"), h("dd", {}, h("code", {}, e.secret), " ", h("span", { class: "muted" }, "(shown only when made: create or rotate)")),
      h("dt", {}, "Created"), h("dd", {}, fmtTime(e.createdAt))),
    out,
    h("div", { class: "row" },
      h("button", { type: "button", class: "secondary", onclick: toggle }, e.disabled ? "Enable endpoint" : "Disable endpoint"),
      h("button", { type: "button", class: "secondary", onclick: rotate }, "Rotate secret"),
      askDelete),
    confirmRow,
    h("section", { class: "card", "aria-label": "Endpoint settings" }, h("h2", {}, "Settings"),
      h("form", { onsubmit: (ev) => { ev.preventDefault(); save(); } },
        h("label", { for: url.id }, "Endpoint URL"), url,
        h("label", { for: description.id }, "Description (optional)"), description,
        chosen.el,
        h("button", { type: "submit" }, "Save endpoint"))),
    h("h2", {}, "Recent deliveries"),
    h("p", { class: "muted" }, "Each attempt to post an event, newest first."),
    deliveries];
}
