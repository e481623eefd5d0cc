// What browser-test.mjs (Chromium, playwright-core) and firefox-test.mjs
// (Firefox, puppeteer-core over WebDriver BiDi) share: the environment, the
// public API client, check(), axe-core's source, a local fake webhook, and
// the page-level steps both run (keyboard navigation, a topic and its
// members, integrations with Send test, edit and delete, API key creation
// and revocation, a 375 px screen). A step drives the page through a thin
// adapter `ui` (playwrightUI or domUI below) so that both browsers run the
// same checks; each adapter finds things the way its driver does best
// (Playwright by ARIA role and accessible name, the other by the DOM the
// dashboard builds: labels' `for`, buttons' text, sections' aria-label).
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:http";

export const base = process.env.HERALD_URL;
export const apiKey = process.env.HERALD_API_KEY;
export const email = process.env.HERALD_EMAIL;
export const password = process.env.HERALD_PASSWORD;
if (!base || !apiKey || !email || !password) {
  console.error("HERALD_URL, HERALD_API_KEY, HERALD_EMAIL and HERALD_PASSWORD are required");
  process.exit(2);
}
export const axeSource = await readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

// api calls the public API with the API key; a 409 (made by an earlier run)
// is accepted where okConflict is set.
export async function api(method, path, body, { okConflict = false } = {}) {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `ApiKey ${apiKey}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status === 409 && okConflict) return null;
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

// makeCheck returns check(cond, what): it throws unless cond, else prints
// "ok - <prefix><what>".
export function makeCheck(prefix = "") {
  return (cond, what) => {
    if (!cond) throw new Error(prefix + what);
    console.log("ok -", prefix + what);
  };
}

// startHook runs a local fake webhook (herald serve runs with
// HERALD_ALLOW_PRIVATE_NETWORKS=true so Send test may reach it).
export async function startHook() {
  const received = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => { body += c; });
    req.on("end", () => { received.push(body); res.writeHead(200, { "Content-Type": "application/json" }); res.end('{"ok":true}'); });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { received, url: `http://127.0.0.1:${server.address().port}/hook`, close: () => server.close() };
}

// ---- Adapters -------------------------------------------------------------
// A ui has: goto(hash), nav(name), heading(name), fill(label, value, {within, exact}),
// value(label, {within, exact}), select(label, value, {within, exact}), setChecked(label, on, {within}),
// waitAlert(text, {within}), waitLink(name, {timeout}), focusButton(name, {within}),
// waitRowText(rowText, text, {timeout}), attr(label, name), click(role, name, {within}) with role
// "button" or "link", waitStatus(text, {within, timeout}), waitRegion(name),
// waitButton(name, {within}),
// regions(name), waitCell(text), waitText(text), waitTextIn(selector, text), visibleLink(name),
// visibleHeading(name), text(selector), clickRowButton(rowText, button),
// waitRowWithout(rowText, notText), acceptNextDialog(), focusStart(),
// press(key), setViewport(w, h), evaluate(fn, arg), html(), axe(name).

export function playwrightUI(page, { axe }) {
  const scope = (within) => (within ? page.getByRole("region", { name: within }) : page);
  return {
    goto: (hash) => page.goto(`${base}/dashboard/${hash}`),
    nav: (name) => page.getByRole("link", { name, exact: true }).click(),
    heading: (name) => page.getByRole("heading", { name, exact: true }).waitFor(),
    fill: (label, value, { within, exact } = {}) => scope(within).getByLabel(label, { exact }).fill(value),
    value: (label, { within, exact } = {}) => scope(within).getByLabel(label, { exact }).inputValue(),
    select: (label, value, { within, exact } = {}) => scope(within).getByLabel(label, { exact }).selectOption(value),
    setChecked: (label, on, { within } = {}) => scope(within).getByLabel(label, { exact: true }).setChecked(on),
    waitAlert: (text, { within } = {}) => scope(within).getByRole("alert").filter({ hasText: text }).first().waitFor(),
    focusButton: (name, { within } = {}) => scope(within).getByRole("button", { name, exact: true }).focus(),
    waitLink: (name, { timeout } = {}) => page.getByRole("link", { name }).waitFor({ timeout }),
    waitRowText: (rowText, text, { timeout } = {}) => page.getByRole("row").filter({ hasText: rowText }).getByText(text).waitFor({ timeout }),
    attr: (label, name) => page.getByLabel(label).getAttribute(name),
    click: (role, name, { within } = {}) => scope(within).getByRole(role, { name, exact: true }).click(),
    waitStatus: (text, { within, timeout } = {}) => scope(within).getByRole("status").filter({ hasText: text }).waitFor({ timeout }),
    waitRegion: (name) => page.getByRole("region", { name }).waitFor(),
    waitButton: (name, { within } = {}) => scope(within).getByRole("button", { name, exact: true }).waitFor(),
    regions: (name) => page.getByRole("region", { name }).count(),
    waitCell: (text) => page.getByRole("cell", { name: text, exact: true }).waitFor(),
    waitText: (text) => page.getByText(text).first().waitFor(),
    waitTextIn: (selector, text) => page.locator(selector).getByText(text).first().waitFor(),
    visibleLink: (name) => page.getByRole("link", { name }).isVisible(),
    visibleHeading: (name) => page.getByRole("heading", { name }).isVisible(),
    text: (selector) => page.locator(selector).innerText(),
    clickRowButton: (rowText, button) => page.getByRole("row").filter({ hasText: rowText })
      .filter({ has: page.getByRole("button", { name: button }) }).last().getByRole("button", { name: button }).click(),
    waitRowWithout: (rowText, notText) => page.getByRole("row").filter({ hasText: rowText }).filter({ hasNotText: notText }).first().waitFor(),
    acceptNextDialog: () => page.once("dialog", (d) => d.accept()),
    focusStart: () => page.locator("body").focus(),
    press: (key) => page.keyboard.press(key),
    setViewport: (width, height) => page.setViewportSize({ width, height }),
    evaluate: (fn, arg) => page.evaluate(fn, arg),
    html: () => page.content(),
    axe,
  };
}

