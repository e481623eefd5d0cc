// Herald's dashboard: a small vanilla front end, served as is (no build
// step), in modules: lib.js (the client of the dashboard's routes, the
// element builder), workflows.js and steps.js (the Workflows pages and a
// step's editors), and this one (sign-in, routing and the other pages).
// Every request goes to the dashboard's own routes under /dashboard/api/
// with the session cookie; the data routes are the public API's, under
// /dashboard/api/env/<environment>/. Text from the server is only ever set
// as text (textContent), never parsed as HTML.
import { state, hooks, APIError, call, env, h, $, fmtTime, pretty, errorBox, table } from "./lib.js";
import { workflowsPage, workflowPage } from "./workflows.js";
import { webhooksPage, webhookPage } from "./webhooks.js";
import { analyticsPage } from "./analytics.js";

hooks.unauthorized = () => showSignIn();

// ---- Sign-in and the frame ------------------------------------------------

function showSignIn() {
  stopPolling();
  state.session = null;
  $("#app").hidden = true;
  $("#signin").hidden = false;
  $("#email").focus();
}

async function signIn(ev) {
  ev.preventDefault();
  const err = $("#signin-error");
  err.hidden = true;
  const button = ev.target.querySelector("button");
  button.disabled = true;
  try {
    state.session = await call("POST", "/session", { email: $("#email").value, password: $("#password").value });
    $("#password").value = "";
    showApp();
  } catch (e) {
    err.textContent = e.status === 401 ? "Wrong email or password." : e.message;
    err.hidden = false;
    $("#password").focus();
  } finally {
    button.disabled = false;
  }
}

async function signOut() {
  try { await call("DELETE", "/session"); } catch { /* signed out already */ }
  location.hash = "";
  showSignIn();
}

function showApp() {
  $("#signin").hidden = true;
  $("#app").hidden = false;
  $("#who").textContent = state.session.email;
  const names = state.session.environments.map((e) => e.name);
  if (!names.includes(state.env)) state.env = names[0] || "development";
  const select = $("#env");
  select.replaceChildren(...names.map((n) => h("option", { value: n, selected: n === state.env }, n[0].toUpperCase() + n.slice(1))));
  route();
}

