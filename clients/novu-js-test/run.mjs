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

// ---------------------------------------------------------------------------------------
// The inbox: notifications and preferences, through the client's own methods.
// ---------------------------------------------------------------------------------------

const inboxSubscriber = `js-inbox-${run}`;
const alertFlow = `js-alert-${run}`;
const plainFlow = `js-plain-${run}`;

// deliveredCount waits until the subscriber's feed holds n in-app messages.
async function waitForFeed(n) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const feed = await admin("GET", `/v1/subscribers/${encodeURIComponent(inboxSubscriber)}/notifications/feed?limit=100`);
    if (feed.body?.totalCount === n || feed.body?.data?.length === n) return;
    check(Date.now() < deadline, `${n} in-app messages delivered within 15 s`, feed.body);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const inbox = await step("the inbox: workflows, four notifications, a session", async () => {
  const alert = await admin("POST", "/v2/workflows", {
    name: `Alert ${run}`, workflowId: alertFlow, active: true, tags: ["billing"], severity: "high",
    steps: [{ name: "Inbox", type: "in_app", controlValues: {
      subject: "Invoice {{payload.n}}", body: "Invoice {{payload.n}} is due", redirect: { url: "/invoices/{{payload.n}}", target: "_self" },
      primaryAction: { label: "Pay", redirect: { url: "https://pay.example/{{payload.n}}" } }, secondaryAction: { label: "Later" },
      data: { n: "{{payload.n}}" } } }],
  });
  check(alert.status === 201, "alert workflow created", alert);
  const plain = await admin("POST", "/v2/workflows", {
    name: `Plain ${run}`, workflowId: plainFlow, active: true,
    steps: [{ name: "Inbox", type: "in_app", controlValues: { body: "Plain {{payload.n}}" } }],
  });
  check(plain.status === 201, "plain workflow created", plain);
  for (const [flow, n] of [[alertFlow, 1], [alertFlow, 2], [alertFlow, 3], [plainFlow, 4]]) {
    const tr = await admin("POST", "/v1/events/trigger", { name: flow, to: inboxSubscriber, payload: { n } });
    check(tr.status === 201, "triggered", tr);
    await waitForFeed(n);
  }
  const { novu, data, error } = await openSession({
    applicationIdentifier, subscriberHash: subscriberHash(inboxSubscriber), subscriber: { subscriberId: inboxSubscriber }, useCache: false,
  });
  check(error === undefined && data.unreadCount.total === 4 && data.unreadCount.severity.high === 3, "four unread, three high", data);
  return { novu, alertId: alert.body.data?._id ?? alert.body._id };
});
const { novu } = inbox;

const unreadCounts = async () => {
  const filters = ["high", "medium", "low", "none"].map((severity) => ({ read: false, archived: false, snoozed: false, severity }));
  const { data, error } = await novu.notifications.count({ filters });
  check(error === undefined && data.counts.length === 4, "four counts", error?.message ?? data);
  data.counts.forEach((c, i) => check(c.filter.severity === filters[i].severity, "the filter echoed", c));
  return data.counts.map((c) => c.count);
};

const all = await step("notifications.list: pages by cursor, the notification's shape", async () => {
  const first = await novu.notifications.list({ limit: 3, archived: false, snoozed: false });
  check(first.error === undefined, "no error", first.error?.message);
  check(first.data.notifications.length === 3 && first.data.hasMore === true, "a first page of 3, more follow", first.data);
  const last = first.data.notifications[2];
  const second = await novu.notifications.list({ limit: 3, after: last.id });
  check(second.data.notifications.length === 1 && second.data.hasMore === false, "the last page", second.data);
  const ns = [...first.data.notifications, ...second.data.notifications];
  check(ns.map((n) => n.body).join("|") === "Plain 4|Invoice 3 is due|Invoice 2 is due|Invoice 1 is due", "newest first", ns.map((n) => n.body));
  const n = ns[1];
  check(n.subject === "Invoice 3" && n.severity === "high" && n.tags?.[0] === "billing" && n.data?.n === "3", "subject, severity, tags, data", n);
  check(n.redirect?.url === "/invoices/3" && n.primaryAction?.redirect?.url === "https://pay.example/3", "the notification's and the button's links", n);
  check(n.primaryAction.label === "Pay" && n.secondaryAction?.label === "Later" && n.primaryAction.isCompleted === false, "the actions", n);
  check(n.workflow?.identifier === alertFlow && n.to?.subscriberId === inboxSubscriber, "workflow and subscriber", n);
  check(ns[0].redirect === undefined && ns[0].primaryAction === undefined, "a plain one has neither", ns[0]);
  const tagged = await novu.notifications.list({ limit: 10, tags: ["billing"], data: { n: "2" } });
  check(tagged.data.notifications.length === 1 && tagged.data.notifications[0].body === "Invoice 2 is due", "filters by tags and data", tagged.data);
  const high = await novu.notifications.list({ limit: 10, severity: ["high"], read: false });
  check(high.data.notifications.length === 3, "filters by severity", high.data.notifications.length);
  check(JSON.stringify(await unreadCounts()) === "[3,0,0,1]", "the bell's counts", await unreadCounts());
  return ns;
});

