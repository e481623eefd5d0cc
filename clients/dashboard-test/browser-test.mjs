// Drives Herald's dashboard (/dashboard/) in headless Chromium against a
// running `herald serve`: sign-in (a wrong password, then the right one),
// the navigation and the environment switch, a workflow's step preview
// (rendered and with a template error), editing and saving a step (the
// public API returns the new content), a test trigger that appears in
// Activity without a reload and its execution details, the other pages,
// API key masking, sign-out, and the data routes' 401 and cross-origin 403
// by replaying the dashboard's own requests. axe-core runs on every page.
// A workflow is built from nothing (steps of every kind added, moved,
// removed; a step previewed before any Save; a condition made in the
// builder, a refused one shown; saved and checked through the public API;
// the workflow and a step renamed, deactivated and activated; triggered),
// and a throwaway workflow deleted from its page.
// The steps firefox-test.mjs runs too (keyboard navigation, a topic,
// integrations with Send test, API keys, a 375 px screen) are in steps.mjs.
// Run by internal/e2e TestDashboardChromium, or by hand:
//   HERALD_URL=http://127.0.0.1:3000 HERALD_API_KEY=hk_… HERALD_EMAIL=… HERALD_PASSWORD=… node browser-test.mjs
import { mkdir } from "node:fs/promises";
import { chromium } from "playwright-core";
import { base, email, password, axeSource, api, makeCheck, playwrightUI, keyboardNavigation,
  templateError, activity, subscriber, topic, integrations, apiKeys, environmentSwitch, layoutPreview, narrowScreen, buildWorkflow, expectedError,
  providerEvents, webhooks, analytics, interactiveWithin2s } from "./steps.mjs";

const shots = process.env.SCREENSHOT_DIR;
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
if (shots) await mkdir(shots, { recursive: true });

const check = makeCheck();

