"""Hostile entries: a notebook that looks for the instructor's secrets in its environment.

nbgrader runs in the instructor's environment (a JupyterHub's API token, a database password, a
cloud key), and jupyter_client would hand all of it to the kernel: printed, it would be in the
student's output and feedback page. ``tests/test_hostile.py`` grades every batch with the names of
:data:`SECRETS` set in nbgrader's environment; this entry prints which of them it finds in its own
environment or in any ``/proc/*/environ`` it can read (a forked kernel's first environment is its
server's), and the batch test looks for their values in every output and page.
"""

from __future__ import annotations

from .model import CM, Hostile, points
from .notebooks import insert_after

#: Set in nbgrader's environment for the whole batch.
SECRETS = {"JUPYTERHUB_API_TOKEN": "hub-token-0c9b6e", "PGPASSWORD": "pg-password-71d2",
           "AWS_SECRET_ACCESS_KEY": "aws-key-3f8a44"}

READS_ENVIRONMENT = f'''
import glob, os
_names = {sorted(SECRETS)!r}
_seen = {{name for name in _names if name in os.environ}}
for _path in glob.glob("/proc/[0-9]*/environ"):
    try:
        _block = open(_path, "rb").read().decode(errors="replace")
    except OSError:
        continue
    _seen |= {{name for name in _names if name + "=" in _block}}
print("instructor's variables seen:", sorted(_seen))
'''

ENTRIES = (
    Hostile(
        "reads-instructor-environment", CM, (insert_after("miss_cause", READS_ENVIRONMENT),),
        points(CM), feedback=r"instructor's variables seen: \[\]",
    ),
)
