// Herald's demo inbox page: the official @novu/js UI (<Inbox/>) mounted
// against the Herald that served the page. The page reads its settings —
// the development environment's application identifier, a demo subscriber
// and that subscriber's subscriberHash — from ./config.json.
import { NovuUI } from "@novu/js/ui";

const status = document.getElementById("status");

async function start() {
  const res = await fetch("config.json", { headers: { Accept: "application/json" } });
  const body = await res.json();
  if (!res.ok) {
    throw new Error(body.message || `config.json: HTTP ${res.status}`);
  }
  const cfg = body.data;
  const base = window.location.origin;
  document.getElementById("subscriber").textContent = cfg.subscriberId;
  document.getElementById("curl").textContent = cfg.curl;
  // The official bell shows a dot; this one shows the unread count, which
  // the UI keeps current from the realtime events.
  const renderBell = (el, unreadCount) => {
    const total = unreadCount?.total ?? 0;
    el.innerHTML = "";
    const bell = document.createElement("span");
    bell.className = "herald-bell";
    bell.textContent = "\u{1F514}";
    const count = document.createElement("span");
    count.className = "herald-bell-count";
    count.dataset.count = String(total);
    count.textContent = String(total);
    count.hidden = total === 0;
    el.append(bell, count);
    return () => { el.innerHTML = ""; };
  };
  const ui = new NovuUI({
    options: {
      applicationIdentifier: cfg.applicationIdentifier,
      subscriberId: cfg.subscriberId,
      subscriberHash: cfg.subscriberHash || undefined,
      apiUrl: base,
      socketUrl: base,
      socketOptions: { socketType: "self-hosted" },
    },
  });
  ui.mountComponent({ name: "Inbox", element: document.getElementById("inbox"), props: { renderBell } });
  window.heraldDemo = { ui, config: cfg };
  status.textContent = "Connected to " + base;
}

start().catch((err) => {
  status.textContent = "The demo inbox could not start: " + err.message;
  status.className = "error";
});
