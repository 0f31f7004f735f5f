"""Orders a property draws per notebook: the same for one notebook each time, different between two.

A property that hands its examples in an order it draws (host_sync's loops to diagnose) must not hand
every notebook the same order, or an answer that learnt the order from one grading, and answers by how
often it was called, passes the next. Nor may a regrade of the same notebook see another order, or a
wrong answer that depends on the order would earn different points each time. So the order is drawn
from a digest of the notebook's own code cells, noted where the notebook is read (nbgrader's process,
or the in-process loaders); where none was noted (a property run by hand in a kernel), it is fresh.
"""

from __future__ import annotations

import hashlib
import random
import secrets
from collections.abc import Iterable

#: Where the digest lives in a notebook's :attr:`Submission.notebook_memo`.
KEY = "notebook digest"


def note(memo: dict, sources: Iterable[str]) -> None:
    """Note the digest of a notebook's code, ``sources`` in the order the cells run."""
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.encode("utf-8", "surrogatepass") + b"\0")
    memo[KEY] = digest.hexdigest()


def rng(memo) -> random.Random:
    """A random source seeded by the notebook's digest; a fresh one where none was noted."""
    digest = memo.get(KEY) if isinstance(memo, dict) else None
    return random.Random(digest if isinstance(digest, str) else secrets.randbits(128))