await step("read, unread, seen, archive, unarchive", async () => {
  const n = all[1];
  let r = await n.read();
  check(r.error === undefined && r.data.isRead === true && r.data.readAt, "read", r.error?.message ?? r.data);
  check(JSON.stringify(await unreadCounts()) === "[2,0,0,1]", "one fewer unread", await unreadCounts());
  r = await n.unread();
  check(r.data?.isRead === false && r.data.readAt === null, "unread", r.error?.message ?? r.data);
  r = await all[2].seen();
  check(r.error === undefined, "seen", r.error?.message);
  const unseen = await novu.notifications.count({ seen: false });
  check(unseen.data?.count === 2, "two unseen left (read and seen ones are seen)", unseen.data);
  r = await n.archive();
  check(r.data?.isArchived === true && r.data.archivedAt, "archived", r.error?.message ?? r.data);
  const archived = await novu.notifications.list({ limit: 10, archived: true });
  check(archived.data.notifications.length === 1 && archived.data.notifications[0].id === n.id, "listed as archived", archived.data);
  r = await n.unarchive();
  check(r.data?.isArchived === false, "unarchived", r.error?.message ?? r.data);
});

await step("snooze, unsnooze; complete and revert an action", async () => {
  const n = all[1];
  const until = new Date(Date.now() + 3600_000).toISOString();
  let r = await n.snooze(until);
  check(r.data?.isSnoozed === true && Date.parse(r.data.snoozedUntil) === Date.parse(until), "snoozed", r.error?.message ?? r.data);
  const listed = await novu.notifications.list({ limit: 10 });
  check(!listed.data.notifications.some((x) => x.id === n.id), "a snoozed one is out of the list", listed.data.notifications.map((x) => x.id));
  const snoozed = await novu.notifications.list({ limit: 10, snoozed: true });
  check(snoozed.data.notifications.length === 1, "listed as snoozed", snoozed.data);
  const tooLate = await n.snooze(new Date(Date.now() + 91 * 24 * 3600_000).toISOString());
  check(tooLate.error?.originalError?.status === 422, "more than 90 days ahead is refused", tooLate.error?.originalError?.message);
  r = await n.unsnooze();
  check(r.data?.isSnoozed === false && r.data.snoozedUntil === null, "unsnoozed", r.error?.message ?? r.data);
  r = await n.completePrimary();
  check(r.data?.primaryAction?.isCompleted === true && r.data.secondaryAction.isCompleted === false, "primary done", r.error?.message ?? r.data);
  r = await n.revertPrimary();
  check(r.data?.primaryAction?.isCompleted === false, "primary pending again", r.error?.message ?? r.data);
  r = await n.completeSecondary();
  check(r.data?.secondaryAction?.isCompleted === true, "secondary done", r.error?.message ?? r.data);
  r = await n.revertSecondary();
  check(r.data?.secondaryAction?.isCompleted === false, "secondary pending again", r.error?.message ?? r.data);
});

