"""Subscribes the seeded subscribers sub-00000000… to a topic through the
public API, 100 a call (the route's maximum), on 4 keep-alive connections."""
import http.client, json, sys, threading, urllib.parse

base, key, topic, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
u = urllib.parse.urlparse(base)
chunks = [list(range(i, min(i + 100, n))) for i in range(0, n, 100)]
lock, failures = threading.Lock(), []


def worker():
    conn = http.client.HTTPConnection(u.hostname, u.port)
    while True:
        with lock:
            if not chunks:
                return
            chunk = chunks.pop()
        body = json.dumps({"subscriptions": ["sub-%08d" % i for i in chunk]})
        conn.request("POST", "/v2/topics/%s/subscriptions" % topic, body,
                     {"Authorization": "ApiKey " + key, "Content-Type": "application/json"})
        res = conn.getresponse()
        data = json.loads(res.read())
        if res.status != 201 or data["meta"]["successful"] != len(chunk):
            with lock:
                failures.append((res.status, str(data)[:200]))


threads = [threading.Thread(target=worker) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
if failures:
    sys.exit("subscriptions failed: %r" % failures[:3])
