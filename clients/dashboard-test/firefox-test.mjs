// The dashboard in Firefox (Debian's firefox-esr, driven over WebDriver
// BiDi by puppeteer-core): the checks browser-test.mjs runs in Chromium.
// The first load (interactive within 2 s, under 500 KB), sign-in (wrong:
// an error and no cookie; right, with Enter: an HttpOnly SameSite=Strict
// cookie), Tab and Enter through the navigation, every page (each checked
// by axe-core), a step's preview (rendered, and a template error), editing
// and saving the step (the public API returns it, in the order written), a
// test trigger in Activity with its execution details, a new trigger
// without a reload, the status and filters, a subscriber's page, a topic
// with a member added and removed, integrations (the catalogue, a
// credential form, Send test to a local fake, deactivate, edit, delete), an
// API key shown once then masked and revoked, the environment switch, a
// step in a layout with translations, a workflow built from nothing (its
// steps added, moved, removed, one previewed before any Save, a condition,
// a refused one, saved, checked through the API, renamed, deactivated and
// activated, triggered; a throwaway one deleted), a 375 px screen, the dashboard's
// requests replayed without the cookie (401) and from another origin with
// it (403), sign-out (the old cookie then gets 401), and no console or page
// errors. The steps both browsers run are in steps.mjs. Run by internal/e2e
// TestDashboardChromium when /usr/bin/firefox-esr exists, or by hand:
//   HERALD_URL=… HERALD_API_KEY=… HERALD_EMAIL=… HERALD_PASSWORD=… node firefox-test.mjs
import puppeteer from "puppeteer-core";
import { base, email, password, axeSource, api as apiCall, makeCheck, domUI, firstLoad, keyboardNavigation,
  templateError, activity, subscriber, topic, integrations, apiKeys, environmentSwitch, layoutPreview, narrowScreen, buildWorkflow, expectedError,
  providerEvents, webhooks, analytics } from "./steps.mjs";

const executablePath = process.env.FIREFOX || "/usr/bin/firefox-esr";
const check = makeCheck("Firefox: ");
const api = (method, path, body) => apiCall(method, path, body, { okConflict: true });

const axe = async (page, name) => {
  await page.evaluate(axeSource);
  const ids = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ["violations"] }))
    .violations.filter((v) => v.impact === "critical").map((v) => v.id));
  check(ids.length === 0, `${name}: no critical axe-core violations${ids.length ? `: ${ids.join(", ")}` : ""}`);
};
const text = (page, sel) => page.$eval(sel, (el) => el.textContent);
const visible = (page, sel, timeout = 10000) => page.waitForSelector(`${sel}:not([hidden])`, { visible: true, timeout });
const clickButton = (page, label) => page.evaluate((l) => {
  const b = [...document.querySelectorAll("#view button")].find((el) => el.textContent === l);
  if (!b) throw new Error(`no button ${l}`);
  b.click();
}, label);
const textAppears = (page, sel, want, timeout = 10000) => page.waitForFunction((s, w) =>
  [...document.querySelectorAll(s)].some((el) => el.textContent.includes(w)), { timeout }, sel, want);
const heading = (page, name) => page.waitForFunction((n) => document.querySelector("#view h1")?.textContent === n, { timeout: 10000 }, name);

await api("POST", "/v2/workflows", {
  name: "Firefox check", workflowId: "firefox-check",
  steps: [{ name: "Inbox", stepId: "inbox", type: "in_app", controlValues: { subject: "Hi {{subscriber.firstName}}", body: "{{payload.x}}" } }],
});
await api("POST", "/v2/subscribers", { subscriberId: "firefox-ada", firstName: "Ada" });