function switchEnv() {
  state.env = $("#env").value;
  localStorage.setItem("herald.env", state.env);
  const [page] = location.hash.replace(/^#\//, "").split("?")[0].split("/");
  location.hash = `#/${page || "workflows"}`; // a record of one environment is not in the other
  route();
}

// ---- Routing ---------------------------------------------------------------

const pages = {
  workflows: (id) => (id ? workflowPage(id) : workflowsPage()),
  activity: (id) => (id ? triggerPage(id) : activityPage()),
  analytics: () => analyticsPage(),
  subscribers: (id) => (id ? subscriberPage(id) : subscribersPage()),
  topics: (key) => (key ? topicPage(key) : topicsPage()),
  integrations: (rest) => (rest.startsWith("new/") ? integrationForm(rest.slice(4))
    : rest.startsWith("edit/") ? editIntegrationPage(rest.slice(5)) : integrationsPage()),
  webhooks: (id) => (id ? webhookPage(id, route) : webhooksPage(route)),
  "api-keys": () => apiKeysPage(),
};

async function route() {
  if (!state.session) return;
  stopPolling();
  const [page, ...rest] = location.hash.replace(/^#\//, "").split("?")[0].split("/");
  const name = pages[page] ? page : "workflows";
  for (const a of document.querySelectorAll("[data-nav]")) {
    if (a.dataset.nav === name) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const view = $("#view");
  view.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  try {
    const content = await pages[name](rest.length ? decodeURIComponent(rest.join("/")) : "");
    view.replaceChildren(...[content].flat(Infinity));
  } catch (e) {
    if (e.status === 401) return;
    view.replaceChildren(h("h1", {}, "Something went wrong"), errorBox(e));
  }
  document.title = `${$("#view h1")?.textContent || "Herald"} · Herald dashboard`;
}

function stopPolling() {
  if (state.timer) { clearInterval(state.timer); clearTimeout(state.timer); }
  state.timer = null;
}

function channelList(channels) {
  return Object.entries(channels || {}).map(([ch, on]) => `${ch} ${on ? "on" : "off"}`).join(", ");
}

// ---- Activity ----------------------------------------------------------------

async function activityPage() {
  const params = new URLSearchParams(location.hash.split("?")[1] || "");
  const inputs = {
    workflow: h("input", { id: "f-workflow", type: "text", value: params.get("workflow") || "" }),
    subscriberId: h("input", { id: "f-subscriberId", type: "text", value: params.get("subscriberId") || "" }),
    transactionId: h("input", { id: "f-transactionId", type: "text", value: params.get("transactionId") || "" }),
    channel: h("select", { id: "f-channel" }, ["", "in_app", "email", "sms", "chat", "push"].map((c) => h("option", { value: c }, c || "any"))),
    status: h("select", { id: "f-status" }, ["", "completed", "in progress", "failed", "canceled"].map((c) => h("option", { value: c }, c || "any"))),
  };
  const labels = { workflow: "Workflow", subscriberId: "Subscriber ID", transactionId: "Transaction ID", channel: "Channel", status: "Status" };
  let page = 0; // pages of 50, newest first; the filters (status too) apply on the server
  const form = h("form", { class: "row", onsubmit: (ev) => { ev.preventDefault(); page = 0; load(); } },
    Object.entries(inputs).map(([k, el]) => h("div", {}, h("label", { for: el.id }, labels[k]), el)),
    h("button", { type: "submit", class: "secondary" }, "Filter"));
  const body = h("div", { "aria-live": "polite" });
  const newer = h("button", { type: "button", class: "secondary", hidden: true, onclick: () => { page = Math.max(0, page - 1); load(); } }, "Newer");
  const older = h("button", { type: "button", class: "secondary", hidden: true, onclick: () => { page++; load(); } }, "Older");
  const load = async () => {
    const q = new URLSearchParams();
    for (const [k, el] of Object.entries(inputs)) if (el.value.trim()) q.set(k, el.value.trim());
    if (page > 0) q.set("page", String(page));
    try {
      const res = await env("GET", `/activity?${q}`);
      newer.hidden = page === 0;
      older.hidden = !res.hasMore;
      body.replaceChildren(table(["Time", "Transaction ID", "Workflow", "Subscriber", "Channels", "Status"], res.data.map((n) => h("tr", {},
        h("td", {}, fmtTime(n.createdAt)),
        h("td", {}, h("a", { href: `#/activity/${encodeURIComponent(n._id)}` }, n.transactionId)),
        h("td", {}, n.workflowName),
        h("td", {}, n.subscriberId),
        h("td", {}, n.channels.join(", ")),
        h("td", {}, h("span", { class: `badge ${n.status}` }, n.status))))));
    } catch (e) {
      if (e.status !== 401) body.replaceChildren(errorBox(e));
    }
  };
  await load();
  state.timer = setInterval(load, 3000); // new triggers appear without a reload
  return [h("h1", {}, "Activity"), form, body, h("div", { class: "row" }, newer, older)];
}

async function triggerPage(id) {
  const res = await env("GET", `/v1/notifications/${encodeURIComponent(id)}`);
  const n = res.data || res;
  const msgs = await env("GET", `/v1/messages?transactionId=${encodeURIComponent(n.transactionId)}&limit=100`).catch(() => ({ data: [] }));
  if ((n.jobs || []).some((j) => ["pending", "queued", "running", "delayed"].includes(j.status))) {
    state.timer = setTimeout(route, 2000); // steps still to run: the page follows them
  }
  return [h("p", {}, h("a", { href: "#/activity" }, "← Activity")),
    h("h1", {}, `Trigger ${n.transactionId}`),
    h("dl", { class: "kv" },
      h("dt", {}, "Workflow"), h("dd", {}, (n.template && n.template.name) || ""),
      h("dt", {}, "Subscriber"), h("dd", {}, (n.subscriber && n.subscriber.subscriberId) || ""),
      h("dt", {}, "Created"), h("dd", {}, fmtTime(n.createdAt))),
    h("h3", {}, "Payload"), h("pre", {}, pretty(n.payload || {})),
    h("h2", {}, "Steps"),
    (n.jobs || []).map((job) => h("section", { class: "card job" },
      h("h3", {}, (job.step && job.step.name) || job.type, " ", h("span", { class: "badge" }, job.type), " ",
        h("span", { class: `badge ${job.status}` }, job.status)),
      job.providerId ? h("p", { class: "muted" }, "Provider: ", job.providerId) : null,
      h("ol", { class: "details" }, (job.executionDetails || []).filter((d) => d.source !== "Webhook").map((d) => h("li", {},
        h("span", { class: `badge ${d.status}` }, d.status), " ", h("span", { class: "detail" }, d.detail), " ",
        h("span", { class: "muted" }, fmtTime(d.createdAt)),
        d.raw ? h("details", {}, h("summary", {}, "Provider answer"), h("pre", {}, d.raw)) : null))),
      providerEvents(job))),
    h("h2", {}, "Messages"),
    (msgs.data || []).length ? msgs.data.map((m) => h("section", { class: "card" },
      h("h3", {}, m.channel, " ", h("span", { class: "badge" }, m.status || "")),
      m.subject ? h("p", {}, h("strong", {}, "Subject: "), m.subject) : null,
      h("pre", {}, typeof m.content === "string" ? m.content : pretty(m.content))))
      : h("p", { class: "muted" }, "No message was sent.")];
}

// providerEvents are the events the job's provider posted about its
// message (execution details of source Webhook: delivered, opened,
// bounced, …), apart from the job's own details.
function providerEvents(job) {
  const events = (job.executionDetails || []).filter((d) => d.source === "Webhook");
  if (!events.length) return null;
  return h("section", { class: "provider-events", "aria-label": `Provider events of ${(job.step && job.step.name) || job.type}` },
    h("h4", {}, "Provider events"),
    h("ol", { class: "details" }, events.map((d) => h("li", {},
      h("span", { class: `badge ${d.status}` }, d.webhookStatus || d.status), " ", h("span", { class: "detail" }, d.detail), " ",
      h("span", { class: "muted" }, fmtTime(d.createdAt), d.providerId ? ` · ${d.providerId}` : ""),
      d.raw ? h("details", {}, h("summary", {}, "Raw event"), h("pre", {}, prettyRaw(d.raw))) : null))));
}

// prettyRaw indents a provider's event when it is JSON.
function prettyRaw(raw) {
  try { return pretty(JSON.parse(raw)); } catch { return raw; }
}

// ---- Subscribers, topics, integrations, API keys ---------------------------------

async function subscribersPage() {
  const params = new URLSearchParams(location.hash.split("?")[1] || "");
  const input = h("input", { id: "sub-q", type: "search", value: params.get("q") || "" });
  const by = h("select", { id: "sub-by" }, ["subscriberId", "email", "name"].map((k) => h("option", { value: k }, k)));
  const body = h("div", { "aria-live": "polite" });
  const load = async () => {
    const q = new URLSearchParams({ limit: "50" });
    if (input.value.trim()) q.set(by.value, input.value.trim());
    try {
      const res = await env("GET", `/v2/subscribers?${q}`);
      body.replaceChildren(table(["Subscriber ID", "Name", "Email", "Phone"], res.data.map((s) => h("tr", {},
        h("td", {}, h("a", { href: `#/subscribers/${encodeURIComponent(s.subscriberId)}` }, s.subscriberId)),
        h("td", {}, [s.firstName, s.lastName].filter(Boolean).join(" ")),
        h("td", {}, s.email || ""), h("td", {}, s.phone || "")))));
    } catch (e) {
      body.replaceChildren(errorBox(e));
    }
  };
  await load();
  return [h("h1", {}, "Subscribers"),
    h("form", { class: "row", role: "search", onsubmit: (ev) => { ev.preventDefault(); load(); } },
      h("div", {}, h("label", { for: "sub-by" }, "Search by"), by),
      h("div", {}, h("label", { for: "sub-q" }, "Search"), input),
      h("button", { type: "submit", class: "secondary" }, "Search")), body];
}

async function subscriberPage(subscriberId) {
  const s = await env("GET", `/v2/subscribers/${encodeURIComponent(subscriberId)}`);
  const [prefs, topics, inbox] = await Promise.all([
    env("GET", `/v2/subscribers/${encodeURIComponent(subscriberId)}/preferences`).catch(() => null),
    env("GET", `/v2/subscribers/${encodeURIComponent(subscriberId)}/subscriptions`).catch(() => null),
    env("GET", `/v1/messages?subscriberId=${encodeURIComponent(subscriberId)}&channel=in_app&limit=20`).catch(() => null),
  ]);
  const masked = (s.channels || []).map((c) => ({ ...c, credentials: { ...c.credentials,
    deviceTokens: (c.credentials && c.credentials.deviceTokens || []).map((t) => `${String(t).slice(0, 4)}…`),
    webhookUrl: c.credentials && c.credentials.webhookUrl ? "•••" : undefined } }));
  return [h("p", {}, h("a", { href: "#/subscribers" }, "← Subscribers")),
    h("h1", {}, s.subscriberId),
    h("dl", { class: "kv" }, ["firstName", "lastName", "email", "phone", "locale", "timezone"].flatMap((k) =>
      [h("dt", {}, k), h("dd", {}, s[k] || "—")])),
    h("h2", {}, "Channel credentials"),
    table(["Provider", "Integration", "Credentials"], masked.map((c) => h("tr", {},
      h("td", {}, c.providerId), h("td", {}, c.integrationIdentifier || ""), h("td", {}, h("code", {}, JSON.stringify(c.credentials)))))),
    h("h2", {}, "Preferences"),
    table(["Scope", "Enabled", "Channels"], prefs ? [
      h("tr", {}, h("td", {}, "All workflows"), h("td", {}, prefs.global.enabled ? "yes" : "no"), h("td", {}, channelList(prefs.global.channels))),
      ...prefs.workflows.map((p) => h("tr", {}, h("td", {}, p.workflow.name), h("td", {}, p.enabled ? "yes" : "no"), h("td", {}, channelList(p.channels)))),
    ] : []),
    h("h2", {}, "Topics"),
    table(["Topic", "Name"], ((topics && topics.data) || []).map((t) => h("tr", {},
      h("td", {}, h("a", { href: `#/topics/${encodeURIComponent(t.topic.key)}` }, t.topic.key)), h("td", {}, t.topic.name || "")))),
    h("h2", {}, "Inbox messages"),
    table(["Time", "Subject", "Content", "Read"], ((inbox && inbox.data) || []).map((m) => h("tr", {},
      h("td", {}, fmtTime(m.createdAt)), h("td", {}, m.subject || ""), h("td", {}, String(m.content || "")), h("td", {}, m.read ? "yes" : "no"))))];
}

async function topicsPage() {
  const res = await env("GET", "/v2/topics?limit=100");
  const key = h("input", { id: "topic-key", type: "text", required: true });
  const name = h("input", { id: "topic-name", type: "text" });
  const out = h("div", { "aria-live": "polite" });
  const create = async (ev) => {
    ev.preventDefault();
    try {
      const body = { key: key.value.trim() };
      if (name.value.trim()) body.name = name.value.trim();
      await env("POST", "/v2/topics", body);
      location.hash = `#/topics/${encodeURIComponent(body.key)}`;
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  };
  return [h("h1", {}, "Topics"),
    table(["Key", "Name"], (res.data || []).map((t) => h("tr", {},
      h("td", {}, h("a", { href: `#/topics/${encodeURIComponent(t.key)}` }, t.key)), h("td", {}, t.name || "")))),
    h("h2", {}, "Create a topic"),
    h("form", { class: "row", onsubmit: create },
      h("div", {}, h("label", { for: key.id }, "Key"), key), h("div", {}, h("label", { for: name.id }, "Name"), name),
      h("button", { type: "submit" }, "Create topic")), out];
}

async function topicPage(key) {
  const t = await env("GET", `/v2/topics/${encodeURIComponent(key)}`);
  const members = await env("GET", `/v2/topics/${encodeURIComponent(key)}/subscriptions?limit=100`);
  const input = h("input", { id: "topic-add", type: "text" });
  const out = h("div", { "aria-live": "polite" });
  const change = (method, ids) => async () => {
    try {
      await env(method, `/v2/topics/${encodeURIComponent(key)}/subscriptions`, { subscriptions: ids });
      route();
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  };
  return [h("p", {}, h("a", { href: "#/topics" }, "← Topics")), h("h1", {}, t.name || t.key),
    h("h2", {}, "Members"),
    table(["Subscriber ID", ""], (members.data || []).map((m) => {
      const sid = (m.subscriber && m.subscriber.subscriberId) || m.subscriberId;
      return h("tr", {}, h("td", {}, sid), h("td", {}, h("button", { type: "button", class: "secondary", onclick: change("DELETE", [sid]) }, "Remove")));
    })),
    h("div", { class: "row" }, h("div", {}, h("label", { for: "topic-add" }, "Subscriber ID"), input),
      h("button", { type: "button", onclick: () => change("POST", [input.value.trim()])() }, "Add")), out];
}

async function integrationsPage() {
  const [res, catalogue] = await Promise.all([env("GET", "/v1/integrations"), call("GET", "/providers")]);
  // The API lists the organization's integrations: this page shows the
  // environment's own.
  const current = state.session.environments.find((e) => e.name === state.env);
  const list = (res.data || res).filter((i) => !current || i._environmentId === current._id);
  const names = catalogue.names;
  const out = h("div", { "aria-live": "polite" });
  const act = (fn) => async () => {
    try {
      await fn();
      route();
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  };
  const testForm = (i) => {
    const to = h("input", { id: `test-to-${i._id}`, type: "text", placeholder: { email: "you@example.com", sms: "+15551234567", chat: "a webhook URL", push: "a device token" }[i.channel] });
    const answer = h("div", { "aria-live": "polite" });
    const send = async () => {
      answer.replaceChildren(h("p", { class: "muted" }, "Sending…"));
      try {
        const r = await env("POST", `/integrations/${i._id}/test`, { to: to.value.trim() });
        answer.replaceChildren(h("p", { class: r.ok ? "ok" : "error", role: r.ok ? "status" : "alert" },
          r.ok ? `Sent${r.providerMessageId ? ` (provider message id ${r.providerMessageId})` : ""}.` : `The provider refused: ${r.message}${r.status ? ` (${r.status})` : ""}`),
          r.raw ? h("details", {}, h("summary", {}, "Provider answer"), h("pre", {}, r.raw)) : null);
      } catch (e) {
        answer.replaceChildren(errorBox(e));
      }
    };
    return h("div", { class: "row" }, h("div", {}, h("label", { for: to.id }, "Send a test to"), to),
      h("button", { type: "button", class: "secondary", onclick: send }, "Send test"), answer);
  };
  const mine = list.map((i) => h("section", { class: "card integration", "aria-label": i.name },
    h("h3", {}, i.name, " ", h("span", { class: "badge" }, names[i.providerId] || i.providerId), " ",
      h("span", { class: "badge" }, i.channel), i.primary ? h("span", { class: "badge" }, "primary") : null),
    h("p", { class: "muted" }, "Identifier: ", h("code", {}, i.identifier), " · ", i.active ? "active" : "inactive"),
    h("div", { class: "row" },
      h("button", { type: "button", class: "secondary", onclick: act(() => env("PUT", `/v1/integrations/${i._id}`, { active: !i.active })) },
        i.active ? "Deactivate" : "Activate"),
      !i.primary && i.channel !== "in_app"
        ? h("button", { type: "button", class: "secondary", onclick: act(() => env("POST", `/v1/integrations/${i._id}/set-primary`, {})) }, "Make primary")
        : null,
      i.channel !== "in_app" ? h("a", { href: `#/integrations/edit/${i._id}` }, "Edit ", i.name) : null),
    i.channel !== "in_app" ? testForm(i) : null));
  const groups = catalogue.data.map((g) => h("section", { class: "card" }, h("h3", {}, channelNames[g.channel] || g.channel),
    h("ul", { class: "providers" }, g.providers.map((p) => h("li", {}, h("a", { href: `#/integrations/new/${p.id}` }, p.name))))));
  return [h("h1", {}, "Integrations"), out, mine.length ? mine : h("p", { class: "muted" }, "No integration yet."),
    h("h2", {}, "Add an integration"), h("div", { class: "grid2" }, groups)];
}

const channelNames = { email: "Email", sms: "SMS", chat: "Chat", push: "Push", in_app: "In-app" };

// integrationForm adds an integration of a provider, or (with existing)
// edits one: its name and its credentials, the form built from the
// provider's registry entry. The dashboard sees credentials in the clear,
// as an organization member does; secrets stay in password fields.
async function integrationForm(providerId, existing) {
  const catalogue = await call("GET", "/providers");
  const group = catalogue.data.find((g) => g.providers.some((p) => p.id === providerId));
  if (!group) throw new APIError(404, { message: `Herald does not deliver through ${providerId}` });
  const p = group.providers.find((x) => x.id === providerId);
  const current = (existing && existing.credentials) || {};
  const name = h("input", { id: "integration-name", type: "text", value: existing ? existing.name : p.name });
  const identifier = h("input", { id: "integration-identifier", type: "text", value: existing ? existing.identifier : "" });
  const fields = p.credentials.map((c) => {
    const idAttr = `cred-${c.key}`;
    const input = c.type === "boolean" ? h("input", { id: idAttr, type: "checkbox", checked: current[c.key] === true })
      : c.type === "object" ? h("textarea", { id: idAttr, rows: 3, spellcheck: "false" })
        : h("input", { id: idAttr, type: c.secret ? "password" : "text", autocomplete: "off", required: c.required });
    if (c.type === "object" && current[c.key] !== undefined) input.value = pretty(current[c.key]);
    else if (c.type !== "boolean" && current[c.key] !== undefined) input.value = String(current[c.key]);
    return { c, input, el: h("div", {}, h("label", { for: idAttr }, c.key, c.required ? " (required)" : " (optional)"), input) };
  });
  const out = h("div", { "aria-live": "polite" });
  const save = async (ev) => {
    ev.preventDefault();
    const credentials = {};
    try {
      for (const { c, input } of fields) {
        if (c.type === "boolean") { if (input.checked) credentials[c.key] = true; } else if (input.value.trim() !== "") {
          credentials[c.key] = c.type === "object" ? JSON.parse(input.value) : input.value.trim();
        }
      }
    } catch (e) {
      out.replaceChildren(h("p", { class: "error", role: "alert" }, `Not JSON: ${e.message}`));
      return;
    }
    const body = { name: name.value.trim(), credentials };
    if (identifier.value.trim()) body.identifier = identifier.value.trim();
    try {
      if (existing) await env("PUT", `/v1/integrations/${existing._id}`, body);
      else await env("POST", "/v1/integrations", { ...body, providerId: p.id, channel: group.channel, active: true });
      location.hash = "#/integrations";
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  };
  const remove = async () => {
    if (!confirm(`Delete the integration ${existing.name}?`)) return;
    try {
      await env("DELETE", `/v1/integrations/${existing._id}`);
      location.hash = "#/integrations";
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  };
  return [h("p", {}, h("a", { href: "#/integrations" }, "← Integrations")), h("h1", {}, existing ? `Edit ${existing.name}` : `Add ${p.name}`),
    existing ? h("p", { class: "muted" }, p.name, " · ", channelNames[group.channel] || group.channel) : null,
    h("form", { onsubmit: save },
      h("label", { for: name.id }, "Name"), name,
      h("label", { for: identifier.id }, existing ? "Identifier" : "Identifier (optional)"), identifier,
      h("h2", {}, "Credentials"), fields.map((f) => f.el), out,
      h("div", { class: "row" }, h("button", { type: "submit" }, existing ? "Save integration" : "Create integration"),
        existing ? h("button", { type: "button", class: "secondary", onclick: remove }, "Delete integration") : null))];
}

async function editIntegrationPage(id) {
  const res = await env("GET", "/v1/integrations");
  const existing = (res.data || res).find((i) => i._id === id);
  if (!existing) throw new APIError(404, { message: "No such integration in this environment" });
  return integrationForm(existing.providerId, existing);
}

async function apiKeysPage() {
  const res = await env("GET", "/api-keys");
  const out = h("div", { "aria-live": "polite" });
  const create = async () => {
    try {
      const k = (await env("POST", "/api-keys")).data;
      out.replaceChildren(h("div", { class: "card", role: "status" },
        h("p", {}, "Your new API key. Copy it now: it is not shown again."), h("pre", { class: "new-key" }, k.key),
        h("button", { type: "button", class: "secondary", onclick: () => route() }, "Done")));
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  };
  const revoke = (id) => async () => {
    if (!confirm("Revoke this API key? Clients using it will be refused.")) return;
    try {
      await env("DELETE", `/api-keys/${encodeURIComponent(id)}`);
      route();
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  };
  return [h("h1", {}, "API keys"),
    h("div", { class: "row" }, h("button", { type: "button", onclick: create }, "Create API key")), out,
    table(["Key", "Created", "Revoked", ""], res.data.map((k) => h("tr", {},
      h("td", {}, h("code", {}, k.masked)), h("td", {}, fmtTime(k.createdAt)), h("td", {}, k.revokedAt ? fmtTime(k.revokedAt) : "—"),
      h("td", {}, k.revokedAt ? "" : h("button", { type: "button", class: "secondary", onclick: revoke(k._id) }, "Revoke")))))];
}

// ---- Start --------------------------------------------------------------------

$("#signin-form").addEventListener("submit", signIn);
$("#signout").addEventListener("click", signOut);
$("#env").addEventListener("change", switchEnv);
window.addEventListener("hashchange", route);
call("GET", "/session").then((s) => {
  if (!s.email) return showSignIn();
  state.session = s;
  showApp();
}).catch(() => showSignIn());
