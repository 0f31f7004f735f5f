"""An order a property draws per notebook (``autograder.grading.drawn``): the same at every regrade of
one notebook, another for another notebook, fresh where no notebook was read."""

from __future__ import annotations

from conftest import REPO

from autograder import from_python
from autograder.grading import drawn


def _order(memo) -> list[int]:
    return drawn.rng(memo).sample(range(20), 20)


def test_one_notebook_draws_one_order_and_another_notebook_another():
    first, again, other = {}, {}, {}
    drawn.note(first, ["import jax", "def diagnose(loop):\n    loop()\n    return 'waits'"])
    drawn.note(again, ["import jax", "def diagnose(loop):\n    loop()\n    return 'waits'"])
    drawn.note(other, ["import jax", "def diagnose(loop):\n    loop()\n    return 'traces'"])
    assert _order(first) == _order(again)
    assert _order(first) != _order(other)
    # The cells' boundaries count: the same text split differently is another notebook.
    split = {}
    drawn.note(split, ["import jax\ndef diagnose(loop):\n    loop()\n    return 'waits'"])
    assert _order(split) != _order(first)


def test_without_a_digest_every_draw_is_fresh():
    assert _order({}) != _order({})
    assert _order({drawn.KEY: 12}) != _order({drawn.KEY: 12})  # not a digest: not a seed either


def test_a_corpus_file_is_read_with_its_digest():
    path = REPO / "tests" / "corpus" / "host_sync" / "correct.py"
    assert _order(from_python(path).notebook_memo) == _order(from_python(path).notebook_memo)
