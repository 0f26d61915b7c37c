"""RQ: enqueue jobs (one failing, one retried), run a burst worker in this process, print one
JSON line with what happened."""
import json
import os
import sys

from redis import Redis
from rq import Queue, Retry, Worker

import rq_jobs

conn = Redis(port=int(os.environ["TC_APP_PORT"]))
q = Queue("tcq", connection=conn)
jobs = [q.enqueue(rq_jobs.square, i) for i in range(10)]
bad = q.enqueue(rq_jobs.fail)
retried = q.enqueue(rq_jobs.flaky, sys.argv[1], retry=Retry(max=3))
queued = q.count
Worker([q], connection=conn).work(burst=True)
for j in jobs + [bad, retried]:
    j.refresh()
print(json.dumps({
    "queued": queued,
    "results": [j.return_value() for j in jobs],
    "bad": bad.get_status(),
    "bad_exc": (bad.latest_result().exc_string or "").strip().splitlines()[-1],
    "retried": retried.get_status(), "retried_value": retried.return_value(),
    "failed_registry": q.failed_job_registry.count,
    "finished_registry": q.finished_job_registry.count,
    "left": q.count,
}))