// domUI drives a puppeteer page through the DOM: it finds elements in the
// page and clicks them with the driver (a real pointer click), fills
// inputs by their label's `for`, and waits by polling.
export function domUI(page, { axe, timeout: defaultTimeout = 10000 }) {
  const waitFor = (fn, arg, timeout = defaultTimeout) => page.waitForFunction(fn, { timeout, polling: 50 }, arg);
  // find returns the element the spec names, in the page (or in the section
  // whose aria-label is `within`), or null.
  const find = (spec) => page.evaluateHandle((s) => {
    const root = s.within ? document.querySelector(`section[aria-label="${CSS.escape(s.within)}"]`) : document;
    if (!root) return null;
    const norm = (t) => t.replace(/\s+/g, " ").trim();
    if (s.label) {
      const label = [...root.querySelectorAll("label")].find((l) => (s.exact ? norm(l.textContent) === s.label : norm(l.textContent).includes(s.label)));
      return label ? label.control : null;
    }
    if (s.row) {
      const rows = [...root.querySelectorAll("tr")].filter((r) => r.textContent.includes(s.row)
        && [...r.querySelectorAll("button")].some((b) => norm(b.textContent) === s.button));
      const row = rows[rows.length - 1];
      return row ? [...row.querySelectorAll("button")].find((b) => norm(b.textContent) === s.button) : null;
    }
    const sel = s.role === "link" ? "a[href]" : "button";
    return [...root.querySelectorAll(sel)].find((el) => norm(el.textContent) === s.name && el.offsetParent !== null) || null;
  }, spec);
  const element = async (spec, what) => {
    const handle = await find(spec);
    const el = handle.asElement();
    if (!el) throw new Error(`not found: ${what}`);
    return el;
  };
  const textIn = (selector, want, timeout) => waitFor(({ selector: s, want: w }) =>
    [...document.querySelectorAll(s)].some((el) => el.textContent.includes(w)), { selector, want }, timeout);
  return {
    goto: (hash) => page.goto(`${base}/dashboard/${hash}`),
    nav: (name) => page.click(`[data-nav="${name.toLowerCase().replace(/ /g, "-")}"]`),
    heading: (name) => waitFor((n) => document.querySelector("#view h1")?.textContent === n, name),
    fill: async (label, value, { within, exact } = {}) => {
      const el = await element({ label, within, exact }, `the field ${label}`);
      await el.evaluate((e, v) => { e.value = v; e.dispatchEvent(new Event("input", { bubbles: true })); e.dispatchEvent(new Event("change", { bubbles: true })); }, value);
    },
    value: async (label, { within, exact } = {}) => (await element({ label, within, exact }, `the field ${label}`)).evaluate((e) => e.value),
    select: async (label, value, { within, exact } = {}) => {
      const el = await element({ label, within, exact }, `the select ${label}`);
      await el.evaluate((e, v) => { e.value = v; e.dispatchEvent(new Event("input", { bubbles: true })); e.dispatchEvent(new Event("change", { bubbles: true })); }, value);
    },
    setChecked: async (label, on, { within } = {}) => {
      const el = await element({ label, within, exact: true }, `the checkbox ${label}`);
      if (await el.evaluate((e) => e.checked) !== on) await el.click();
    },
    waitAlert: (text, { within } = {}) => textIn(within ? `section[aria-label="${within}"] [role=alert]` : "[role=alert]", text),
    focusButton: async (name, { within } = {}) => (await element({ role: "button", name, within }, `the button ${name}`)).focus(),
    waitLink: (name, { timeout } = {}) => waitFor((n) => [...document.querySelectorAll("a[href]")].some((a) => a.textContent.trim() === n), name, timeout),
    waitRowText: (rowText, text, { timeout } = {}) => waitFor(({ r, t }) => [...document.querySelectorAll("#view tr")]
      .some((tr) => tr.textContent.includes(r) && tr.textContent.includes(t)), { r: rowText, t: text }, timeout),
    attr: async (label, name) => (await element({ label }, `the field ${label}`)).evaluate((e, n) => e.getAttribute(n), name),
    click: async (role, name, { within } = {}) => (await element({ role, name, within }, `the ${role} ${name}`)).click(),
    waitStatus: (text, { within, timeout } = {}) => textIn(within ? `section[aria-label="${within}"] [role=status]` : "[role=status]", text, timeout),
    waitRegion: (name) => waitFor((n) => !!document.querySelector(`section[aria-label="${CSS.escape(n)}"]`), name),
    waitButton: (name, { within } = {}) => waitFor((s) => [...document.querySelectorAll(s.within ? `section[aria-label="${CSS.escape(s.within)}"] button` : "button")]
      .some((b) => b.textContent.trim() === s.name && b.offsetParent !== null), { name, within }),
    regions: (name) => page.evaluate((n) => document.querySelectorAll(`section[aria-label="${CSS.escape(n)}"]`).length, name),
    waitCell: (text) => waitFor((t) => [...document.querySelectorAll("#view td")].some((td) => td.textContent.trim() === t), text),
    waitText: (text) => textIn("#view", text),
    waitTextIn: (selector, text) => textIn(selector, text),
    visibleLink: async (name) => !!(await find({ role: "link", name })).asElement(),
    visibleHeading: (name) => page.evaluate((n) => [...document.querySelectorAll("#view h1, #view h2, #view h3")]
      .some((e) => e.textContent.includes(n) && e.offsetParent !== null), name),
    text: (selector) => page.$eval(selector, (el) => el.textContent),
    clickRowButton: async (rowText, button) => (await element({ row: rowText, button }, `${button} in the row of ${rowText}`)).click(),
    waitRowWithout: (rowText, notText) => waitFor(({ r, n }) => [...document.querySelectorAll("#view tr")]
      .some((tr) => tr.textContent.includes(r) && !tr.textContent.includes(n)), { r: rowText, n: notText }),
    acceptNextDialog: () => page.once("dialog", (d) => d.accept()),
    focusStart: () => page.evaluate(() => { document.activeElement?.blur(); }),
    press: (key) => page.keyboard.press(key),
    setViewport: (width, height) => page.setViewport({ width, height }),
    evaluate: (fn, arg) => page.evaluate(fn, arg),
    html: () => page.content(),
    axe,
  };
}