const browser = await puppeteer.launch({ browser: "firefox", executablePath, headless: true, defaultViewport: { width: 1200, height: 900 } });
const problems = [];
let failed = false;
try {
  const page = await browser.newPage();
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console.error: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));

  const ui = domUI(page, { axe: (name) => axe(page, name) });
  // Firefox starts a content process for a site at its first page: done
  // here with a page of Herald's that is not the dashboard, so the first
  // load measures the dashboard (nothing of it cached), not that start.
  await page.goto(`${base}/health`);
  await firstLoad(ui, check, async () => { // a fresh context's first load, timed by its page
    const context = await browser.createBrowserContext();
    try {
      const fresh = await context.newPage();
      await fresh.goto(`${base}/health`);
      await fresh.goto(`${base}/dashboard/`);
      await fresh.waitForFunction(() => [...document.querySelectorAll("button")].some((b) => b.textContent.trim() === "Sign in"
        && b.offsetParent !== null), { timeout: 10000, polling: 50 });
      return await fresh.evaluate(() => performance.now());
    } finally {
      await context.close();
    }
  });
  await visible(page, "#signin");
  await axe(page, "Sign-in");
  await page.type("#email", email);
  await page.type("#password", "not the password");
  await page.click("#signin-form button[type=submit]");
  await visible(page, "#signin-error");
  check((await text(page, "#signin-error")) === "Wrong email or password.", "a wrong password shows a visible error");
  check((await page.cookies()).length === 0, "and makes no session cookie");
  problems.length = 0; // the refused sign-in's 401 is the one expected error

  await page.$eval("#password", (el) => { el.value = ""; });
  await page.type("#password", password);
  await page.keyboard.press("Enter"); // the keyboard alone signs in
  await visible(page, "#app");
  check((await text(page, "#who")) === email, "signed in with the keyboard");
  await keyboardNavigation(ui, check);

  for (const [nav, h1] of [["workflows", "Workflows"], ["activity", "Activity"], ["subscribers", "Subscribers"], ["topics", "Topics"],
    ["integrations", "Integrations"], ["api-keys", "API keys"]]) {
    await page.click(`[data-nav="${nav}"]`);
    await heading(page, h1);
    check(true, h1);
    if (!["Topics", "Integrations", "API keys"].includes(h1)) await axe(page, h1); // those below, with data
  }
  await page.click('[data-nav="workflows"]');
  await heading(page, "Workflows");
  await page.click('a[href="#/workflows/firefox-check"]');
  await heading(page, "Firefox check");
  await page.$eval("#payload-inbox", (el) => { el.value = '{"x":"from Firefox"}'; });
  await clickButton(page, "Preview");
  await page.waitForFunction(() => document.querySelector(".preview")?.textContent.includes("from Firefox"), { timeout: 10000 });
  check(true, "a step's preview renders");
  await templateError(ui, check, { restore: "Hi {{subscriber.firstName}}" });

  // Edit and save.
  await page.$eval("#control-inbox-body", (el) => { el.value = "Saved in Firefox: {{payload.x}}"; });
  await clickButton(page, "Save");
  await textAppears(page, "[role=status]", "Saved.");
  const saved = await api("GET", "/v2/workflows/firefox-check");
  check(saved.steps[0].controlValues.body === "Saved in Firefox: {{payload.x}}", "a step is edited and saved");
  check(Object.keys(saved.steps[0].controlValues).join() === "subject,body", "the controls keep their order");

  // A test trigger, in Activity, with its execution details.
  await page.$eval("#test-to", (el) => { el.value = "firefox-ada"; });
  await page.$eval("#test-payload", (el) => { el.value = '{"x":"test trigger"}'; });
  await clickButton(page, "Trigger");
  await textAppears(page, "[role=status]", "Triggered:");
  const tx = await page.$eval("[role=status] a", (el) => el.textContent);
  await page.click('[data-nav="activity"]');
  await heading(page, "Activity");
  await textAppears(page, "#view a", tx, 15000);
  check(true, "the test trigger appears in Activity");
  await activity(ui, check, { knownTx: tx, workflowId: "firefox-check", subscriberId: "firefox-ada", payload: { x: "Live" } });
  await page.evaluate((t) => [...document.querySelectorAll("#view a")].find((a) => a.textContent === t).click(), tx);
  await heading(page, `Trigger ${tx}`);
  const triggerHash = await page.evaluate(() => location.hash);
  await textAppears(page, ".job ol.details li", "In-app message created", 15000);
  await textAppears(page, ".card", "Saved in Firefox: test trigger", 15000);
  check(true, "the trigger's page shows its execution details and message");

  // The steps browser-test.mjs runs in Chromium too (steps.mjs).
  const built = await buildWorkflow(ui, check, { workflowId: "firefox-built", workflowName: "Firefox built", subscriberId: "firefox-ada" });
  problems.splice(0, Infinity, ...problems.filter((p) => !expectedError(p, "firefox-built"))); // the refused save's 422
  await subscriber(ui, check, { subscriberId: "firefox-ada", message: "Saved in Firefox: test trigger", workflowName: "Firefox check" });
  await topic(ui, check, { key: "firefox-news", name: "Firefox news", subscriberId: "firefox-ada" });
  await integrations(ui, check, { name: "Firefox hook" });
  await apiKeys(ui, check);
  await environmentSwitch(ui, check, { workflowName: "Firefox check" });
  await layoutPreview(ui, check, { layoutId: "firefox-brand", workflowId: "firefox-branded", workflowName: "Firefox branded" });
  await providerEvents(ui, check, { workflowId: "firefox-mail", subscriberId: "firefox-ada", name: "Firefox SendGrid" });
  await webhooks(ui, check, { workflowId: "firefox-check", subscriberId: "firefox-ada", description: "Firefox receiver" });
  await analytics(ui, check, { opened: 1 });
  await narrowScreen(ui, check, { workflowId: "firefox-check", workflowName: "Firefox check", subscriberId: "firefox-ada",
    triggerHash, triggerTx: tx, extra: [built, ["#/webhooks", "Webhooks"], ["#/analytics", "Analytics"]] });

  // The dashboard's requests replayed, as a page of another origin would.
  const cookies = await page.cookies();
  const session = cookies.find((c) => c.name === "herald_dashboard_session");
  check(session && session.httpOnly && session.sameSite === "Strict", "the session cookie is HttpOnly and SameSite=Strict");
  const jar = `${session.name}=${session.value}`;
  const list = `${base}/dashboard/api/env/development/v2/workflows?limit=100`;
  const preview = (headers) => fetch(`${base}/dashboard/api/env/development/preview`, { method: "POST",
    body: JSON.stringify({ workflowId: "firefox-check", stepId: "inbox" }), headers: { "Content-Type": "application/json", ...headers } });
  check((await fetch(list)).status === 401, "the dashboard's GET without the cookie: 401");
  check((await preview({})).status === 401, "its POST without the cookie: 401");
  check((await preview({ Cookie: jar, Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" })).status === 403,
    "with the cookie from another origin (Sec-Fetch-Site): 403");
  check((await preview({ Cookie: jar, Origin: "https://evil.example" })).status === 403, "with the cookie from another origin (Origin only): 403");
  check((await preview({ Cookie: jar, Origin: base, "Sec-Fetch-Site": "same-origin" })).status === 200, "from the dashboard's origin: 200");

  await page.click("#signout");
  await visible(page, "#signin");
  check(true, "signed out");
  check((await fetch(list, { headers: { Cookie: jar } })).status === 401, "the old cookie gets 401");
  check(problems.length === 0, `no console or page errors${problems.length ? `: ${problems.join("; ")}` : ""}`);
} catch (err) {
  failed = true;
  console.error("FAIL:", err.message);
  console.error(problems.join("\n"));
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
