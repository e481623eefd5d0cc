// The issue's end-to-end proof: the Novu Framework app of clients/bridge-app,
// already running at BRIDGE_URL with NOVU_SECRET_KEY = HERALD_API_KEY, is
// synced into Herald with the real `novu` CLI (2.20.1, offline:
// ANALYTICS_ENABLED=false) and triggered through the official @novu/api SDK.
//
//   HERALD_URL=http://127.0.0.1:3000 HERALD_API_KEY=... BRIDGE_URL=http://127.0.0.1:4000/api/novu node run.mjs
//
// Prints `ok …` per check; exits 1 with a message on the first failure.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Novu } from "@novu/api";

const serverURL = process.env.HERALD_URL;
const secretKey = process.env.HERALD_API_KEY;
const bridgeUrl = process.env.BRIDGE_URL;
if (!serverURL || !secretKey || !bridgeUrl) {
  console.error("set HERALD_URL, HERALD_API_KEY and BRIDGE_URL");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const novu = new Novu({ secretKey, serverURL });
const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 7)}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

class CheckError extends Error {}
function check(cond, what, got) {
  if (!cond) throw new CheckError(`${what}${got === undefined ? "" : `: got ${JSON.stringify(got)}`}`);
}

async function step(name, fn) {
  try {
    const out = await fn();
    console.log(`ok   ${name}`);
    return out;
  } catch (err) {
    console.error(`FAIL ${name}`);
    if (err instanceof CheckError) console.error(`  assertion: ${err.message}`);
    else {
      console.error(`  ${err?.name ?? "Error"}: ${err?.message ?? err}`);
      if (typeof err?.pretty === "function") console.error(`  ${err.pretty()}`);
      if (err?.body) console.error(`  status: ${err.statusCode} body: ${String(err.body).slice(0, 2000)}`);
    }
    process.exit(1);
  }
}