// ---- Steps -------------------------------------------------------------------

// interactiveWithin2s checks that the first load of /dashboard/ is
// interactive (the Sign in button shown) within 2 s, timed by the page's
// own clock from its navigation's start (performance.now() once the button
// is there), so that the browser's start is not counted. first is the
// time of the load already made; again(), when a load took longer, makes
// another first load in a fresh browser context (nothing cached) and
// returns its time: up to three loads in all, the fastest counts. A load
// slowed by what else runs on a busy machine (the rest of the test suite)
// is measured again; the budget stays 2 s.
export async function interactiveWithin2s(check, first, again) {
  const times = [first];
  while (Math.min(...times) >= 2000 && times.length < 3) times.push(Math.round(await again()));
  check(Math.min(...times) < 2000, `the sign-in form is interactive within 2 s (${times.join(" ms, ")} ms)`);
}

// firstLoad: a fresh browser's first load of /dashboard/ is interactive
// within 2 s (interactiveWithin2s: again() loads it in a fresh context) and
// transfers less than 500 KB, counted by the page's own Performance API
// (bytes on the wire, compressed).
export async function firstLoad(ui, check, again) {
  await ui.goto("");
  await ui.waitButton("Sign in");
  await interactiveWithin2s(check, Math.round(await ui.evaluate(() => performance.now())), again);
  const bytes = await ui.evaluate(() => [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")]
    .reduce((sum, e) => sum + (e.transferSize || e.encodedBodySize || 0), 0));
  check(bytes > 0 && bytes < 500_000, `the first load of /dashboard/ transfers less than 500 KB (${bytes} bytes)`);
}

// keyboardNavigation: from the top of the signed-in page, Tab reaches the
// navigation's Topics link and Enter follows it.
export async function keyboardNavigation(ui, check) {
  await ui.focusStart();
  let reached = false;
  for (let i = 0; i < 20 && !reached; i++) {
    await ui.press("Tab");
    reached = await ui.evaluate(() => document.activeElement?.textContent === "Topics");
  }
  check(reached, "the navigation is reachable with Tab");
  await ui.press("Enter");
  await ui.heading("Topics");
  check(true, "Enter follows a link");
}

// templateError: on a step's page, a broken template in the subject is
// shown as an error, not thrown; the subject is then put back.
export async function templateError(ui, check, { restore }) {
  await ui.fill("subject", "Hi {{subscriber.firstName", { exact: true });
  await ui.click("button", "Preview");
  await ui.waitAlert("Template error in subject");
  check(true, "a template error is shown, not thrown");
  await ui.fill("subject", restore, { exact: true });
}

// activity: on the Activity page that lists knownTx, a trigger made
// through the API appears without a reload, knownTx's status comes from its
// jobs, and the status and subscriber filters apply.
export async function activity(ui, check, { knownTx, workflowId, subscriberId, payload }) {
  await ui.heading("Activity");
  await ui.waitLink(knownTx);
  const live = await api("POST", "/v1/events/trigger", { name: workflowId, to: subscriberId, payload });
  await ui.waitLink(live.transactionId, { timeout: 10000 });
  check(true, "a new trigger appears without a reload");
  await ui.waitRowText(knownTx, "completed", { timeout: 10000 });
  check(true, "a trigger's status comes from its jobs");
  await ui.select("Status", "failed");
  await ui.click("button", "Filter");
  await ui.waitText("Nothing yet.");
  await ui.select("Status", "completed");
  await ui.fill("Subscriber ID", subscriberId);
  await ui.click("button", "Filter");
  await ui.waitLink(knownTx);
  check(true, "Activity filters by status and subscriber");
}

// environmentSwitch: Development is shown; Production shows its own (empty)
// workflows; back to Development.
export async function environmentSwitch(ui, check, { workflowName }) {
  await ui.nav("Workflows");
  await ui.waitLink(workflowName);
  check(await ui.value("Environment") === "development", "the environment shown is Development");
  await ui.select("Environment", "production");
  await ui.heading("Workflows");
  await ui.waitText("Nothing yet.");
  check(!(await ui.visibleLink(workflowName)), "Production shows its own (empty) workflows");
  await ui.select("Environment", "development");
  await ui.waitLink(workflowName);
  // With the keyboard alone: Tab to the environment, an arrow key switches.
  await ui.focusStart();
  let reached = false;
  for (let i = 0; i < 20 && !reached; i++) {
    await ui.press("Tab");
    reached = await ui.evaluate(() => document.activeElement?.id === "env");
  }
  check(reached, "the environment is reachable with Tab");
  await ui.press("ArrowDown");
  await ui.waitText("Nothing yet.");
  check(await ui.value("Environment") === "production", "an arrow key switches it to Production");
  await ui.press("ArrowUp");
  await ui.waitLink(workflowName);
  check(await ui.value("Environment") === "development", "and back to Development");
}

// subscriber: a subscriber's page from the Subscribers list shows its inbox
// messages and its preferences.
export async function subscriber(ui, check, { subscriberId, message, workflowName }) {
  await ui.nav("Subscribers");
  await ui.heading("Subscribers");
  await ui.click("link", subscriberId);
  await ui.heading(subscriberId);
  await ui.waitText(message);
  check(true, "a subscriber's page shows its inbox messages");
  await ui.waitRowText(workflowName, "in_app on");
  check(true, "and its preferences");
  await ui.axe("Subscriber");
}

// topic creates a topic from the Topics page, adds a subscriber to it and
// removes it, each checked through the public API.
export async function topic(ui, check, { key, name, subscriberId }) {
  await ui.nav("Topics");
  await ui.heading("Topics");
  await ui.axe("Topics");
  await ui.fill("Key", key);
  await ui.fill("Name", name);
  await ui.click("button", "Create topic");
  await ui.heading(name);
  await ui.fill("Subscriber ID", subscriberId);
  await ui.click("button", "Add");
  await ui.waitCell(subscriberId);
  const members = await api("GET", `/v2/topics/${key}/subscriptions`);
  check(members.data.length === 1, "a topic is created and a subscriber added from the page");
  await ui.axe("Topic");
  await ui.click("button", "Remove");
  await ui.waitText("Nothing yet.");
  check((await api("GET", `/v2/topics/${key}/subscriptions`)).data.length === 0, "and removed");
}

// integrations: the environment's own, the catalogue and a credential form,
// then an integration added whose Send test reaches a local fake, which is
// deactivated, edited and deleted from the page.
export async function integrations(ui, check, { name }) {
  await ui.nav("Integrations");
  await ui.heading("Integrations");
  await ui.waitRegion("Herald Inbox");
  check(await ui.regions("Herald Inbox") === 1, "Integrations lists the environment's own");
  await ui.axe("Integrations");
  const hook = await startHook();
  try {
    check(await ui.visibleHeading("Email") && await ui.visibleLink("SendGrid") && await ui.visibleLink("Twilio"),
      "the provider catalogue is grouped by channel with names users know");
    await ui.click("link", "SendGrid");
    await ui.heading("Add SendGrid");
    check(await ui.attr("apiKey (required)", "type") === "password", "the credential form comes from the registry, secrets masked");
    await ui.axe("Add integration");
    await ui.click("link", "← Integrations");
    await ui.heading("Integrations");
    await ui.click("link", "Chat webhook");
    await ui.heading("Add Chat webhook");
    await ui.fill("Name", name, { exact: true });
    await ui.click("button", "Create integration");
    await ui.waitRegion(name);
    await ui.fill("Send a test to", hook.url, { within: name });
    await ui.click("button", "Send test", { within: name });
    await ui.waitStatus("Sent", { within: name, timeout: 15000 });
    check(hook.received.length === 1 && hook.received[0].includes("test message sent from Herald"), "Send test went through the provider to the local fake");
    await ui.click("button", "Deactivate", { within: name });
    await ui.waitButton("Activate", { within: name });
    check(true, "an integration is deactivated from the page");
    await ui.click("link", `Edit ${name}`);
    await ui.heading(`Edit ${name}`);
    await ui.fill("webhookUrl (optional)", "https://hooks.example.com/edited");
    await ui.click("button", "Save integration");
    await ui.heading("Integrations");
    await ui.click("link", `Edit ${name}`);
    await ui.heading(`Edit ${name}`);
    check(await ui.value("webhookUrl (optional)") === "https://hooks.example.com/edited", "an integration's credentials are edited");
    await ui.axe("Edit integration");
    ui.acceptNextDialog();
    await ui.click("button", "Delete integration");
    await ui.heading("Integrations");
    await ui.waitRegion("Herald Inbox");
    check(await ui.regions(name) === 0, "and deleted");
  } finally {
    hook.close();
  }
}

// apiKeys: listed masked; a new key is shown once, then masked; revoked
// from the page, it is refused by the API.
export async function apiKeys(ui, check) {
  await ui.nav("API keys");
  await ui.heading("API keys");
  check(!(await ui.html()).includes(apiKey), "API keys are listed masked");
  await ui.click("button", "Create API key");
  await ui.waitStatus("Your new API key");
  const newKey = (await ui.text(".new-key")).trim();
  check(/^hk_[0-9a-f]{64}$/.test(newKey), "a new key is shown once");
  await ui.click("button", "Done");
  await ui.waitButton("Create API key");
  check(!(await ui.html()).includes(newKey), "and masked from then on");
  ui.acceptNextDialog();
  await ui.clickRowButton(newKey.slice(0, 7), "Revoke");
  await ui.waitRowWithout(newKey.slice(0, 7), "—");
  const revoked = await fetch(`${base}/v2/subscribers`, { headers: { Authorization: `ApiKey ${newKey}` } });
  check(revoked.status === 401, "a key revoked from the page is refused");
  await ui.axe("API keys");
}

// narrowScreen: at 375 px nothing is wider than the window (tables scroll
// in their own box); the viewport is put back after.
// extra: more [hash, heading] pages to check.
export async function narrowScreen(ui, check, { workflowId, workflowName, subscriberId, triggerHash, triggerTx, extra = [] },
  back = { width: 1200, height: 900 }) {
  await ui.setViewport(375, 800);
  for (const [hash, heading] of [["#/workflows", "Workflows"], [`#/workflows/${workflowId}`, workflowName], ["#/activity", "Activity"],
    [triggerHash, `Trigger ${triggerTx}`], ["#/subscribers", "Subscribers"], [`#/subscribers/${subscriberId}`, subscriberId],
    ["#/topics", "Topics"], ["#/integrations", "Integrations"], ["#/integrations/new/sendgrid", "Add SendGrid"], ["#/api-keys", "API keys"],
    ...extra]) {
    await ui.goto(hash);
    await ui.heading(heading);
    // The window less a classic scrollbar (Firefox's takes room, Chromium's
    // headless one does not): nothing may scroll sideways.
    const { scroll, client, wide } = await ui.evaluate(() => {
      const root = document.documentElement;
      // What sticks out: a box past the window, or a box whose content
      // overflows it (a long word), outside the boxes that scroll.
      const wide = [...document.querySelectorAll("#app *")].filter((el) => !el.closest(".table-wrap, pre")
        && (el.getBoundingClientRect().right > root.clientWidth + 0.5 || el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0 && !el.matches("input, textarea"))).slice(0, 3).map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}${el.className ? `.${el.className}` : ""}`);
      return { scroll: root.scrollWidth, client: root.clientWidth, wide };
    });
    check(scroll <= client && client <= 375, `${heading} fits a 375 px wide screen (${scroll} px in ${client} px${wide.length ? `; too wide: ${wide.join(", ")}` : ""})`);
  }
  await ui.setViewport(back.width, back.height);
}

// layoutPreview: a step in a layout, with translations, previews wrapped
// and translated (what a send is), and with the contexts given bound.
export async function layoutPreview(ui, check, { layoutId, workflowId, workflowName }) {
  await api("POST", "/v2/layouts", { layoutId, name: "Brand" });
  await api("PUT", `/v2/layouts/${layoutId}`, { name: "Brand", controlValues: { email: { editorType: "html",
    body: "<html><body><h1>Brand for {{subscriber.firstName}}</h1>{{ content }}</body></html>" } } });
  await api("POST", "/v2/workflows", { name: workflowName, workflowId, steps: [{ name: "Mail", stepId: "mail",
    type: "email", controlValues: { subject: "{{t.subject}}", body: "<p>{{t.greeting}}</p>", layoutId } }] });
  await api("POST", "/v2/translations", { resourceId: workflowId, resourceType: "workflow", locale: "en_US",
    content: { subject: "Translated subject", greeting: "Translated greeting" } });
  await ui.goto(`#/workflows/${workflowId}`);
  await ui.heading(workflowName);
  await ui.click("button", "Preview");
  await ui.waitTextIn(".preview", "Translated subject");
  const branded = await ui.text(".preview");
  check(branded.includes("<h1>Brand for Ada</h1><p>Translated greeting</p>"), "a step in a layout previews wrapped and translated");
  await ui.fill("subject", "{{t.subject}} for {{context.tenant.data.name}}", { exact: true });
  await ui.fill("Context (JSON, optional)", '{"tenant": {"id": "acme", "data": {"name": "Acme"}}}');
  await ui.click("button", "Preview");
  await ui.waitTextIn(".preview", "Translated subject for Acme");
  check(true, "a preview binds the contexts given");
}

// until polls fn (the public API, say) until it is true, or fails after the
// deadline.
async function until(fn, what, timeout = 10000) {
  for (const end = Date.now() + timeout; !(await fn());) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// buildWorkflow makes a workflow from nothing on the dashboard: created from
// the Workflows page, five steps added (in-app, a delay, an e-mail with a
// condition made in the builder, a throttle, an HTTP request with a header)
// and a sixth, the in-app step previewed before any Save, one step moved up
// with the keyboard and the sixth removed, then saved: the public API
// returns the steps in that order with their controls (the condition as
// JSONLogic). A condition the API refuses, put in the JSON editor, shows
// the 422 naming steps.N.controlValues.skip in its step and saves nothing
// (the one 422 the browser logs: expectedError says which); the page read
// again shows the builder's rows; the workflow's name and description and a
// step's name are edited and it is deactivated and activated again, each
// saved and checked through the API; a saved HTTP request step previews with
// its controls rendered; a test trigger of the workflow is found in
// Activity; a throwaway workflow is deleted from its page (gone from the
// list, a 404 from the API). Returns the workflow's page.
export async function buildWorkflow(ui, check, { workflowId, workflowName, subscriberId }) {
  await ui.nav("Workflows");
  await ui.heading("Workflows");
  await ui.fill("Name", workflowName, { exact: true });
  await ui.fill("Workflow ID (optional)", workflowId, { exact: true });
  await ui.click("button", "Create workflow");
  await ui.heading(workflowName);
  check((await api("GET", `/v2/workflows/${workflowId}`)).steps.length === 0, "a workflow is created from the Workflows page, with no step yet");
  const addStep = async (type, name) => {
    await ui.select("Step type", type, { exact: true });
    await ui.fill("Step name", name, { exact: true });
    await ui.click("button", "Add step");
    await ui.waitRegion(`Step ${name}`);
  };
  await addStep("in_app", "Inbox");
  await ui.fill("body", "Order {{payload.id}}", { within: "Step Inbox", exact: true });
  // A step not saved yet previews as it would send.
  await ui.fill("Payload (JSON)", '{"id": "o-1"}', { within: "Step Inbox", exact: true });
  await ui.click("button", "Preview", { within: "Step Inbox" });
  await ui.waitTextIn('section[aria-label="Step Inbox"] .preview', "Order o-1");
  check((await api("GET", `/v2/workflows/${workflowId}`)).steps.length === 0,
    "a step added since the last Save previews, rendered with the preview's payload (nothing saved)");
  await addStep("delay", "Wait");
  await ui.select("type", "regular", { within: "Step Wait", exact: true });
  await ui.fill("amount", "1", { within: "Step Wait", exact: true });
  await ui.select("unit", "hours", { within: "Step Wait", exact: true });
  await addStep("email", "Mail");
  await ui.fill("subject", "Order {{payload.id}} is waiting", { within: "Step Mail", exact: true });
  await ui.fill("body", "<p>Your order {{payload.id}}</p>", { within: "Step Mail", exact: true });
  await ui.click("button", "Add condition", { within: "Step Mail" });
  await ui.fill("Condition 1 field", "steps.inbox.read", { within: "Step Mail", exact: true });
  await ui.select("Condition 1 operator", "==", { within: "Step Mail", exact: true });
  await ui.fill("Condition 1 value", "false", { within: "Step Mail", exact: true });
  await addStep("throttle", "Limit");
  await ui.fill("threshold (default 1)", "3", { within: "Step Limit", exact: true });
  await ui.fill("throttleKey (optional)", "{{payload.id}}", { within: "Step Limit", exact: true });
  await addStep("http_request", "Crm");
  await ui.fill("url", "https://crm.example.com/orders/{{payload.id}}", { within: "Step Crm", exact: true });
  await ui.click("button", "Add header", { within: "Step Crm" });
  await ui.fill("Header 1 name", "X-Plan", { within: "Step Crm", exact: true });
  await ui.fill("Header 1 value", "{{subscriber.data.plan}}", { within: "Step Crm", exact: true });
  await ui.fill("body (JSON)", '{"id": "{{payload.id}}"}', { within: "Step Crm", exact: true });
  await ui.setChecked("continueOnFailure", true, { within: "Step Crm" });
  await addStep("sms", "Extra");
  const order = () => ui.evaluate(() => [...document.querySelectorAll("section.step")].map((s) => s.getAttribute("aria-label").slice(5)).join());
  check(await order() === "Inbox,Wait,Mail,Limit,Crm,Extra", "steps of every kind are added in order");

  // The keyboard moves a step; the button pressed keeps the focus.
  await ui.focusButton("Move up", { within: "Step Limit" });
  await ui.press("Enter");
  check(await order() === "Inbox,Wait,Limit,Mail,Crm,Extra", "Move up (Enter) moves a step before the one above it");
  const focused = await ui.evaluate(() => `${document.activeElement.closest("section")?.getAttribute("aria-label")}: ${document.activeElement.textContent}`);
  check(focused === "Step Limit: Move up", `and keeps the focus on its button (${focused})`);
  await ui.click("button", "Remove step", { within: "Step Extra" });
  check(await order() === "Inbox,Wait,Limit,Mail,Crm", "Remove step takes a step out");
  await ui.axe("Built workflow");
  await ui.click("button", "Save");
  await ui.waitStatus("Saved.");

  const want = [
    ["inbox", "in_app", { body: "Order {{payload.id}}" }],
    ["wait", "delay", { type: "regular", amount: 1, unit: "hours" }],
    ["limit", "throttle", { type: "fixed", amount: 1, unit: "hours", threshold: 3, throttleKey: "{{payload.id}}" }],
    ["mail", "email", { subject: "Order {{payload.id}} is waiting", body: "<p>Your order {{payload.id}}</p>",
      skip: { and: [{ "==": [{ var: "steps.inbox.read" }, false] }] } }],
    ["crm", "http_request", { method: "POST", url: "https://crm.example.com/orders/{{payload.id}}",
      headers: [{ key: "X-Plan", value: "{{subscriber.data.plan}}" }], body: '{"id": "{{payload.id}}"}', continueOnFailure: true }],
  ];
  const saved = await api("GET", `/v2/workflows/${workflowId}`);
  const got = saved.steps.map((s) => [s.stepId, s.type, s.controlValues]);
  check(JSON.stringify(got) === JSON.stringify(want), `saved: the API returns the steps in order with their controls and condition${
    JSON.stringify(got) === JSON.stringify(want) ? "" : `: ${JSON.stringify(got)}`}`);

  // A condition the API refuses: its 422 is shown in the step, nothing saved.
  await ui.setChecked("Edit conditions as JSON", true, { within: "Step Mail" });
  check((await ui.value("Conditions (JSON)", { within: "Step Mail", exact: true })).includes('"steps.inbox.read"'),
    "the JSON editor shows the builder's condition");
  await ui.fill("Conditions (JSON)", '{"frobnicate": [1]}', { within: "Step Mail", exact: true });
  await ui.click("button", "Save");
  await ui.waitAlert("steps.3.controlValues.skip", { within: "Step Mail" });
  check(true, "a condition the API refuses shows its 422 naming steps.3.controlValues.skip in the step");
  check(JSON.stringify(await api("GET", `/v2/workflows/${workflowId}`)) === JSON.stringify(saved), "and nothing is saved");

  // Read again, the builder shows what it wrote.
  await ui.nav("Workflows");
  await ui.heading("Workflows");
  await ui.click("link", workflowName);
  await ui.heading(workflowName);
  check(await order() === "Inbox,Wait,Limit,Mail,Crm", "read again, the steps are in the saved order");
  check(await ui.value("Condition 1 field", { within: "Step Mail", exact: true }) === "steps.inbox.read"
    && await ui.value("Condition 1 operator", { within: "Step Mail", exact: true }) === "=="
    && await ui.value("Condition 1 value", { within: "Step Mail", exact: true }) === "false", "and the builder reads back its condition");
  check(await ui.value("Header 1 name", { within: "Step Crm", exact: true }) === "X-Plan"
    && await ui.value("threshold (default 1)", { within: "Step Limit", exact: true }) === "3", "the fields read back their controls");

  // The workflow's own fields and a step's name, saved with Save.
  const renamed = `${workflowName} renamed`;
  const read = () => api("GET", `/v2/workflows/${workflowId}`);
  await ui.fill("Workflow name", renamed, { exact: true });
  await ui.fill("Description", "Built in the browser", { exact: true });
  await ui.setChecked("Active", false);
  await ui.fill("Name", "Bell", { within: "Step Inbox", exact: true });
  await ui.waitRegion("Step Bell");
  await ui.click("button", "Save");
  await ui.waitStatus("Saved.");
  await until(async () => (await read()).name === renamed, "the new name saved");
  const edited = await read();
  check(edited.description === "Built in the browser" && edited.active === false && edited.steps[0].stepId === "inbox"
    && edited.steps[0].name === "Bell" && edited.steps.length === 5,
  "the workflow's name, description and status and a step's name (its stepId kept) are saved with Save");
  await ui.heading(renamed);
  await ui.setChecked("Active", true);
  await ui.click("button", "Save");
  await until(async () => (await read()).active === true, "the workflow active again");
  check(true, "and it is activated again");

  // An HTTP request step previews with its controls rendered.
  await ui.fill("Payload (JSON)", '{"id": "o-7"}', { within: "Step Crm", exact: true });
  await ui.click("button", "Preview", { within: "Step Crm" });
  await ui.waitTextIn('section[aria-label="Step Crm"] .preview', "https://crm.example.com/orders/o-7");
  check(true, "an HTTP request step's preview shows its rendered controls");

  // A test trigger of it, found in Activity.
  await ui.fill("Subscriber ID", subscriberId, { exact: true });
  await ui.click("button", "Trigger");
  await ui.waitStatus("Triggered:");
  const tx = (await ui.text("[role=status] a")).trim();
  await ui.nav("Activity");
  await ui.heading("Activity");
  await ui.waitLink(tx, { timeout: 10000 });
  check(true, "the built workflow's test trigger is in Activity");

  // A throwaway workflow deleted from its page, after a confirmation there.
  const throwaway = { id: `${workflowId}-throwaway`, name: `${workflowName} throwaway` };
  await api("POST", "/v2/workflows", { name: throwaway.name, workflowId: throwaway.id, steps: [] });
  await ui.goto(`#/workflows/${throwaway.id}`);
  await ui.heading(throwaway.name);
  await ui.click("button", "Delete workflow");
  await ui.waitButton("Confirm delete");
  check(await ui.evaluate(() => document.activeElement?.textContent) === "Confirm delete", "Delete workflow asks again, the focus on Confirm delete");
  await ui.axe("Delete workflow");
  await ui.click("button", "Confirm delete");
  await ui.heading("Workflows");
  await ui.waitLink(renamed);
  check(!(await ui.visibleLink(throwaway.name)), "a workflow deleted from its page is gone from the list");
  const gone = await fetch(`${base}/v2/workflows/${throwaway.id}`, { headers: { Authorization: `ApiKey ${apiKey}` } });
  check(gone.status === 404, `and the API answers 404 for it (${gone.status})`);
  return [`#/workflows/${workflowId}`, renamed];
}

// expectedError says whether a console error is the refused save of
// buildWorkflow (a 422 of PUT /v2/workflows/<workflowId>).
export const expectedError = (problem, workflowId) => problem.includes("422") && problem.includes(`/v2/workflows/${workflowId}`);

// startFakeSendGrid runs a local stand-in for SendGrid's mail send API
// (202 with an X-Message-Id), for an integration whose baseUrl points at
// it; it keeps the bodies it received.
async function startFakeSendGrid() {
  const received = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => { body += c; });
    req.on("end", () => {
      received.push(body);
      res.writeHead(202, { "X-Message-Id": `fake-${received.length}` });
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { received, url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

// providerEvents: an e-mail sent through a SendGrid integration (its API a
// local fake, its delivery events enabled) gets two events SendGrid posts
// to Herald (delivered, open; no signing key: accepted unsigned); once they
// are recorded, the trigger's page shows them as the job's provider events
// (webhookStatus, time, the raw event folded), apart from the job's own
// execution details. Returns the transaction id.
export async function providerEvents(ui, check, { workflowId, subscriberId, name }) {
  const fake = await startFakeSendGrid();
  try {
    const integration = await api("POST", "/v1/integrations", { providerId: "sendgrid", channel: "email", name, active: true,
      credentials: { apiKey: "SG.local", from: "herald@example.com", baseUrl: fake.url }, configurations: { inboundWebhookEnabled: true } });
    const it = integration.data || integration;
    await api("POST", `/v1/integrations/${it._id}/set-primary`, {}); // this run's fake takes the environment's e-mails
    await api("POST", "/v2/workflows", { name: `${name} mail`, workflowId,
      steps: [{ name: "Mail", stepId: "mail", type: "email", controlValues: { subject: "Your order", body: "<p>Shipped</p>" } }] });
    const { transactionId } = await api("POST", "/v1/events/trigger", { name: workflowId,
      to: { subscriberId, email: `${subscriberId}@example.com` }, payload: {} });
    let message;
    await until(async () => {
      const res = await api("GET", `/v1/messages?transactionId=${transactionId}&channel=email`);
      message = res.data.find((m) => m.status === "sent");
      return !!message;
    }, "the e-mail is sent", 15000);
    check(fake.received.length >= 1, "the e-mail went through the SendGrid integration to the local fake");
    const at = Math.floor(Date.now() / 1000);
    const events = ["delivered", "open"].map((event, i) => ({ event, email: `${subscriberId}@example.com`, timestamp: at,
      sg_event_id: `${transactionId}-${i}`, sg_message_id: `${message.providerMessageId || "fake"}.filter`, heraldMessageId: message._id }));
    const posted = await fetch(`${base}/v2/inbound-webhooks/delivery-providers/${it._environmentId}/${it._id}`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(events) });
    check(posted.status === 200, `SendGrid's events are accepted (${posted.status})`);
    const notificationId = message._notificationId;
    await until(async () => {
      const n = await api("GET", `/v1/notifications/${notificationId}`);
      return (n.data || n).jobs.flatMap((j) => j.executionDetails).filter((d) => d.source === "Webhook").length === 2;
    }, "the events are recorded", 15000);

    await ui.goto(`#/activity/${notificationId}`);
    await ui.heading(`Trigger ${transactionId}`);
    await ui.waitTextIn(".provider-events", "opened");
    const shown = await ui.evaluate(() => ({
      events: [...document.querySelectorAll(".provider-events li")].map((li) => li.querySelector(".badge").textContent),
      raw: [...document.querySelectorAll(".provider-events details summary")].map((s) => s.textContent),
      own: [...document.querySelectorAll(".job > ol.details li")].map((li) => li.textContent),
    }));
    check(shown.events.join() === "delivered,opened" && shown.raw.join() === "Raw event,Raw event",
      `the trigger's page shows the provider events with their raw events (${shown.events.join()})`);
    check(shown.own.length > 0 && !shown.own.some((t) => t.includes("Delivery event")) && shown.own.some((t) => t.includes("Message sent")),
      "apart from the job's own execution details");
    await ui.axe("Trigger with provider events");
    return transactionId;
  } finally {
    fake.close();
  }
}

// webhooks: on the Webhooks page an endpoint pointed at a local receiver is
// created (message.sent only): its secret is shown once, then never (the
// list, the endpoint's page); a trigger's message.sent reaches the receiver
// and is listed with status 200 on the endpoint's page; its event types
// are edited, it is disabled, its secret rotated (the new one shown once)
// and it is deleted after a confirmation in the page — each checked
// through the public API.
export async function webhooks(ui, check, { workflowId, subscriberId, description }) {
  const hook = await startHook();
  const read = (id) => api("GET", `/v2/webhooks/endpoints/${id}`);
  try {
    await ui.nav("Webhooks");
    await ui.heading("Webhooks");
    await ui.axe("Webhooks");
    await ui.fill("Endpoint URL", hook.url);
    await ui.fill("Description (optional)", description);
    await ui.setChecked("message.sent", true);
    await ui.click("button", "Create endpoint");
    await ui.waitStatus("Copy it now");
    const secret = (await ui.text(".new-secret")).trim();
    const ep = (await api("GET", "/v2/webhooks/endpoints")).find((e) => e.description === description);
    check(ep && ep.url === hook.url && ep.eventTypes.join() === "message.sent" && !ep.disabled,
      "an endpoint is created from the page with its URL, description and event types");
    check(/^whsec_[A-Za-z0-9+/]+=*$/.test(secret) && (await read(ep.id)).secret === secret, "its signing secret is shown once");
    await ui.click("button", "Done");
    await ui.waitRowText(description, "message.sent");
    check(!(await ui.html()).includes(secret), "and not in the list after");

    const { transactionId } = await api("POST", "/v1/events/trigger", { name: workflowId, to: subscriberId, payload: { greeting: "Hooked" } });
    await ui.click("link", hook.url);
    await ui.heading(hook.url);
    await ui.waitCell("200");
    await ui.waitRowText("message.sent", "yes");
    check(hook.received.some((b) => b.includes('"message.sent"') && b.includes(transactionId)),
      "a trigger's message.sent reaches the receiver and its delivery is listed with status 200");
    check(!(await ui.html()).includes(secret), "the endpoint's page does not show the secret");
    await ui.axe("Webhook endpoint");

    await ui.setChecked("message.failed", true, { within: "Endpoint settings" });
    await ui.click("button", "Save endpoint");
    await until(async () => (await read(ep.id)).eventTypes.join() === "message.sent,message.failed", "the event types saved");
    await ui.heading(hook.url);
    await ui.waitButton("Disable endpoint");
    await ui.click("button", "Disable endpoint");
    await ui.waitButton("Enable endpoint");
    check((await read(ep.id)).disabled === true, "its event types are edited and it is disabled from the page");

    await ui.click("button", "Rotate secret");
    await ui.waitStatus("new signing secret");
    const rotated = (await ui.text(".new-secret")).trim();
    check(rotated !== secret && (await read(ep.id)).secret === rotated, "Rotate secret shows the new secret once");
    await ui.click("button", "Done");
    await ui.waitButton("Rotate secret");
    check(!(await ui.html()).includes(rotated), "and not after");

    await ui.click("button", "Delete endpoint");
    await ui.waitButton("Confirm delete");
    check(await ui.evaluate(() => document.activeElement?.textContent) === "Confirm delete", "Delete endpoint asks again, the focus on Confirm delete");
    await ui.click("button", "Confirm delete");
    await ui.heading("Webhooks");
    const gone = await fetch(`${base}/v2/webhooks/endpoints/${ep.id}`, { headers: { Authorization: `ApiKey ${apiKey}` } });
    check(gone.status === 404, `the endpoint is deleted from its page (${gone.status})`);
  } finally {
    hook.close();
  }
}

// analytics: the Analytics page charts the environment's messages of the
// last 30 days by channel and by outcome, and its table's row of today
// (UTC) counts the messages the API lists for today's triggers, by
// channel, and `opened` ones (at least opened, from providerEvents); the
// period switches to 7 days.
export async function analytics(ui, check, { opened }) {
  const today = new Date().toISOString().slice(0, 10);
  const count = async (channel) => (await api("GET", `/v1/messages?channel=${channel}&limit=1`)).totalCount;
  let want, row, again = false;
  await until(async () => { // messages still being made (a step's worker) would move the numbers
    want = { inApp: await count("in_app"), email: await count("email") };
    if (again) { // the page read again
      await ui.nav("Workflows");
      await ui.heading("Workflows");
    }
    again = true;
    await ui.nav("Analytics");
    await ui.heading("Analytics");
    await ui.waitCell(today);
    row = await ui.evaluate((d) => {
      const tr = [...document.querySelectorAll("#view tbody tr")].find((r) => r.cells[0].textContent === d);
      const heads = [...document.querySelectorAll("#view thead th")].map((th) => th.textContent);
      return Object.fromEntries(heads.map((name, i) => [name, tr.cells[i].textContent]));
    }, today);
    return Number(row["In-app"]) === want.inApp && Number(row.Email) === want.email;
  }, "today's row matches the API's messages");
  check(Number(row["In-app"]) > 0 && Number(row.Email) > 0 && Number(row.Opened) >= opened && Number(row.Delivered) >= Number(row["In-app"]),
    `Analytics counts today's messages by channel and outcome (${JSON.stringify(row)})`);
  const bars = await ui.evaluate(() => ({ channel: document.querySelectorAll("svg.chart")[0].querySelectorAll("rect.s-in_app").length,
    outcome: document.querySelectorAll("svg.chart")[1].querySelectorAll("rect.s-opened").length,
    named: [...document.querySelectorAll("svg.chart")].every((s) => s.getAttribute("role") === "img"
      && document.getElementById(s.getAttribute("aria-labelledby"))?.textContent.length > 0) }));
  check(bars.channel >= 1 && bars.outcome >= 1 && bars.named, "and charts them (by channel, by outcome), the charts named images");
  check((await ui.evaluate(() => document.querySelectorAll("#view tbody tr").length)) === 30, "the table lists the 30 days");
  await ui.axe("Analytics");
  await ui.select("Period", "7");
  await until(async () => (await ui.evaluate(() => document.querySelectorAll("#view tbody tr").length)) === 7, "7 days");
  check(true, "the period switches to the last 7 days");
}
