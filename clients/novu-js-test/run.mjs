// Drives the official @novu/js Inbox client (pinned in package.json and
// package-lock.json) against a Herald server, in Node (no browser): the
// client opens its session exactly as it does in a page, and this script
// checks what it got.
//
//   HERALD_URL=http://127.0.0.1:3000 HERALD_API_KEY=... node run.mjs
//
// The API key is used as an app's backend uses it: to find the application
// identifier (GET /v1/environments/me), to compute subscriberHash, and to
// trigger notifications. Exits 0 when every check passes, 1 naming the first
// that failed.
import { createHmac } from "node:crypto";
import { Novu } from "@novu/js";

const apiUrl = process.env.HERALD_URL;
const apiKey = process.env.HERALD_API_KEY;
if (!apiUrl || !apiKey) {
  console.error("set HERALD_URL and HERALD_API_KEY");
  process.exit(2);
}
const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 7)}`;
const log = (...a) => console.log(...a);

class CheckError extends Error {}

function check(cond, what, got) {
  if (!cond) {
    const detail = got === undefined ? "" : `: got ${JSON.stringify(got)}`;
    throw new CheckError(`${what}${detail}`);
  }
}

async function step(name, fn) {
  try {
    const out = await fn();
    log(`ok   ${name}`);
    return out;
  } catch (err) {
    console.error(`FAIL ${name}`);
    console.error(err instanceof CheckError ? `  assertion: ${err.message}` : err?.stack ?? String(err));
    process.exit(1);
  }
}

// admin calls the API as the app's backend does.
async function admin(method, path, body) {
  const res = await fetch(`${apiUrl}${path}`, {
    method,
    headers: { Authorization: `ApiKey ${apiKey}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const subscriberHash = (subscriberId, key = apiKey) => createHmac("sha256", key).update(subscriberId).digest("hex");

// openSession constructs the client, which opens its session at once, and
// resolves with what its session.initialize.resolved event carries.
function openSession(options) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no session.initialize.resolved within 10 s")), 10_000);
    const novu = new Novu({ apiUrl, ...options });
    novu.on("session.initialize.resolved", ({ data, error }) => {
      clearTimeout(timer);
      resolve({ novu, data, error });
    });
  });
}

const applicationIdentifier = await step("GET /v1/environments/me: the application identifier", async () => {
  const me = await admin("GET", "/v1/environments/me");
  check(me.status === 200 && /^app_[0-9a-f]{20}$/.test(me.body?.identifier), "the identifier", me);
  return me.body.identifier;
});

const subscriberId = `js-user-${run}`;

await step("new Novu(...): session of a new subscriber", async () => {
  const { data, error } = await openSession({
    applicationIdentifier, subscriberHash: subscriberHash(subscriberId),
    subscriber: { subscriberId, firstName: "Ada", lastName: "Lovelace", email: `ada+${run}@example.com`, data: { plan: "pro" } },
  });
  check(error === undefined, "no error", error?.message);
  check(typeof data?.token === "string" && data.token.split(".").length === 3, "a token", data);
  check(data.totalUnreadCount === 0 && data.unreadCount?.total === 0, "nothing unread yet", data);
  check(JSON.stringify(data.unreadCount.severity) === JSON.stringify({ high: 0, medium: 0, low: 0, none: 0 }), "by severity", data.unreadCount);
  check(data.isDevelopmentMode === true && data.removeNovuBranding === true && data.maxSnoozeDurationHours === 2160, "the flags", data);
  check(data.applicationIdentifier === undefined, "no applicationIdentifier (not a keyless one)", data.applicationIdentifier);
  const sub = await admin("GET", `/v2/subscribers/${encodeURIComponent(subscriberId)}`);
  check(sub.status === 200 && sub.body.firstName === "Ada" && sub.body.data?.plan === "pro", "the subscriber was created", sub.body);
  const asAdmin = await fetch(`${apiUrl}/v2/subscribers`, { headers: { Authorization: `Bearer ${data.token}` } });
  check(asAdmin.status === 401, "the token is no API credential", asAdmin.status);
});

await step("new Novu(...): the session's unread count, the subscriber updated", async () => {
  const wf = await admin("POST", "/v2/workflows", {
    name: `JS ${run}`, workflowId: `js-${run}`, active: true,
    steps: [{ name: "Inbox", type: "in_app", controlValues: { subject: "Hi {{subscriber.firstName}}", body: "Order {{payload.n}}" } }],
  });
  check(wf.status === 201, "workflow created", wf);
  for (const n of [1, 2]) {
    const tr = await admin("POST", "/v1/events/trigger", { name: `js-${run}`, to: subscriberId, payload: { n } });
    check(tr.status === 201 && tr.body.acknowledged === true, "triggered", tr);
  }
  const deadline = Date.now() + 15_000;
  for (;;) {
    const feed = await admin("GET", `/v1/subscribers/${encodeURIComponent(subscriberId)}/notifications/feed`);
    if (feed.body?.data?.length === 2) break;
    check(Date.now() < deadline, "two in-app messages delivered within 15 s", feed.body);
    await new Promise((r) => setTimeout(r, 100));
  }
  const { data, error } = await openSession({
    applicationIdentifier, subscriberHash: subscriberHash(subscriberId), subscriber: { subscriberId, lastName: "King" },
  });
  check(error === undefined, "no error", error?.message);
  check(data.totalUnreadCount === 2 && data.unreadCount.total === 2 && data.unreadCount.severity.none === 2, "two unread", data);
  const sub = await admin("GET", `/v2/subscribers/${encodeURIComponent(subscriberId)}`);
  check(sub.body.lastName === "King" && sub.body.firstName === "Ada", "updated, the rest kept", sub.body);
});

