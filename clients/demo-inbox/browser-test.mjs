// Opens Herald's demo inbox page (/demo/) in headless Chromium and checks
// what a newcomer sees: the bell's unread count, the list, a click marking a
// notification read, and a live arrival after a trigger. Run by
// internal/e2e TestDemoInboxChromium, or by hand:
//   HERALD_URL=http://127.0.0.1:3000 HERALD_API_KEY=hk_... node browser-test.mjs
import { chromium } from "playwright-core";

const base = process.env.HERALD_URL;
const apiKey = process.env.HERALD_API_KEY;
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
if (!base || !apiKey) {
  console.error("HERALD_URL and HERALD_API_KEY are required");
  process.exit(2);
}

async function trigger(message) {
  const res = await fetch(`${base}/v1/events/trigger`, {
    method: "POST",
    headers: { Authorization: `ApiKey ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "herald-demo", to: "herald-demo-subscriber", payload: { message } }),
  });
  if (res.status !== 201) throw new Error(`trigger: HTTP ${res.status} ${await res.text()}`);
}

function check(cond, what) {
  if (!cond) throw new Error(what);
  console.log("ok -", what);
}

const browser = await chromium.launch({
  executablePath,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
let failed = false;
try {
  const page = await browser.newPage();
  const logs = [];
  page.on("console", (m) => logs.push(`console.${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => logs.push(`pageerror: ${e.message}`));
  // Only Herald: the page must not need the internet.
  await page.route((url) => !url.href.startsWith(base), (route) => route.abort());
  try {
    await trigger("First: waiting before the page opened.");
    await page.goto(`${base}/demo/`);
    const count = page.locator(".herald-bell-count");
    await count.filter({ hasText: /^1$/ }).waitFor({ timeout: 15000 });
    check(true, "the bell counts 1 unread notification");

    await page.locator(".herald-bell").click();
    const items = page.locator(".nv-notification");
    await items.first().waitFor({ timeout: 10000 });
    check((await items.count()) === 1, "the list shows 1 notification");
    const first = items.first();
    check((await first.innerText()).includes("First: waiting before the page opened."), "its body is the payload's message");
    check((await first.innerText()).includes("Hello from Herald"), "its subject is the step's");

    await page.locator(".nv-notificationSubject, .nv-notificationBody").first().click();
    await page.waitForFunction(() => {
      const el = document.querySelector(".herald-bell-count");
      return el && el.dataset.count === "0";
    }, null, { timeout: 10000 });
    check(true, "a click marks it read: the bell counts 0");
    const res = await fetch(`${base}/v1/messages?subscriberId=herald-demo-subscriber&channel=in_app`, {
      headers: { Authorization: `ApiKey ${apiKey}` },
    });
    const msgs = (await res.json()).data;
    check(res.status === 200 && msgs.length === 1 && msgs[0].read === true, "Herald stored it as read");

    await trigger("Second: arrived live.");
    await count.filter({ hasText: /^1$/ }).waitFor({ timeout: 10000 });
    check(true, "a trigger while the page is open: the bell counts 1 again");
    // The open list announces arrivals ("1 new notification") and shows
    // them on a click, as the official Inbox does.
    const notice = page.getByText("1 new notification", { exact: true });
    await notice.waitFor({ timeout: 10000 });
    check(true, "the open list announces 1 new notification");
    await notice.click();
    await page.locator(".nv-notification", { hasText: "Second: arrived live." }).waitFor({ timeout: 10000 });
    check((await items.count()) === 2, "the new notification is in the open list, above the read one");
    check((await items.first().innerText()).includes("Second: arrived live."), "newest first");
  } catch (err) {
    failed = true;
    console.error("FAIL:", err.message);
    console.error(logs.join("\n"));
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
