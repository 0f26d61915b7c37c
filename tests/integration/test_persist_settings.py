"""Persistence settings of Redis 7.0 that have a meaning here (docs/config.md):

* rdb-del-sync-files: without persistence (no save points, appendonly no), the RDB file a
  disk-based full sync wrote goes once no replica waits for it, on the primary, and on the
  replica once it loaded it (Redis's replication.c).
* rdb-save-incremental-fsync, aof-rewrite-incremental-fsync: files are handed to the disk
  every 4 MB while written (Redis's REDIS_AUTOSYNC_BYTES); here: a snapshot and an AOF
  rewrite of more than two steps are whole with the setting on and off."""
import os

import pytest

import tcharness
from itutil import wait_until

NOPERSIST = ("--save", "", "--appendonly", "no", "--repl-diskless-sync", "no",
             "--repl-diskless-load", "disabled")


@pytest.mark.parametrize("delete", ["yes", "no"])
def test_rdb_del_sync_files(delete):
    master = tcharness.start_twincache(*NOPERSIST, "--rdb-del-sync-files", delete)
    replica = None
    try:
        m = master.client(decode=True)
        m.set("k", "v")
        replica = tcharness.start_twincache(*NOPERSIST, "--rdb-del-sync-files", delete,
                                            "--replicaof", "127.0.0.1", str(master.port))
        r = replica.client(decode=True)
        wait_until(lambda: r.info("replication")["master_link_status"] == "up", timeout=30,
                   what="the replica's link up")
        wait_until(lambda: r.get("k") == "v", timeout=10, what="the data on the replica")
        m_rdb = os.path.join(master.dir, "dump.rdb")
        r_rdb = os.path.join(replica.dir, "dump.rdb")
        if delete == "yes":
            wait_until(lambda: not os.path.exists(m_rdb), timeout=10,
                       what="the primary's sync RDB removed")
            assert not os.path.exists(r_rdb)
            assert "Removing the RDB file used to feed replicas" in master.output()
            assert "Removing the RDB file obtained from the master" in replica.output()
        else:
            assert os.path.exists(m_rdb) and os.path.exists(r_rdb)
    finally:
        if replica:
            replica.stop()
        master.stop()


@pytest.mark.parametrize("fsync", ["yes", "no"])
def test_incremental_fsync_files_whole(fsync):
    srv = tcharness.start_twincache("--rdb-save-incremental-fsync", fsync,
                                    "--aof-rewrite-incremental-fsync", fsync,
                                    "--rdbcompression", "no")
    try:
        c = srv.client(decode=True)
        value = "x" * 1000
        pipe = c.pipeline(transaction=False)
        for i in range(12000):  # 12 MB: three 4 MB steps
            pipe.set("key:%d" % i, value)
        pipe.execute()
        assert c.save()
        assert os.path.getsize(os.path.join(srv.dir, "dump.rdb")) > 12 * 10 ** 6
        for preamble in ("yes", "no"):
            c.config_set("aof-use-rdb-preamble", preamble)
            c.config_set("appendonly", "yes")
            wait_until(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 0 and
                       c.info("persistence")["aof_rewrite_scheduled"] == 0 and
                       c.info("persistence")["aof_last_bgrewrite_status"] == "ok",
                       timeout=60, what="the AOF rewritten")
            srv.restart()
            c = srv.client(decode=True)
            assert c.dbsize() == 12000 and c.get("key:11999") == value
            c.config_set("appendonly", "no")
        srv.argv += ["--appendonly", "no"]
        srv.restart()
        c = srv.client(decode=True)
        assert c.dbsize() == 12000
    finally:
        srv.stop()