await step("new Novu(...) with subscriberId only (no subscriber object)", async () => {
  const other = `${subscriberId}-2`;
  const { data, error } = await openSession({ applicationIdentifier, subscriberId: other, subscriberHash: subscriberHash(other) });
  check(error === undefined && typeof data?.token === "string", "a session", error?.message);
});

await step("a wrong subscriberHash: the client reports Herald's 401 and message", async () => {
  const { data, error } = await openSession({
    applicationIdentifier, subscriberHash: subscriberHash(subscriberId, "hk_not_the_key"), subscriber: { subscriberId },
  });
  check(data === undefined, "no session", data);
  check(error?.status === 401 && /subscriberHash does not match/.test(error?.message), "the error", { status: error?.status, message: error?.message });
});

await step("no subscriberHash: refused", async () => {
  const { error } = await openSession({ applicationIdentifier, subscriber: { subscriberId } });
  check(error?.status === 401 && /subscriberHash is required/.test(error?.message), "the error", { status: error?.status, message: error?.message });
});

await step("an unknown application identifier: refused", async () => {
  const { error } = await openSession({
    applicationIdentifier: "app_00000000000000000000", subscriberHash: subscriberHash(subscriberId), subscriber: { subscriberId },
  });
  check(error?.status === 400 && /valid application identifier/.test(error?.message), "the error", { status: error?.status, message: error?.message });
});

await step("the preflight a browser sends first", async () => {
  const res = await fetch(`${apiUrl}/v1/inbox/session`, {
    method: "OPTIONS",
    headers: { Origin: "https://app.example.com", "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": "content-type,novu-api-version,novu-client-version" },
  });
  check(res.status === 204, "204", res.status);
  check(res.headers.get("access-control-allow-origin") === "*", "any origin", res.headers.get("access-control-allow-origin"));
  const allowed = res.headers.get("access-control-allow-headers") ?? "";
  for (const h of ["authorization", "content-type", "novu-api-version", "novu-client-version", "novu-application-identifier"]) {
    check(allowed.split(", ").includes(h), `allows ${h}`, allowed);
  }
});

await step("realtime: the socket.io client hears a trigger and a mark-as", async () => {
  const { novu, error } = await openSession({
    applicationIdentifier, subscriberHash: subscriberHash(subscriberId), subscriber: { subscriberId }, socketUrl: apiUrl,
  });
  check(error === undefined, "no error", error?.message);
  const received = [], unseen = [], unread = [];
  const connected = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the socket did not connect within 10 s")), 10_000);
    novu.on("socket.connect.resolved", ({ error }) => { clearTimeout(timer); error ? reject(error) : resolve(); });
  });
  novu.on("notifications.notification_received", ({ result }) => received.push(result));
  novu.on("notifications.unseen_count_changed", ({ result }) => unseen.push(result));
  novu.on("notifications.unread_count_changed", ({ result }) => unread.push(result));
  await connected;
  const until = async (cond, what) => {
    const deadline = Date.now() + 10_000;
    while (!cond()) {
      check(Date.now() < deadline, `${what} within 10 s`, { received: received.length, unseen, unread });
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const tr = await admin("POST", "/v1/events/trigger", { name: `js-${run}`, to: subscriberId, payload: { n: 3 } });
  check(tr.status === 201, "triggered", tr);
  await until(() => received.length === 1 && unread.length >= 1 && unseen.length >= 1, "notification_received and the counts");
  const n = received[0];
  check(n.body === "Order 3" && n.subject === "Hi Ada" && n.isRead === false && n.to.subscriberId === subscriberId, "the notification", n);
  check(typeof n.id === "string" && n.workflow?.identifier === `js-${run}`, "its id and workflow", n);
  check(unread.at(-1).total === 3 && unread.at(-1).severity.none === 3, "three unread", unread.at(-1));
  check(unseen.at(-1) === 3, "three unseen", unseen);
  const before = unread.length;
  const mark = await admin("POST", `/v1/subscribers/${encodeURIComponent(subscriberId)}/messages/mark-as`, { messageId: n.id, markAs: "read" });
  check(mark.status === 201, "marked read", mark);
  await until(() => unread.length > before, "unread_count_changed after the mark-as");
  check(unread.at(-1).total === 2, "two unread", unread.at(-1));
  await novu.socket.disconnect();
});

log("the @novu/js session works against Herald");
process.exit(0);
