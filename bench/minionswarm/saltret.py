#!/usr/bin/env python3
"""Salt's database returners' per-return work, for bench/minionswarm.

What salt/returners/pgjsonb.py returner() and mysql.py returner() do for
each return a Salt 3006 master stores (salt/utils/job.py store_job calls
returner(load) once per minion return, in each MWorker process):

- pgjsonb: psycopg2.connect, one INSERT INTO salt_returns with
  psycopg2.extras.Json, COMMIT, close: a new connection per return.
- mysql: the connection kept in __context__, ping() before each use,
  one INSERT, COMMIT.

Usage: saltret.py KIND HOST PORT USER DB N WORKERS JID < password
Prints the seconds the N returns took, spread over WORKERS processes as a
master's worker_threads are.
"""
import json
import multiprocessing
import sys
import time


def pg_worker(args):
    import psycopg2
    import psycopg2.extras

    host, port, user, pw, db, jid, ids = args
    for mid in ids:
        ret = {"cmd": "_return", "id": mid, "success": True, "return": True, "retcode": 0,
               "jid": jid, "fun": "test.ping", "fun_args": []}
        conn = psycopg2.connect(host=host, port=port, dbname=db, user=user, password=pw)
        try:
            cur = conn.cursor()
            cur.execute(
                """INSERT INTO salt_returns
                    (fun, jid, return, id, success, full_ret, alter_time)
                    VALUES (%s, %s, %s, %s, %s, %s, to_timestamp(%s))""",
                (ret["fun"], ret["jid"], psycopg2.extras.Json(ret["return"]), ret["id"],
                 ret.get("success", False), psycopg2.extras.Json(ret), time.time()))
            cur.execute("COMMIT")
        finally:
            conn.close()


def mysql_worker(args):
    import MySQLdb

    host, port, user, pw, db, jid, ids = args
    conn = MySQLdb.connect(host=host, user=user, passwd=pw, db=db, port=port, ssl={})
    for mid in ids:
        ret = {"cmd": "_return", "id": mid, "success": True, "return": True, "retcode": 0,
               "jid": jid, "fun": "test.ping", "fun_args": []}
        conn.ping()
        cur = conn.cursor()
        cur.execute(
            """INSERT INTO `salt_returns`
                     (`fun`, `jid`, `return`, `id`, `success`, `full_ret`)
                     VALUES (%s, %s, %s, %s, %s, %s)""",
            (ret["fun"], ret["jid"], json.dumps(ret["return"]), ret["id"], ret.get("success", False), json.dumps(ret)))
        cur.execute("COMMIT")
    conn.close()


def main():
    kind, host, port, user, db, n, workers, jid = sys.argv[1:9]
    pw = sys.stdin.read().strip()
    n, workers, port = int(n), int(workers), int(port)
    ids = ["swarm-%05d" % i for i in range(n)]
    shares = [(host, port, user, pw, db, jid, ids[w::workers]) for w in range(workers)]
    fn = pg_worker if kind == "pgjsonb" else mysql_worker
    t0 = time.time()
    with multiprocessing.Pool(workers) as pool:
        pool.map(fn, shares)
    print("%.3f" % (time.time() - t0))


if __name__ == "__main__":
    main()
