"""A Celery app on the Redis broker and result backend (port from TC_APP_PORT), for
tests/apps/test_celery_rq.py."""
import os

from celery import Celery

PORT = os.environ["TC_APP_PORT"]
app = Celery("tcapp", broker="redis://127.0.0.1:%s/0" % PORT,
             backend="redis://127.0.0.1:%s/1" % PORT)
app.conf.update(task_serializer="json", result_serializer="json", accept_content=["json"],
                broker_connection_retry_on_startup=True, worker_hijack_root_logger=False)

FLAKY = {}


@app.task
def add(x, y):
    return x + y


@app.task
def tsum(values):
    return sum(values)


@app.task(bind=True, max_retries=3, default_retry_delay=0.1)
def flaky(self, key):
    # fails on its first two runs (counted in the broker's own Redis), then succeeds
    import redis
    r = redis.Redis(port=int(PORT), db=2)
    n = r.incr("flaky:" + key)
    if n < 3:
        raise self.retry(exc=RuntimeError("attempt %d" % n))
    return "ok after %d" % n


@app.task
def boom():
    raise ValueError("kaboom")
