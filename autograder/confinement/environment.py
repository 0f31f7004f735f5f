"""What of nbgrader's environment a grading kernel gets: a short list of names, never the rest.

nbgrader runs in the instructor's environment, and jupyter_client hands all of it to every kernel
it starts: on a JupyterHub that is the hub's API token (``JUPYTERHUB_API_TOKEN``), on a
department server a database password (``PGPASSWORD``) or a cloud key. A notebook that prints
``os.environ`` would put them in its own output, and so in the student's feedback page. So a
kernel, forked or started afresh, root or rootless, serial, parallel or on a Dask worker, starts
from :func:`kernel_environment`: the names of :data:`KEPT`, the kernelspec's own ``env`` (the
instructor wrote those for kernels), the course's variables that the kernel manager sets after
this (``XLA_FLAGS``, ``PYTHONSAFEPATH``, the compile cache's folder), and the names an instructor
adds in ``course_config.py``::

    c.ConfinedKernelManager.kernel_environment_names = ["JAX_DEFAULT_MATMUL_PRECISION", "MY_COURSE_*"]

``JAX_PLATFORMS`` is the course's own (``c.ConfinedKernelManager.jax_platforms``, "cpu" unless the
instructor chooses otherwise: :mod:`autograder.grading.backend`), set after this whatever was kept.
A name ending in ``*`` keeps every name it begins. ``PYTHONPATH`` is kept (the course's commands
put a checkout that is not installed there, :func:`autograder.tools.repository.tool_env`) without
its empty and relative entries: Python reads those as the working folder, which is the student's
(an empty entry would import the student's ``sitecustomize.py`` before any of the course's code,
as root in the root jail, before the sandbox drops to the kernel's own user).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

#: What every kernel keeps of nbgrader's environment: where programs are (the kernelspec's
#: ``python`` is found on ``PATH``), the user's home, language and time zone, nbgrader's word that
#: the notebook is being autograded (``NBGRADER_EXECUTION``, which notebooks may read), and the
#: XLA flags, to which the grading flags are added (:func:`autograder.grading.compiler.kernel_environment`),
#: and ``PYTHONPATH``'s absolute entries.
KEPT = ("PATH", "HOME", "LANG", "LANGUAGE", "TZ", "NBGRADER_EXECUTION", "XLA_FLAGS", "PYTHONPATH",
        # the locale's own names, each by name: ``LC_*`` would keep any name an instructor's setup begins so
        "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_MONETARY", "LC_NUMERIC", "LC_TIME")


def kept(name: str, names: Iterable[str]) -> bool:
    """Whether ``name`` is one of ``names``, where ``PREFIX*`` stands for every name beginning ``PREFIX``."""
    return any(name == pattern or (pattern.endswith("*") and name.startswith(pattern[:-1])) for pattern in names)


def kernel_environment(env: Mapping[str, str], kernelspec_env: Iterable[str] = (),
                       also: Iterable[str] = ()) -> dict[str, str]:
    """The part of ``env`` (nbgrader's environment with the kernelspec's ``env`` applied) a kernel
    gets: the names of :data:`KEPT`, of ``kernelspec_env`` and of ``also`` (the instructor's)."""
    names = (*KEPT, *kernelspec_env, *also)
    chosen = {name: value for name, value in env.items() if kept(name, names)}
    if "PYTHONPATH" in chosen:
        entries = [entry for entry in chosen["PYTHONPATH"].split(os.pathsep) if os.path.isabs(entry)]
        if entries:
            chosen["PYTHONPATH"] = os.pathsep.join(entries)
        else:
            del chosen["PYTHONPATH"]
    return chosen
