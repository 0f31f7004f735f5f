"""The judge outside the kernel: nothing a kernel sends can do more than its values earn. (That
it gives each corpus submission its declared points is tests/test_graders.py, which grades the
whole corpus through the judge.)

Here the kernel's side (:func:`autograder.grading.serve.serve`) runs in this process's main
thread, as it runs in a kernel's, and the judge in the :class:`~autograder.grading.judge.Session`'s
thread, over a real loopback socket. ``tests/test_hostile.py`` and the cycle tests do the same
through nbgrader and confined kernels.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import subprocess
import sys
import time

import pytest
from test_graders import CORPUS
from test_graders import judged as _judged

from autograder import from_python
from autograder.grading import judge, wire
from autograder.grading.feedback import render
from autograder.kit import jaxprs, programs
from autograder.kit.handed import Compiled, Thunk


def test_a_cell_whose_kernel_never_calls_the_judge_scores_zero_and_says_why():
    session = judge.Session("static_max_mode", "modes")
    report = session.finish()
    assert report.earned == 0 and len(report.results) == 3
    assert all("checks did not run (the cell never called the grader)" in r.failure.problem for r in report.results)


class FakeKernel:
    """A kernel's side written by hand: it says hello with the token, then answers as told."""

    def __init__(self, session: judge.Session, token: str | None = None, **hello):
        token = token or re.search(r"'([0-9a-f]{32})'", session.kernel_code)[1]
        path = re.search(r"'unix:([^']+)'", session.kernel_code)
        if path:
            self.connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.connection.connect(path[1])
        else:
            address = re.search(r"'([\d.]+):(\d+)'", session.kernel_code)
            self.connection = socket.create_connection((address[1], int(address[2])))
        self.stream = self.connection.makefile("rwb")
        self.send({"token": token, **hello})

    def send(self, message) -> None:
        try:
            self.stream.write(message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n")
            self.stream.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the judge hung up on what it was being sent

    def request(self) -> dict:
        line = self.stream.readline()
        return json.loads(line) if line else {"op": "done"}

    def answer(self, reply_to) -> None:
        """Answer every request with ``reply_to(request)`` until the judge is done."""
        while (request := self.request()).get("op") != "done":
            self.send(reply_to(request))
        self.connection.close()


def test_claims_of_full_marks_in_any_form_earn_nothing():
    """Every name a function, every call a number, printed points: nothing of it is a verdict."""
    session = judge.Session("static_max_mode", "modes")
    kernel = FakeKernel(session)
    print("static_max_mode / modes: 3 of 3 points")
    kernel.answer(lambda request: {"get": {"callable": True}, "call": {"result": 3.0}}.get(request["op"], {"ok": None}))
    report = session.finish()
    assert report.earned == 0
    assert "`choose_reduction` gives the wrong sum" in render(report)


def test_a_wrong_token_is_turned_away_and_the_right_one_served():
    session = judge.Session("static_max_mode", "errors")
    intruder = FakeKernel(session, token="0" * 32)
    assert intruder.stream.readline() == b""  # closed without a request
    kernel = FakeKernel(session)
    kernel.answer(lambda request: {"get": {"callable": True}, "call": {"result": 1.0}}.get(request["op"], {"ok": None}))
    report = session.finish()
    assert "accepted the mode" in render(report)  # served, and judged: returning is not raising


def test_a_grade_cell_after_the_first_costs_no_garbage_collection_of_the_process(monkeypatch):
    """Hypothesis registers a random generator for each new thread it searches in, with a
    ``gc.collect()`` of the whole process (0.15 s in nbgrader's): the sessions' threads are kept."""
    import gc

    def judged_once() -> None:
        session = judge.Session("static_max_mode", "errors")
        FakeKernel(session).answer(lambda request: {"get": {"callable": True}, "call": {"result": 1.0}}.get(
            request["op"], {"ok": None}))
        assert "accepted the mode" in render(session.finish())  # judged, hypothesis's search included

    judged_once()
    collections = []
    monkeypatch.setattr(gc, "collect", lambda *args: collections.append(args) or 0)
    judged_once()
    assert collections == []


def test_a_kernel_on_another_jax_is_named_beside_its_grade_and_in_the_log(caplog):
    """The kernelspec's Python may not be nbgrader's: a kernel that says it runs another JAX than the
    judge gets a note under the cell's header and a warning in nbgrader's log, and the same points."""
    raised = {"raised": {"types": [["builtins", "ValueError"], ["builtins", "Exception"]], "description": "no such mode"}}

    def judged(versions):
        session = judge.Session("static_max_mode", "errors")
        FakeKernel(session, versions=versions).answer(
            lambda request: {"get": {"callable": True}, "call": raised}.get(request["op"], {"ok": None}))
        return session.finish()

    ours = wire.jax_versions()
    same, other = judged(ours), judged({"jax": "0.0.1", "jaxlib": "0.0.2"})
    assert same.notice == "" and "NOTE" not in render(same)
    assert other.earned == same.earned == same.possible == 1  # every unknown mode raised: the point, on either JAX
    assert (f"  NOTE  Graded by a kernel with jax 0.0.1, jaxlib 0.0.2, while the grader runs jax {ours['jax']}, "
            f"jaxlib {ours['jaxlib']}: ") in render(other)
    assert "a grading kernel runs jax 0.0.1, jaxlib 0.0.2" in caplog.text


@pytest.mark.parametrize("garbage", [
    b"this is not JSON\n",
    b"[1, 2, 3]\n",
    json.dumps({"result": {"t": "jax", "dtype": "object", "shape": [1], "data": ""}}).encode() + b"\n",
    json.dumps({"result": {"t": "np", "dtype": "float32", "shape": [1000], "data": base64.b64encode(b"1234").decode()}}).encode() + b"\n",
    json.dumps({"result": {"t": "pickle", "v": "gASVAAAAAAAAAAB9lC4="}}).encode() + b"\n",
    # what a judge hands a kernel, sent back: the judge's process builds no code from a kernel's words
    json.dumps({"result": {"t": "program", "parts": [["ops", 1]], "arity": 1}}).encode() + b"\n",
    json.dumps({"result": {"t": "compiled", "data": "AAAA", "parameters": ["x"]}}).encode() + b"\n",
    json.dumps({"result": {"t": "thunk", "program": "p", "recipe": [[["ops", 1]], 2],
                           "actions": [["call", 3, "weak"]]}}).encode() + b"\n",
])
def test_what_the_protocol_does_not_allow_fails_the_check_with_the_kernel_named(garbage):
    session = judge.Session("static_max_mode", "modes")
    kernel = FakeKernel(session)

    def reply(request):
        return {"callable": True} if request["op"] == "get" else (garbage if request["op"] == "call" else {"ok": None})

    kernel.answer(reply)
    report = session.finish()
    assert report.earned == 0
    assert all("kernel stopped answering the grader" in r.failure.problem for r in report.results), render(report)


def test_a_confined_kernel_meets_its_judge_on_a_socket_in_its_own_folder(tmp_path):
    """No port: a file in the kernel's folder of sockets (only it can enter that folder), gone after the cell."""
    session = judge.Session("static_max_mode", "errors", folder=str(tmp_path))
    assert re.search(r"'unix:" + re.escape(str(tmp_path)) + r"/judge-[0-9a-f]+'", session.kernel_code)
    assert not re.search(r"'[\d.]+:\d+'", session.kernel_code)
    kernel = FakeKernel(session)
    kernel.answer(lambda request: {"get": {"callable": True}, "call": {"result": 1.0}}.get(request["op"], {"ok": None}))
    assert "accepted the mode" in render(session.finish())  # served over the file, and judged
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("line", [
    b"[" + b"{}," * (wire.MAX_LINE // 3 - 1) + b"{}]\n",  # just under the length limit, each {} a dict when parsed
    b'{"result": "' + b"x" * (2 * wire.MAX_LINE) + b'"}\n',  # past it
])
def test_a_swollen_reply_is_refused_within_the_judges_memory_budget(line):
    """A 32 MB line of `{}`s parsed would take about 2 GB in nbgrader's process (it once did); refused,
    the judge's allocations while reading it stay within a few times the line's length."""
    import tracemalloc

    session = judge.Session("static_max_mode", "modes")
    kernel = FakeKernel(session)
    tracemalloc.start()
    try:
        kernel.answer(lambda request: {"callable": True} if request["op"] == "get"
                      else (line if request["op"] == "call" else {"ok": None}))
        report = session.finish()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.earned == 0
    assert all("kernel stopped answering the grader" in r.failure.problem for r in report.results), render(report)
    assert peak < 4 * wire.MAX_LINE, f"the judge allocated {peak / 2**20:.0f} MiB reading one reply"


def test_a_kernel_that_hangs_up_mid_check_costs_only_the_checks_after(tmp_path):
    session = judge.Session("static_max_mode", "modes")
    kernel = FakeKernel(session)
    assert kernel.request()["op"] == "tampered"  # asked before the group
    kernel.send({"tampered": []})
    assert kernel.request()["op"] == "budget"  # the first property starts
    kernel.stream.close()  # the file holds the socket open: close both, as a dying kernel's would be
    kernel.connection.close()
    report = session.finish()
    assert report.earned == 0
    assert "it closed the connection" in render(report)



WEIRD = '''
import jax, jax.numpy as jnp


class Weird:
    """Every attribute looked at raises."""

    def __getattribute__(self, name):
        raise RuntimeError("look away")


def choose_reduction(values, mode):
    if mode not in ("sum", "mean", "max"):
        raise ValueError(mode)
    return Weird()


choose = jax.jit(choose_reduction, static_argnames="mode")


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    return jnp.zeros(size, jnp.float32).at[: values.shape[0]].set(values), jnp.arange(size) < values.shape[0]


class MaskedScore:
    """A jitted function whose clear_cache raises."""

    def __init__(self):
        self.jitted = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))

    def __call__(self, values, mask):
        return self.jitted(values, mask)

    def clear_cache(self):
        raise RuntimeError("no clearing here")


masked_score = MaskedScore()
'''


def test_objects_that_raise_when_looked_at_cost_only_their_own_checks():
    namespace: dict = {}
    exec(WEIRD, namespace)  # noqa: S102 - a submission
    modes = _judged("static_max_mode", "modes", namespace)
    assert [r.passed for r in modes.results] == [False] * 3
    assert all("an object that cannot be looked at" in r.failure.problem for r in modes.results), render(modes)
    traces, objective = (_judged("padded_masking", group, namespace) for group in ("traces", "objective"))
    assert "The check stopped with RuntimeError: no clearing here" in render(traces)
    assert objective.earned == 3  # the kernel served on: a student's clear_cache failed one check, no more


def test_connections_that_say_nothing_do_not_hold_up_the_kernel():
    """Any process may find the session's port; a hundred silent connections (more than wait at
    once) must not delay the kernel's hello by even one hello's timeout."""
    session = judge.Session("static_max_mode", "errors")
    address = re.search(r"'([\d.]+):(\d+)'", session.kernel_code)
    silent = [socket.create_connection((address[1], int(address[2]))) for _ in range(100)]
    namespace = from_python(CORPUS / "static_max_mode" / "correct.py").namespace
    started = time.monotonic()
    exec(session.kernel_code, namespace)  # noqa: S102 - the kernel's serving call
    report = session.finish()
    waited = time.monotonic() - started
    for connection in silent:
        connection.close()
    assert report.earned == 1
    assert waited < judge._HELLO_SECONDS


def test_what_a_judge_hands_over_is_rebuilt_only_in_a_kernel():
    import jax
    import jax.numpy as jnp

    thunk = Thunk("a program", ((("ops", 1),), 2), (("call", 3, "weak"), ("trace", 5, "strong")))
    generated = programs.program((("ops", 1), ("scan", 3, (("ops", 2),))), 1)
    step = Compiled(lambda theta, lr: theta - lr * theta, jax.ShapeDtypeStruct((3,), jnp.float32),
                    jax.ShapeDtypeStruct((), jnp.float32, weak_type=True))
    handed: list = []
    data = wire.loads(wire.dumps({"v": wire.encode([thunk, generated, step], handed=handed)}))["v"]
    assert handed == [thunk]
    with pytest.raises(wire.WireError, match="handed to a kernel, never sent by one"):
        wire.decode(data)  # what a kernel sends: the judge's process builds nothing of it
    handing = wire.Handing()
    loop, regenerated, restep = wire.decode(data, handing=handing)
    [rebuilt] = handing.made
    assert isinstance(rebuilt, Thunk) and rebuilt is not thunk
    # The notebook's code gets a plain function that runs the rebuilt thunk and returns nothing, with
    # none of the thunk's attributes (its program and actions would name what it does).
    assert not isinstance(loop, Thunk) and not hasattr(loop, "actions") and not hasattr(loop, "program")
    assert loop() is None
    assert rebuilt.report() == {"calls": 1}
    thunk.absorb(rebuilt.report())
    assert thunk.calls == 1
    x = jnp.linspace(-1.0, 1.0, 3, dtype=jnp.float32)
    assert jaxprs.count_recursive(jax.make_jaxpr(regenerated)(x)) == jaxprs.count_recursive(jax.make_jaxpr(generated)(x))
    assert jnp.allclose(restep(x, lr=0.5), x - 0.5 * x)  # by keyword too, as the function was written


def _nested_jits(depth: int) -> list:
    parts: list = [["ops", 1]]
    for _ in range(depth):
        parts = [["jit", parts]]
    return parts


@pytest.mark.parametrize("parts", [
    [["ops", 10_000]], [["scan", 3]], [["nope", 1]], [["ops", True]], "ops", _nested_jits(9),
])
def test_a_description_outside_the_grammar_is_refused(parts):
    with pytest.raises(programs.ProgramError):
        programs.checked(parts)


def test_a_jaxpr_outline_counts_as_the_jaxpr_does():
    import jax

    fn = programs.program((("ops", 2), ("cond", (("ops", 1),), (("while", (("ops", 3),)),)), ("jit", (("ops", 1),))), 2)
    x = jax.numpy.ones(4)
    closed = jax.make_jaxpr(fn)(x, x)
    seen = wire.decode(wire.loads(wire.dumps({"v": wire.encode(closed)}))["v"])
    assert isinstance(seen, jaxprs.Outline)
    assert jaxprs.count_recursive(seen) == jaxprs.count_recursive(closed) > jaxprs.count_top_level(seen)
    assert jaxprs.primitive_counts(seen) == jaxprs.primitive_counts(closed)
    assert [e.primitive.name for e in jaxprs.staged_loops(seen)] == ["while"]


def test_preloading_every_property_module_starts_no_jax_backend():
    """A parallel worker imports every property module (judge.preload), then forks itself: JAX's
    backend and its threads do not survive a fork, and a forked worker's JAX would hang. (Exporting
    the grader's step at import did exactly that; it is exported on first use now.)"""
    probe = ("from autograder.grading import judge; judge.preload(); import threading; "
             "from jax._src import xla_bridge; print(bool(xla_bridge._backends), threading.active_count())")
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert shown == ["False", "1"]


def test_a_described_value_carries_its_hash_so_cut_descriptions_still_tell_apart():
    """An object the wire cannot carry arrives described, its words cut to 300 characters; two
    different ones cut to the same words still differ by the kernel's hash, equal ones share it,
    and a hash that is not a number is dropped, not trusted."""
    long_a, long_b = frozenset({"float32[3] " * 40 + "a"}), frozenset({"float32[3] " * 40 + "b"})
    a, b, again = (wire.decode(wire.loads(wire.dumps(wire.encode(v)))) for v in (long_a, long_b, frozenset(long_a)))
    assert a.text == b.text and a.hashed != b.hashed and a.hashed == again.hashed == hash(long_a)
    forged = wire.decode({"t": "described", "kind": "a frozenset", "text": "?", "hash": "__import__('os')"})
    assert forged.hashed is None
    unhashable = wire.decode(wire.loads(wire.dumps(wire.encode({1, 2}))))
    assert unhashable.hashed is None


def test_a_listing_reaches_the_kernel_without_its_description():
    """The judge's listing carries its blocks (how it travels); the kernel's copy does not: the
    description names the heaviest line, and the notebook is to read the program."""
    import jax
    import jax.numpy as jnp

    blocks = (("loop", 3, 2), ("fori", 40, 1))
    fn = programs.listing(blocks)
    data = wire.loads(wire.dumps({"v": wire.encode(fn, handed=[])}))["v"]
    rebuilt = wire.decode(data, handing=wire.Handing())
    assert fn.listing and not hasattr(rebuilt, "listing")
    x = jnp.ones(3, jnp.float32)
    assert jaxprs.equations_by_line(jax.make_jaxpr(rebuilt)(x), programs.LISTING_FILE) == \
        jaxprs.equations_by_line(jax.make_jaxpr(fn)(x), programs.LISTING_FILE)