const browser = await chromium.launch({
  executablePath,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
let failed = false;
let page;
const problems = []; // console errors, page errors, failed requests
try {
  // Data to see: a workflow with an in-app step, and a trigger of it.
  await api("POST", "/v2/workflows", {
    name: "Dashboard welcome", workflowId: "dashboard-welcome",
    steps: [{ name: "Inbox", stepId: "inbox", type: "in_app", controlValues: { subject: "Hi {{subscriber.firstName}}", body: "{{payload.greeting}}" } }],
  });
  await api("POST", "/v2/subscribers", { subscriberId: "ada", firstName: "Ada", email: "ada@example.com" });
  const first = await api("POST", "/v1/events/trigger", { name: "dashboard-welcome", to: "ada", payload: { greeting: "First" } });

  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  page = await context.newPage();
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console.error: ${m.text()} (${m.location().url})`); });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`));
  const own = []; // the dashboard's own API requests, to replay
  page.on("request", (r) => { if (r.url().startsWith(`${base}/dashboard/api/`)) own.push(r); });
  await page.route((url) => !url.href.startsWith(base), (route) => route.abort()); // Herald only

  const axe = async (name) => {
    await page.evaluate(axeSource);
    const res = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
    const critical = res.violations.filter((v) => v.impact === "critical");
    check(critical.length === 0, `${name}: no critical axe-core violations${critical.length ? `: ${critical.map((v) => v.id).join(", ")}` : ""}`);
    if (shots) await page.screenshot({ path: `${shots}/${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}.png`, fullPage: true });
  };

  // Sign-in: a wrong password first.
  const firstLoad = [];
  page.on("response", async (r) => { firstLoad.push(Number(r.headers()["content-length"] || (await r.body().catch(() => "")).length || 0)); });
  await page.goto(`${base}/dashboard/`);
  await page.getByRole("button", { name: "Sign in" }).waitFor();
  await interactiveWithin2s(check, Math.round(await page.evaluate(() => performance.now())), async () => { // a fresh context's first load
    const fresh = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    try {
      const p = await fresh.newPage();
      await p.goto(`${base}/dashboard/`);
      await p.getByRole("button", { name: "Sign in" }).waitFor();
      return await p.evaluate(() => performance.now());
    } finally {
      await fresh.close();
    }
  });
  check(firstLoad.reduce((a, b) => a + b, 0) < 500_000, "the first load of /dashboard/ transfers less than 500 KB");
  await axe("Sign-in");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").filter({ hasText: "Wrong email or password." }).waitFor();
  check(true, "a wrong password shows a visible error");
  check((await context.cookies()).length === 0, "and makes no session cookie");
  problems.length = 0; // the refused sign-in's 401 is the one expected error

  await page.getByLabel("Password").fill(password);
  await page.keyboard.press("Enter"); // the keyboard alone signs in
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  const [cookie] = await context.cookies();
  check(cookie && cookie.httpOnly && cookie.sameSite === "Strict", "signed in: the session cookie is HttpOnly and SameSite=Strict");
  for (const name of ["Workflows", "Activity", "Analytics", "Subscribers", "Topics", "Integrations", "Webhooks", "API keys"]) {
    check(await page.getByRole("link", { name, exact: true }).isVisible(), `the navigation links ${name}`);
  }
  check((await page.getByLabel("Environment").inputValue()) === "development", "the environment shown is Development");
  const ui = playwrightUI(page, { axe });
  await keyboardNavigation(ui, check); // Tab reaches the navigation, Enter follows a link
  await page.getByRole("link", { name: "Workflows", exact: true }).click();

  // Workflows and a workflow's step.
  await page.getByRole("heading", { name: "Workflows" }).waitFor();
  await axe("Workflows");
  await page.getByRole("link", { name: "Dashboard welcome" }).click();
  await page.getByRole("heading", { name: "Dashboard welcome" }).waitFor();
  await page.getByLabel("Payload (JSON)").first().fill('{"greeting":"Hello from the preview"}');
  await page.getByRole("button", { name: "Preview" }).click();
  await page.locator(".preview").getByText("Hello from the preview").waitFor();
  check(await page.locator(".preview").getByText("Hi Ada").isVisible(), "the preview renders the step with the payload and a sample subscriber");
  await axe("Workflow");
  await templateError(ui, check, { restore: "Hi {{subscriber.firstName}}" });
  await page.getByLabel("subject", { exact: true }).fill("Welcome {{subscriber.firstName}}");
  await page.getByLabel("body", { exact: true }).fill("Edited: {{payload.greeting}}");
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
  const saved = await api("GET", "/v2/workflows/dashboard-welcome");
  check(saved.steps[0].controlValues.body === "Edited: {{payload.greeting}}", "saved: the public API returns the new content");
  check(Object.keys(saved.steps[0].controlValues).join() === "subject,body", "the controls keep the order they were written in");

  // A test trigger, then Activity.
  await page.getByLabel("Subscriber ID", { exact: true }).last().fill("ada");
  await page.getByLabel("Payload (JSON)").last().fill('{"greeting":"From the test trigger"}');
  await page.getByRole("button", { name: "Trigger" }).click();
  await page.getByRole("status").filter({ hasText: "Triggered:" }).waitFor();
  const testTx = await page.getByRole("status").getByRole("link").innerText();
  check(testTx.length > 0, "a test trigger to a chosen subscriber");

  await page.getByRole("link", { name: "Activity", exact: true }).click();
  await page.getByRole("heading", { name: "Activity" }).waitFor();
  await page.getByRole("link", { name: first.transactionId }).waitFor();
  await page.getByRole("link", { name: testTx }).waitFor();
  check(true, "Activity lists the triggers");
  await activity(ui, check, { knownTx: first.transactionId, workflowId: "dashboard-welcome", subscriberId: "ada", payload: { greeting: "Live" } });
  await axe("Activity");
  await page.getByRole("link", { name: testTx }).click();
  await page.getByRole("heading", { name: `Trigger ${testTx}` }).waitFor();
  const triggerHash = await page.evaluate(() => location.hash);
  await page.locator(".job ol.details li").filter({ hasText: "In-app message created" }).waitFor({ timeout: 10000 });
  await page.locator(".card").filter({ hasText: "Edited: From the test trigger" }).waitFor({ timeout: 10000 });
  check(true, "the trigger's page shows its step's execution details and the rendered message");
  await axe("Trigger");

  // A workflow built from nothing on the dashboard (steps.mjs).
  const built = await buildWorkflow(ui, check, { workflowId: "dashboard-built", workflowName: "Dashboard built", subscriberId: "ada" });
  problems.splice(0, Infinity, ...problems.filter((p) => !expectedError(p, "dashboard-built"))); // the refused save's 422

  // A code-first workflow: clients/bridge-app (@novu/framework), synced as
  // `npx novu sync` does. The list marks it, its page shows the app's steps,
  // edits a step's control values and previews the step through the app.
  if (process.env.BRIDGE_URL) {
    const synced = await api("POST", "/v1/bridge/sync?source=cli", { bridgeUrl: process.env.BRIDGE_URL });
    check((synced.data || []).some((w) => w.workflowId === "welcome"), "the Framework app's workflows are synced");
    await page.goto(`${base}/dashboard/#/workflows`);
    await page.reload(); // the list as it is now, with the synced workflows
    await page.getByRole("heading", { name: "Workflows" }).waitFor();
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: "Welcome", exact: true }) });
    await row.waitFor();
    check(await row.getByText("code-first").isVisible(), "the list marks the synced workflow as code-first");
    const own = page.getByRole("row").filter({ has: page.getByRole("link", { name: "Dashboard welcome", exact: true }) });
    check(await own.getByText("dashboard or API").isVisible(), "and the dashboard's own as made here");
    await row.getByRole("link", { name: "Welcome", exact: true }).click();
    await page.getByRole("heading", { name: "Welcome", exact: true }).waitFor();
    check(await page.getByText("Synced from the environment's Novu Framework app").isVisible(), "its page says the steps live in the app's code");
    check(await page.getByRole("button", { name: "Add step" }).count() === 0, "and offers no step editing beyond the controls");
    for (const stepId of ["inbox", "follow-up", "text"]) {
      check(await page.locator("section.step").filter({ hasText: stepId }).count() === 1, `the app's step ${stepId} is shown`);
    }
    await page.getByLabel("Control values (JSON)").first().fill('{"subject":"Hello {{payload.name}} from the dashboard"}');
    await page.getByLabel("Payload (JSON)").first().fill('{"name":"Ada"}');
    await page.getByRole("button", { name: "Preview" }).first().click();
    await page.locator(".preview").getByText("Hello Ada from the dashboard").waitFor();
    check(true, "a step's preview is rendered by the bridge with the controls and payload the page holds");
    await axe("Code-first workflow");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    const after = await api("GET", "/v2/workflows/welcome");
    check(after.type === "BRIDGE" && after.steps[0].controlValues.subject === "Hello {{payload.name}} from the dashboard",
      "saved: the step's control values, the workflow still synced");
  } else {
    check(false, "BRIDGE_URL is set (internal/e2e TestDashboardChromium starts clients/bridge-app)");
  }

  // The other pages, with real data.
  await subscriber(ui, check, { subscriberId: "ada", message: "Edited: From the test trigger", workflowName: "Dashboard welcome" });
  // The steps firefox-test.mjs runs too (steps.mjs): a topic, integrations
  // with Send test to a local fake, API keys.
  await topic(ui, check, { key: "news", name: "News", subscriberId: "ada" });
  await integrations(ui, check, { name: "Local hook" });
  await apiKeys(ui, check);

  // The environment switch.
  await environmentSwitch(ui, check, { workflowName: "Dashboard welcome" });

  // A step in a layout, with translations: the preview is what a send is.
  await layoutPreview(ui, check, { layoutId: "brand", workflowId: "dashboard-branded", workflowName: "Dashboard branded" });

  // Issue 29 (steps.mjs): a trigger's provider events, the Webhooks page
  // (an endpoint at a local receiver) and the Analytics page.
  await providerEvents(ui, check, { workflowId: "dashboard-mail", subscriberId: "ada", name: "Local SendGrid" });
  await webhooks(ui, check, { workflowId: "dashboard-welcome", subscriberId: "ada", description: "Local receiver" });
  await analytics(ui, check, { opened: 1 });

  // A narrow screen: nothing wider than the window (tables scroll in
  // their own box).
  await narrowScreen(ui, check, { workflowId: "dashboard-welcome", workflowName: "Dashboard welcome", subscriberId: "ada",
    triggerHash, triggerTx: testTx, extra: [built, ["#/webhooks", "Webhooks"], ["#/analytics", "Analytics"]] });

  check(problems.length === 0, `no console errors and no failed requests${problems.length ? `: ${problems.join("; ")}` : ""}`);

  // Replaying the dashboard's own requests.
  const post = own.find((r) => r.method() === "POST" && r.url().endsWith("/preview"));
  const get = own.find((r) => r.method() === "GET" && r.url().includes("/v2/workflows"));
  check(post && get, "the dashboard's own requests were recorded");
  const replay = (r, headers) => fetch(r.url(), { method: r.method(), body: r.postData() || undefined,
    headers: { "Content-Type": "application/json", ...headers } });
  const jar = `${cookie.name}=${cookie.value}`;
  check((await replay(get, {})).status === 401, "replayed without the cookie: 401");
  check((await replay(post, {})).status === 401, "a state-changing request without the cookie: 401");
  check((await replay(post, { Cookie: jar, Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" })).status === 403,
    "with the cookie from another origin (Sec-Fetch-Site): 403");
  check((await replay(post, { Cookie: jar, Origin: "https://evil.example" })).status === 403,
    "with the cookie from another origin (Origin only): 403");
  check((await replay(post, { Cookie: jar, Origin: base, "Sec-Fetch-Site": "same-origin" })).status === 200,
    "the same request from the dashboard's origin: 200");

  // Sign out: the old cookie is refused from then on.
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("button", { name: "Sign in" }).waitFor();
  check(true, "signed out: the sign-in form again");
  check((await replay(get, { Cookie: jar })).status === 401, "the old cookie gets 401");
  check(problems.length === 0, `still no console errors${problems.length ? `: ${problems.join("; ")}` : ""}`);
} catch (err) {
  failed = true;
  console.error("FAIL:", err.message);
  console.error(problems.join("\n"));
  if (page) {
    console.error("The page's text at the failure:\n" + (await page.locator("body").innerText().catch(() => "")).slice(0, 3000));
    if (shots) await page.screenshot({ path: `${shots}/failure.png`, fullPage: true }).catch(() => {});
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