await step("another subscriber's notification is not found", async () => {
  const other = `${inboxSubscriber}-other`;
  const { novu: theirs, error } = await openSession({ applicationIdentifier, subscriberHash: subscriberHash(other), subscriber: { subscriberId: other } });
  check(error === undefined, "their session", error?.message);
  const notificationId = all[1].id;
  for (const [name, call] of [["read", () => theirs.notifications.read({ notificationId })],
    ["archive", () => theirs.notifications.archive({ notificationId })],
    ["completePrimary", () => theirs.notifications.completePrimary({ notificationId })],
    ["delete", () => theirs.notifications.delete({ notificationId })]]) {
    const r = await call();
    check(r.error?.originalError?.status === 404, `${name}: a 404`, { message: r.error?.originalError?.message, status: r.error?.originalError?.status });
  }
  const mine = await novu.notifications.count({ read: false });
  check(mine.data?.count === 3, "mine left alone", mine.data);
});

await step("readAll, archiveAllRead, archiveAll, delete, deleteAll", async () => {
  let r = await novu.notifications.readAll();
  check(r.error === undefined, "readAll", r.error?.message);
  check(JSON.stringify(await unreadCounts()) === "[0,0,0,0]", "nothing unread", await unreadCounts());
  await all[0].unread();
  r = await novu.notifications.archiveAllRead();
  check(r.error === undefined, "archiveAllRead", r.error?.message);
  let c = await novu.notifications.count({ filters: [{ archived: true }, { archived: false }] });
  check(c.data.counts[0].count === 3 && c.data.counts[1].count === 1, "the three read ones archived", c.data.counts);
  r = await novu.notifications.archiveAll();
  check(r.error === undefined, "archiveAll", r.error?.message);
  c = await novu.notifications.count({ archived: false });
  check(c.data.count === 0, "all archived", c.data);
  r = await all[3].delete();
  check(r.error === undefined, "delete", r.error?.message);
  c = await novu.notifications.count({ archived: true });
  check(c.data.count === 3, "one fewer", c.data);
  r = await novu.notifications.deleteAll();
  check(r.error === undefined, "deleteAll", r.error?.message);
  c = await novu.notifications.count({});
  check(c.data.count === 0, "none left", c.data);
});

await step("preferences: list, update one workflow (in_app off stops its notifications), global, bulk", async () => {
  const { data: prefs, error } = await novu.preferences.list();
  check(error === undefined && prefs[0].level === "global" && prefs[0].channels.in_app === true, "global first", error?.message ?? prefs);
  const mine = prefs.find((p) => p.workflow?.identifier === alertFlow);
  check(mine?.level === "template" && mine.channels.in_app === true && mine.workflow.severity === "high" && mine.workflow.critical === false,
    "the workflow's preference", mine);
  let r = await mine.update({ channels: { in_app: false } });
  check(r.error === undefined && r.data.channels.in_app === false && r.data.workflow.id === inbox.alertId, "in_app off", r.error?.message ?? r.data);
  for (const [flow, n] of [[alertFlow, 5], [plainFlow, 6]]) {
    const tr = await admin("POST", "/v1/events/trigger", { name: flow, to: inboxSubscriber, payload: { n } });
    check(tr.status === 201, "triggered", tr);
  }
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { data } = await novu.notifications.list({ limit: 10 });
    if (data.notifications.length > 0) {
      check(data.notifications.length === 1 && data.notifications[0].body === "Plain 6", "only the plain one arrived", data.notifications);
      break;
    }
    check(Date.now() < deadline, "the plain notification within 15 s");
    await new Promise((res) => setTimeout(res, 100));
  }
  r = await prefs[0].update({ channels: { in_app: true } });
  check(r.error === undefined && r.data.level === "global" && r.data.channels.in_app === true, "global", r.error?.message ?? r.data);
  r = await novu.preferences.bulkUpdate([{ workflowId: inbox.alertId, channels: { in_app: true } }]);
  check(r.error === undefined && r.data.length === 1 && r.data[0].channels.in_app === true, "bulk", r.error?.message ?? r.data);
  const again = await novu.preferences.list();
  check(again.data.find((p) => p.workflow?.identifier === alertFlow).channels.in_app === true, "listed back on", again.data);
});

log("the @novu/js session, notifications and preferences work against Herald");
process.exit(0);
