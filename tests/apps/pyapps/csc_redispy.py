"""redis-py (PyPI, .venv-apps) with its client-side cache (protocol=3, cache_config) as a
line-driven client of tests/apps/test_client_cache.py: it connects to 127.0.0.1:$TC_APP_PORT
and answers each line of stdin with one JSON line.
    get KEY  -> {"v": value or null, "hit": served from the client-side cache, "size": entries}
    quit     -> exits

redis-py 5.2 refuses client-side caching unless HELLO reports server "redis" at version 7.4 or
later (CacheProxyConnection.MIN_ALLOWED_VERSION), which redis-server 7.0 and twincache (7.0.15)
both are not. With TC_CSC_VERSION_GATE=1 the script keeps that gate and reports the refusal;
otherwise it lowers the gate to 7.0.0 so that the cache itself runs, on both servers alike."""
import json
import os
import sys

import redis
from redis.cache import CacheConfig, CacheEntryStatus, CacheKey
from redis.connection import CacheProxyConnection


def emit(obj):
    print(json.dumps(obj), flush=True)


def main():
    if os.environ.get("TC_CSC_VERSION_GATE") != "1":
        CacheProxyConnection.MIN_ALLOWED_VERSION = "7.0.0"
    try:
        r = redis.Redis(host="127.0.0.1", port=int(os.environ["TC_APP_PORT"]), protocol=3,
                        cache_config=CacheConfig(), decode_responses=True,
                        single_connection_client=True)
        r.ping()
    except redis.exceptions.ConnectionError as e:
        emit({"refused": str(e)})
        return
    cache = r.get_cache()
    emit({"ready": True, "version": redis.__version__})
    for line in sys.stdin:
        f = line.split()
        if len(f) != 2 or f[0] != "get":
            break
        entry = cache.get(CacheKey(command="GET", redis_keys=(f[1],)))
        hit = entry is not None and entry.status == CacheEntryStatus.VALID
        v = r.get(f[1])
        emit({"v": v, "hit": hit, "size": cache.size})
    r.close()


if __name__ == "__main__":
    main()
