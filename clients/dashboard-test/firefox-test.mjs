// The dashboard in Firefox (Debian's firefox-esr, driven over WebDriver
// BiDi by puppeteer-core): sign-in (wrong, then right), every page of the
// navigation (each checked by axe-core), a step's preview, sign-out, and
// no console or page errors.
// The full suite is browser-test.mjs (Chromium); this checks the same front
// end works in the other engine. Run by internal/e2e TestDashboardChromium
// when /usr/bin/firefox-esr exists, or by hand:
//   HERALD_URL=… HERALD_API_KEY=… HERALD_EMAIL=… HERALD_PASSWORD=… node firefox-test.mjs
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import puppeteer from "puppeteer-core";

const base = process.env.HERALD_URL;
const apiKey = process.env.HERALD_API_KEY;
const email = process.env.HERALD_EMAIL;
const password = process.env.HERALD_PASSWORD;
const executablePath = process.env.FIREFOX || "/usr/bin/firefox-esr";
if (!base || !apiKey || !email || !password) {
  console.error("HERALD_URL, HERALD_API_KEY, HERALD_EMAIL and HERALD_PASSWORD are required");
  process.exit(2);
}

function check(cond, what) {
  if (!cond) throw new Error(what);
  console.log("ok -", what);
}

async function api(method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `ApiKey ${apiKey}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok && res.status !== 409) throw new Error(`${method} ${path}: HTTP ${res.status} ${await res.text()}`);
}

const axeSource = await readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const axe = async (page, name) => {
  await page.evaluate(axeSource);
  const ids = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ["violations"] }))
    .violations.filter((v) => v.impact === "critical").map((v) => v.id));
  check(ids.length === 0, `Firefox: ${name}: no critical axe-core violations${ids.length ? `: ${ids.join(", ")}` : ""}`);
};
const text = (page, sel) => page.$eval(sel, (el) => el.textContent);
const visible = (page, sel, timeout = 10000) => page.waitForSelector(`${sel}:not([hidden])`, { visible: true, timeout });
const heading = (page, name) => page.waitForFunction((n) => document.querySelector("#view h1")?.textContent === n, { timeout: 10000 }, name);

await api("POST", "/v2/workflows", {
  name: "Firefox check", workflowId: "firefox-check",
  steps: [{ name: "Inbox", stepId: "inbox", type: "in_app", controlValues: { subject: "Hi {{subscriber.firstName}}", body: "{{payload.x}}" } }],
});

const browser = await puppeteer.launch({ browser: "firefox", executablePath, headless: true });
const problems = [];
let failed = false;
try {
  const page = await browser.newPage();
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console.error: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));

  await page.goto(`${base}/dashboard/`);
  await visible(page, "#signin");
  await page.type("#email", email);
  await page.type("#password", "not the password");
  await page.click("#signin-form button[type=submit]");
  await visible(page, "#signin-error");
  check((await text(page, "#signin-error")) === "Wrong email or password.", "Firefox: a wrong password shows a visible error");
  problems.length = 0; // the refused sign-in's 401 is the one expected error

  await page.$eval("#password", (el) => { el.value = ""; });
  await page.type("#password", password);
  await page.click("#signin-form button[type=submit]");
  await visible(page, "#app");
  check((await text(page, "#who")) === email, "Firefox: signed in");

  for (const [nav, h1] of [["workflows", "Workflows"], ["activity", "Activity"], ["subscribers", "Subscribers"], ["topics", "Topics"],
    ["integrations", "Integrations"], ["api-keys", "API keys"]]) {
    await page.click(`[data-nav="${nav}"]`);
    await heading(page, h1);
    check(true, `Firefox: ${h1}`);
    await axe(page, h1);
  }
  await page.click('[data-nav="workflows"]');
  await heading(page, "Workflows");
  await page.click('a[href="#/workflows/firefox-check"]');
  await heading(page, "Firefox check");
  await page.$eval("#payload-inbox", (el) => { el.value = '{"x":"from Firefox"}'; });
  await page.click("section.card button.secondary");
  await page.waitForFunction(() => document.querySelector(".preview")?.textContent.includes("from Firefox"), { timeout: 10000 });
  check(true, "Firefox: a step's preview renders");

  await page.click("#signout");
  await visible(page, "#signin");
  check(true, "Firefox: signed out");
  check(problems.length === 0, `Firefox: no console or page errors${problems.length ? `: ${problems.join("; ")}` : ""}`);
} catch (err) {
  failed = true;
  console.error("FAIL:", err.message);
  console.error(problems.join("\n"));
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