// api calls Herald without the SDK (routes it has no method for).
async function api(method, path, body) {
  const res = await fetch(`${serverURL}${path}`, {
    method,
    headers: { Authorization: `ApiKey ${secretKey}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  check(res.ok, `${method} ${path} → ${res.status}`, text);
  return text ? JSON.parse(text) : null;
}

// jobsOf waits (10 s at most) until a transaction's jobs have the statuses
// wanted, in order, and returns them.
async function jobsOf(transactionId, want) {
  let got = [];
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(100)) {
    const list = await api("GET", `/v1/notifications?transactionId=${encodeURIComponent(transactionId)}`);
    if (list.data.length !== 1) continue;
    const jobs = (await api("GET", `/v1/notifications/${list.data[0]._id}`)).jobs;
    got = jobs.map((j) => `${j.type}:${j.status}`);
    if (got.join(",") === want.join(",")) return jobs;
  }
  throw new CheckError(`jobs of ${transactionId}: want ${want.join(",")}, got ${got.join(",")}`);
}

// jobShape waits until every job of a transaction is final and returns
// them as type:status.
async function jobShape(transactionId) {
  const final = new Set(["completed", "failed", "skipped", "merged", "canceled"]);
  let got = [];
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(100)) {
    const list = await api("GET", `/v1/notifications?transactionId=${encodeURIComponent(transactionId)}`);
    if (list.data.length !== 1) continue;
    const jobs = (await api("GET", `/v1/notifications/${list.data[0]._id}`)).jobs;
    got = jobs.map((j) => `${j.type}:${j.status}`);
    if (jobs.every((j) => final.has(j.status))) return got;
  }
  throw new CheckError(`jobs of ${transactionId} never all final: ${got.join(",")}`);
}

// feedOf waits (within ms) until the subscriber's in-app feed has n items.
async function feedOf(subscriberId, n, ms = 10_000) {
  let data = [];
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(100)) {
    data = (await novu.subscribers.notifications.list({ subscriberId })).result.data;
    if (data.length >= n) return data;
  }
  throw new CheckError(`feed of ${subscriberId}: want ${n} item(s), got ${JSON.stringify(data)}`);
}

// 1. The real CLI: `novu sync`, no stdin, no analytics, its config in a
// throwaway directory.
await step("novu sync (the real CLI) exits 0", async () => {
  const pkg = JSON.parse(readFileSync(join(here, "node_modules", "novu", "package.json"), "utf8"));
  const bin = join(here, "node_modules", "novu", typeof pkg.bin === "string" ? pkg.bin : pkg.bin.novu);
  const config = mkdtempSync(join(tmpdir(), "novu-cli-"));
  try {
    const r = spawnSync(process.execPath, [bin, "sync", "--bridge-url", bridgeUrl, "--api-url", serverURL, "--secret-key", secretKey], {
      stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", timeout: 30_000,
      env: { ...process.env, ANALYTICS_ENABLED: "false", XDG_CONFIG_HOME: config, NODE_ENV: "production", NO_COLOR: "1" },
    });
    check(r.status === 0, `novu ${pkg.version} sync exit status`, { status: r.status, signal: r.signal, error: r.error?.message, stdout: r.stdout, stderr: r.stderr });
    return pkg.version;
  } finally {
    rmSync(config, { recursive: true, force: true });
  }
});

await step("workflows.list has the app's workflows, synced", async () => {
  const ws = (await novu.workflows.list({ limit: 100 })).result.workflows;
  const ids = ws.map((w) => w.workflowId);
  for (const id of ["welcome", "digest", "echo", "fails"]) check(ids.includes(id), `lists ${id}`, ids);
  const welcome = ws.find((w) => w.workflowId === "welcome");
  check(welcome.name === "Welcome" && welcome.origin === "external", "welcome's name and origin", welcome);
});

await step("GET /v2/workflows/welcome: the steps and payload schema of the code", async () => {
  const r = await api("GET", "/v2/workflows/welcome");
  const w = r.data ?? r;
  check(w.steps.map((s) => `${s.stepId}:${s.type}`).join(",") === "inbox:in_app,follow-up:email,text:sms", "steps", w.steps.map((s) => s.stepId));
  check(JSON.stringify(w.payloadSchema?.required) === '["name"]', "payload schema", w.payloadSchema);
});

// @novu/api's workflows.get validates an e-mail step's controlValues.subject
// as a required string: Herald answers "" for a synced step without one.
await step("workflows.get welcome (@novu/api)", async () => {
  const w = (await novu.workflows.get("welcome")).result;
  check(w.steps.length === 3, "steps", w.steps);
  check(w.steps[1].controlValues?.subject === "", "the e-mail step's subject defaults to \"\"", w.steps[1].controlValues);
});

// Control values: the SMS is skipped by the app (skip: controls.off), and
// the digest window is 3 s instead of the code's 5 minutes.
await step("PUT /v1/bridge/controls (sms off, digest 3 s)", async () => {
  await api("PUT", "/v1/bridge/controls/welcome/text", { variables: { off: true } });
  await api("PUT", "/v1/bridge/controls/digest/collect", { variables: { amount: 3, unit: "seconds" } });
});

const subscriberId = `fw-${run}`;
await step("subscribers.create with an e-mail", async () => {
  const s = (await novu.subscribers.create({ subscriberId, firstName: "Ada", lastName: "Lovelace", email: `ada+${run}@example.com` })).result;
  check(s.subscriberId === subscriberId, "subscriberId", s);
});

// 2. in-app + e-mail (+ a skipped sms).
const welcomeTx = `fw-welcome-${run}`;
await step("trigger welcome", async () => {
  const t = (await novu.trigger({ workflowId: "welcome", to: subscriberId, payload: { name: "Ada", plan: "pro" }, transactionId: welcomeTx })).result;
  check(t.acknowledged === true && t.transactionId === welcomeTx, "acknowledged", t);
});

await step("the in-app message the app rendered is in the feed", async () => {
  const [m] = await feedOf(subscriberId, 1);
  check(m.subject === "Welcome, Ada!", "subject (the control default's Liquid)", m.subject);
  check(m.body === "You are on the pro plan.", "body", m.body);
  check(m.redirect?.url === "https://example.com/start", "redirect", m.redirect);
  check(JSON.stringify(m.data) === '{"plan":"pro"}', "data", m.data);
});

await step("welcome's jobs: in_app completed, email completed, sms skipped by the app", async () => {
  const jobs = await jobsOf(welcomeTx, ["in_app:completed", "email:completed", "sms:skipped"]);
  const raws = jobs[2].executionDetails.map((d) => d.raw).join(" ");
  check(raws.includes('"skip":true'), "the skip's detail", jobs[2].executionDetails);
});

await step("the e-mail went out through the SendGrid integration", async () => {
  const msgs = await api("GET", `/v1/messages?channel=email&transactionId=${encodeURIComponent(welcomeTx)}`);
  check(msgs.data.length === 1, "one e-mail message", msgs.data);
  const m = msgs.data[0];
  check(m.subject === "Still there, Ada?", "subject", m.subject);
  check(m.content === "<p>Your welcome message is unread.</p>", "html = the step's body", m.content);
  check(m.status === "sent" && m.providerId === "sendgrid", "sent by sendgrid", { status: m.status, providerId: m.providerId, errorText: m.errorText });
});

// 3. digest → delay → in_app: two triggers, one summary counting 2 events.
const digestSub = `fw-digest-${run}`;
await step("digest: two triggers, one summary of 2 events", async () => {
  await novu.subscribers.create({ subscriberId: digestSub, firstName: "Dee" });
  const tx = [`fw-d1-${run}`, `fw-d2-${run}`];
  for (const [i, transactionId] of tx.entries()) {
    await novu.trigger({ workflowId: "digest", to: digestSub, payload: { n: i + 1 }, transactionId });
  }
  const items = await feedOf(digestSub, 1, 15_000);
  await sleep(500); // a second summary would show up now
  const again = (await novu.subscribers.notifications.list({ subscriberId: digestSub })).result.data;
  check(again.length === 1 && items[0].body === "2 events", "one summary counting 2 events", again.map((m) => m.body));
  // Bridge steps run concurrently: either event may reach the digest first
  // and lead the window; the other is merged into it.
  const leader = ["digest:completed", "delay:completed", "in_app:completed"];
  const merged = ["digest:merged", "delay:skipped", "in_app:skipped"];
  const shapes = await Promise.all(tx.map((t) => jobShape(t)));
  const sorted = shapes.map((s) => s.join(",")).sort();
  check(sorted[0] === leader.join(",") && sorted[1] === merged.join(","), "one event leads the window, the other is merged", shapes);
});

// 4. A step that throws, a payload the app's schema refuses: failed jobs, no message.
await step("bridge errors fail their job with the framework's message", async () => {
  const bad = `fw-bad-${run}`, boom = `fw-boom-${run}`;
  await novu.trigger({ workflowId: "welcome", to: digestSub, payload: {}, transactionId: bad });
  await novu.trigger({ workflowId: "fails", to: digestSub, payload: {}, transactionId: boom });
  const [inbox] = await jobsOf(bad, ["in_app:failed", "email:failed", "sms:failed"]);
  check(JSON.stringify(inbox.executionDetails).includes("must have required property 'name'"), "payload error", inbox.executionDetails);
  const [thrown] = await jobsOf(boom, ["in_app:failed"]);
  check(JSON.stringify(thrown.executionDetails).includes("the step blew up"), "thrown error", thrown.executionDetails);
  const items = (await novu.subscribers.notifications.list({ subscriberId: digestSub })).result.data;
  check(items.length === 1, "no message from a failed step", items.map((m) => m.body));
});

console.log(`ok   all: novu CLI sync, @novu/api trigger, in-app, e-mail, digest, delay, skip (run ${run})`);
