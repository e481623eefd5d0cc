"""Times the raw SQL baseline (baseline.sql's rows inserted in bulk) on a
SQLite or PostgreSQL database and prints the seconds it took.
usage: baseline.py sqlite PATH | baseline.py postgres DBNAME"""
import subprocess, sys, time, pathlib

here = pathlib.Path(__file__).parent
prep = (here / "baseline.sql").read_text()
inserts = ";\n".join("INSERT INTO %s SELECT * FROM b_%s" % (t, b) for t, b in
                     [("notifications", "notifications"), ("jobs", "jobs"),
                      ("execution_details", "details"), ("messages", "messages")])
kind, target = sys.argv[1], sys.argv[2]
if kind == "sqlite":
    import sqlite3
    db = sqlite3.connect(target, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(prep)
    start = time.time()
    db.executescript("BEGIN;" + inserts + ";COMMIT;")
    print("%.2f" % (time.time() - start))
else:
    script = prep + "\\timing on\nBEGIN;\n" + inserts + ";\nCOMMIT;\n"
    out = subprocess.run(["psql", "-qtA", "-h", "127.0.0.1", "-U", "postgres", target],
                         input=script, capture_output=True, text=True, check=True).stdout
    ms = [float(l.split()[1]) for l in out.splitlines() if l.startswith("Time:")]
    print("%.2f" % (sum(ms[-6:]) / 1000))  # BEGIN, the four inserts, COMMIT
