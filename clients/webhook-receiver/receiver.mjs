// A receiver of Herald's outbound webhooks, as Novu users write one: every
// POST is verified with the standardwebhooks package —
// new Webhook(secret).verify(body, headers) — and recorded. Herald's tests
// drive it over HTTP on loopback:
//   POST /_control {secrets: ["whsec_…"], statuses: [500, 200]} sets the
//     secrets to verify with and the statuses of the next answers (then 200);
//   GET /_control lists what arrived: [{path, id, timestamp, type, verified,
//     secretIndex, error, body}].
// It prints {"port": N} on its first line of standard output.
import http from "node:http";
import { Webhook } from "standardwebhooks";

let secrets = [];
let statuses = [];
const received = [];

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function answer(res, status, value) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

const server = http.createServer(async (req, res) => {
  const body = await readBody(req);
  if (req.url === "/_control") {
    if (req.method === "GET") return answer(res, 200, received);
    const cfg = JSON.parse(body || "{}");
    if (Array.isArray(cfg.secrets)) secrets = cfg.secrets;
    if (Array.isArray(cfg.statuses)) statuses = cfg.statuses;
    return answer(res, 200, { ok: true });
  }
  const entry = {
    path: req.url,
    id: req.headers["webhook-id"] ?? null,
    timestamp: req.headers["webhook-timestamp"] ?? null,
    type: null,
    verified: false,
    secretIndex: -1,
    error: null,
    body: null,
  };
  // The verification a receiver makes: the headers as Node gives them.
  for (let i = 0; i < secrets.length && !entry.verified; i++) {
    try {
      const payload = new Webhook(secrets[i]).verify(body, req.headers);
      entry.verified = true;
      entry.secretIndex = i;
      entry.body = payload;
      entry.type = payload.type;
    } catch (err) {
      entry.error = String(err && err.message ? err.message : err);
    }
  }
  if (!entry.verified) {
    try {
      entry.body = JSON.parse(body);
      entry.type = entry.body.type ?? null;
    } catch {
      entry.body = body;
    }
  }
  received.push(entry);
  const status = statuses.length > 0 ? statuses.shift() : 200;
  answer(res, status, { received: true });
});

server.listen(Number(process.env.PORT || 0), "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + "\n");
});
