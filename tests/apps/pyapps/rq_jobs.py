"""RQ job functions for tests/apps/test_celery_rq.py."""
import os

import redis


def square(x):
    return x * x


def fail():
    raise RuntimeError("rq boom")


def flaky(key):
    r = redis.Redis(port=int(os.environ["TC_APP_PORT"]), db=2)
    if r.incr("rqflaky:" + key) < 3:
        raise RuntimeError("not yet")
    return "done"
