"""tests/packaging: the install rules, the default configuration and the Debian package.

    /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/packaging

test_config_file.py needs build/twincache (TWINCACHE_BIN); test_package.py needs root and
Debian's packaging tools (scripts/install-deps.sh installs them) and skips without them.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The packaged configuration says "supervised auto": a server started here must not report to
# a supervisor this test run happens to be under.
os.environ.pop("NOTIFY_SOCKET", None)
