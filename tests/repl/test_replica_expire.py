"""A replica's expired keys, as Redis 7.0's expireIfNeeded on a replica: hidden from reads but
kept until the primary's DEL (or the primary's own write) arrives; a writable replica's own
writes delete what they meet, and the keys it gave a TTL itself are its to expire. Each test
fails on the bug it was written for (a replica that deleted expired keys on reads)."""

import time

from test_replication import cli, follow, in_sync, info, wait_for


def expired_pair(servers):
    """A primary (active expiry off) and its replica holding k1 and k2, both expired."""
    a = servers.tc("--enable-debug-command", "yes")
    b = servers.tc()
    follow(b, a)
    pa, pb = cli(a), cli(b)
    pa.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    pa.set("k1", "5", px=50)
    pa.set("k2", "5", px=50)
    wait_for(lambda: in_sync(a, b) and pb.dbsize() == 2, what="the keys on the replica")
    time.sleep(0.2)
    return a, b, pa, pb


def test_replica_hides_expired_keys_but_keeps_them(servers):
    a, b, pa, pb = expired_pair(servers)
    assert pb.get("k1") is None
    assert pb.exists("k1", "k2") == 0
    assert pb.scan(0)[1] == []
    assert pb.dbsize() == 2  # the reads deleted nothing
    # the primary's write to its own (not yet deleted) key applies to the kept key
    pa.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    wait_for(lambda: pb.dbsize() == 0, what="the primary's DELs")


def test_writable_replica_write_recreates_and_own_ttl_expires(servers):
    a, b, pa, pb = expired_pair(servers)
    pb.config_set("replica-read-only", "no")
    assert pb.incr("k1") == 1  # the write deleted the expired key, then created it
    assert pb.ttl("k1") == -1
    assert pb.get("k2") is None
    assert pb.dbsize() == 2
    # keys the replica's own clients gave a TTL are expired by the replica itself
    pb.set("own", "1", px=100)
    assert pb.dbsize() == 3
    wait_for(lambda: pb.dbsize() == 2, timeout=5, what="the replica's own key to expire")
    assert pb.exists("k2") == 0 and pb.dbsize() == 2  # the primary's key still waits


def test_restarted_primary_feeds_dels_of_keys_expired_while_down(servers, tmp_path):
    """A primary restarted from its RDB (with the replication ID) skips the keys whose TTL
    passed and feeds their DELs into the backlog it continues, so the replica that continues
    with a partial resync drops them too; a small backlog is trimmed past them."""
    a = servers.tc("--enable-debug-command", "yes", "--save", "3600 1", dir=str(tmp_path))
    b = servers.tc()
    follow(b, a)
    pa, pb = cli(a), cli(b)
    pa.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    for i in range(50):
        pa.set("k%d" % i, "v", px=200)
    pa.set("stay", "1")
    wait_for(lambda: in_sync(a, b) and pb.dbsize() == 51, what="the keys on the replica")
    a.stop()  # saves, after waiting for the replica to acknowledge everything
    time.sleep(0.3)
    a.start()
    assert info(a, "persistence")["rdb_last_load_keys_expired"] == 50
    wait_for(lambda: info(b)["master_link_status"] == "up" and pb.dbsize() == 1, timeout=20,
             what="the DELs on the replica")
    assert info(a, "stats")["sync_partial_ok"] == 1
