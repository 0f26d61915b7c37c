"""The client side of the Celery scenario: prints one JSON line."""
import json
import sys

from celery import chord, group

from celery_app import add, boom, flaky, tsum

out = {}
out["add"] = add.delay(2, 3).get(timeout=20)
out["group"] = sorted(group(add.s(i, i) for i in range(10))().get(timeout=20))
out["chord"] = chord(add.s(i, 1) for i in range(5))(tsum.s()).get(timeout=20)
out["retry"] = flaky.delay(sys.argv[1]).get(timeout=20)
try:
    boom.delay().get(timeout=20)
    out["boom"] = "no error"
except ValueError as e:
    out["boom"] = "ValueError: %s" % e
print(json.dumps(out))
