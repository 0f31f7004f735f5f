"""Every number or outcome the notebooks state beside a worked example, checked by running it.

Each release notebook runs in a fresh Python process of its own, as a kernel would run it: its
code cells in order, the solution cells filled with the reference solutions from source/ (the
release's hidden-test cells hold only their docstring there). After the notebook, a few short
probes run in the same namespace, for claims the prose makes without a cell of their own
("`jax.grad` through it raises"). Each claim quotes its sentence; the test first checks that
the sentence is still in the notebook, then that what ran agrees with it, and a failure names
the sentence. A JAX upgrade that changes a behaviour the course teaches fails here.

The README's learning-goals table is held here too: every graded goal names corpus
submissions written with its misconception, whose declared FAILS include the properties the row
lists (tests/test_graders.py grades each corpus file and holds it to its FAILS).

Run one notebook by hand: ``python tests/test_claims.py padded_masking`` prints what it ran.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import math
import os
import re
import subprocess
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import nbformat
import pytest

REPO = Path(__file__).resolve().parent.parent
ASSIGNMENTS = tuple(sorted(p.parent.name for p in (REPO / "source").glob("*/*.ipynb") if p.stem == p.parent.name))
_MARKER = "@@claims-json@@"
#: Where the notebooks run for the claims: the CPU, as the course is taught; tests/test_gpu.py sets
#: ``COURSE_CLAIMS_PLATFORM=cuda`` to hold every claim not marked ``device="cpu"`` on a GPU.
PLATFORM = os.environ.get("COURSE_CLAIMS_PLATFORM", "cpu")


# --------------------------------------------------------------------------- running a notebook


def _code_cells(assignment: str) -> list[tuple[int, str]]:
    """(index, code) of every code cell of the release notebook, solutions from source/."""
    release = nbformat.read(REPO / "release" / assignment / f"{assignment}.ipynb", as_version=4)
    source = nbformat.read(REPO / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    by_id = {c.metadata["nbgrader"]["grade_id"]: c for c in source.cells if "nbgrader" in c.metadata}
    cells = []
    for i, cell in enumerate(release.cells):
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        code = cell.source
        if meta.get("solution"):
            code = "\n".join(line for line in by_id[meta["grade_id"]].source.splitlines()
                             if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))
        cells.append((i, code))
    return cells


def _run_here(assignment: str) -> dict:
    """Run the notebook and its probes in this process; return outputs, errors and probe results."""
    # A kernel starts in the notebook's folder: the self-check cells import the selfcheck.py released there
    # (read, never compiled into a __pycache__ of release/).
    sys.dont_write_bytecode = True
    sys.path.insert(0, str(REPO / "release" / assignment))
    namespace: dict = {"__name__": "__main__"}
    cells = {}
    for i, code in _code_cells(assignment):
        out = io.StringIO()
        error = None
        with contextlib.redirect_stdout(out):
            try:
                exec(compile(code, f"<{assignment} cell {i}>", "exec"), namespace)
            except Exception:
                error = traceback.format_exc(limit=3)
        cells[i] = {"code": code, "out": out.getvalue(), "error": error}
    probes = {}
    for name, code in PROBES.get(assignment, {}).items():
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                exec(compile(code, f"<{assignment} probe {name}>", "exec"), namespace)
                probes[name] = {"result": _plain(namespace.get("result"))}
            except Exception:
                probes[name] = {"error": traceback.format_exc(limit=3)}
        namespace.pop("result", None)
    return {"cells": cells, "probes": probes}


def _plain(value):
    """A JSON-able copy of a probe's result (nan kept as the string 'nan')."""
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def _run_in_a_process(assignment: str) -> dict:
    env = dict(os.environ, JAX_PLATFORMS=PLATFORM, PYTHONHASHSEED="0")
    proc = subprocess.run([sys.executable, __file__, assignment, "--json"], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=300)
    if _MARKER not in proc.stdout:
        raise RuntimeError(f"running {assignment} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.split(_MARKER, 1)[1])


# --------------------------------------------------------------------------- what a claim sees


@dataclass
class Run:
    assignment: str
    cells: dict
    probes: dict

    def output(self, marker: str) -> str:
        """The printed output of the one code cell whose code contains ``marker``."""
        found = [c for c in self.cells.values() if marker in c["code"]]
        assert len(found) == 1, f"{len(found)} cells of {self.assignment} contain {marker!r}"
        assert found[0]["error"] is None, f"the cell raised:\n{found[0]['error']}"
        return found[0]["out"]

    def line(self, marker: str, starts: str) -> str:
        lines = [ln for ln in self.output(marker).splitlines() if ln.startswith(starts)]
        assert len(lines) == 1, f"no single output line starting {starts!r}: {self.output(marker)!r}"
        return lines[0]

    def probe(self, name: str):
        got = self.probes[name]
        assert "error" not in got, f"probe {name} raised:\n{got['error']}"
        return got["result"]


@dataclass
class Claim:
    assignment: str
    sentence: str  # quoted from the notebook (whitespace-insensitive)
    check: Callable[[Run], None]
    where: str = "release"  # "source" for a model answer, which the release does not show
    device: str = "any"  # "cpu" for a sentence the notebook says holds on a CPU (XLA's CPU rewrites)

    @property
    def id(self) -> str:
        return f"{self.assignment}: {self.sentence[:60]}"


def _norm(text: str) -> str:
    return " ".join(text.split())


def _notebook_text(assignment: str, where: str) -> str:
    nb = nbformat.read(REPO / where / assignment / f"{assignment}.ipynb", as_version=4)
    return _norm("\n".join(c.source for c in nb.cells))


def _fields(line: str) -> dict:
    return dict(re.findall(r"(\w+)=(\S+)", line))


def _is_nan(text) -> bool:
    return str(text).strip() == "nan"


# --------------------------------------------------------------------------- probes

PROBES: dict[str, dict[str, str]] = {
    "host_sync": {
        "log_again": "result = [compile_log(loop_one), compile_log(loop_three)]",
        "lower_logs": """
_lowered = jax.jit(lambda v, r: v * r)
_lowered.trace(jnp.ones(5), 2.0)
result = [m.split(" ")[0] + " " + m.split(" ")[1] for m in compile_log(lambda: _lowered.lower(jnp.ones(5), 2.0))]
""",
        "rewrap": """
_n = {"count": 0}
def _long_lived(v):
    _n["count"] += 1
    return v * 2.0
_v = jnp.ones(3)
for _ in range(3):
    jax.jit(_long_lived)(_v)
_rewrapped = _n["count"]
_n["count"] = 0
for _ in range(3):
    jax.jit(lambda v: _long_lived(v))(_v)
result = [_rewrapped, _n["count"]]
""",
        "keyword": """
_v9 = jnp.arange(9.0)
with PhaseWatch() as _w:
    halver(_v9, 2.0)
    halver(_v9, scale=2.0)
result = _w.traces
""",
        "eager_once": """
_e = jnp.ones(19)
with PhaseWatch() as _w:
    _e * 2.0
    _e * 3.0
result = _w.traces
""",
        "read_list": """
_r = CountingRead()
_host = _r([jnp.float32(1.0), jnp.float32(2.0)])
try:
    jnp.stack([])
    _empty = "no error"
except Exception as e:
    _empty = type(e).__name__
result = [_r.calls, list(map(float, _host)), _empty]
""",
        "stack_once": """
_kept = [jnp.float32(i) for i in range(23)]
with PhaseWatch() as _w:
    jnp.stack(_kept)
    jnp.stack(_kept)
result = _w.traces
""",
        "nested_jit": """
@jax.jit
def _inner_once(v):
    return v + 1.0
@jax.jit
def _outer_once(v):
    return _inner_once(v) * 2.0
_n = jnp.ones(29)
with PhaseWatch() as _w:
    _outer_once(_n)
result = [_w.traces, _w.compiles]
""",
        "boundary_returns": """
_m = jnp.ones((2, 2))
_ready = _m.block_until_ready()
result = [_ready is _m, type(_ready).__name__ != "float"]
""",
        "context_key": """
_c = jnp.ones(5)
halver(_c, 2.0)
with PhaseWatch() as _w:
    halver(_c, 2.0)
    with jax.default_matmul_precision("highest"):
        halver(_c, 2.0)
_precision = _w.traces
with PhaseWatch() as _w:
    with jax.debug_nans(True):
        halver(_c, 2.0)
_nans = _w.traces
with PhaseWatch() as _w:
    halver(jax.device_put(jnp.ones(5), jax.devices()[0]), 2.0)
_committed = [_w.traces, _w.compiles]
with PhaseWatch() as _w:
    halver(jax.device_put(jnp.ones(5)), 2.0)
result = [_precision, _nans, *_committed, _w.traces, _w.compiles]
""",
    },
    "ledger_extension": {
        "signature_tools": """
_a, _b, _c, _d = jnp.arange(5.0), jnp.array(3.0), jnp.ones(7), jnp.zeros(2)
with TraceWatch() as _w:
    _types = [str(jax.typeof(_a)), str(jax.typeof(_b))]
    _l1, _s1 = jax.tree.flatten({"p": _c, "q": [_d]})
    _l2, _s2 = jax.tree.flatten({"p": _a, "q": [5.0]})
result = [_w.count, _types, type(_s1).__name__, _s1 == _s2, str(_s1)]
""",
        "nested_jit": """
@jax.jit
def _inner_once(v):
    return v + 1.0
@jax.jit
def _outer_once(v):
    return _inner_once(v) * 2.0
_n = jnp.ones(29)
with TraceWatch() as _w:
    _outer_once(_n)
result = _w.names
""",
        "timed_loops": """
accumulate(jnp.float32(0.0), batches[0])  # as the cell does before timing (a later cell cleared the caches)
with TraceWatch() as _w:
    _t, _reads = jnp.float32(0.0), []
    for _b in batches:
        _t = accumulate(_t, _b)
        _reads.append(float(_t))
    _t = jnp.float32(0.0)
    for _b in batches:
        _t = accumulate(_t, _b)
    _final = float(_t)
result = [_w.names.count("accumulate"), _reads[-1] == _final]
""",
        "setting_facts": """
_x = jnp.arange(3.0)
_d = {"a": _x, "b": _x.astype(jnp.int32)}
_swapped = {"b": _d["b"], "a": _d["a"]}
result = [bool(jax.config.jax_enable_x64), str(jax.typeof(np.array(2.0))),
          traced_again(((_x, np.float32(2.0)), {"power": 2}), ((_x, np.array(2.0)), {"power": 2})),
          traced_again(((), {"x": _x, "scale": 2.0, "power": 2}), ((), {"power": 2, "scale": 2.0, "x": _x})),
          traced_again(((_d, 1.0), {"power": 1}), ((_swapped, 1.0), {"power": 1})),
          str(jax.tree.structure(_swapped)), [str(jax.typeof(leaf)) for leaf in jax.tree.leaves(_swapped)]]
""",
        "call_forms": """
_x11 = jnp.arange(11.0)
_forms = [lambda: compiled_square_sum(_x11, 2.0), lambda: compiled_square_sum(_x11, scale=2.0),
          lambda: compiled_square_sum(_x11, jnp.float32(2.0)), lambda: compiled_square_sum(_x11, 3.0)]
result = []
for _call in _forms:
    _before = trace_log["count"]
    _call()
    result.append(trace_log["count"] - _before)
""",
    },
    "padded_masking": {
        "nested_jit": """
@jax.jit
def _inner_once(v):
    return v + 1.0
@jax.jit
def _outer_once(v):
    return _inner_once(v) * 2.0
_n = jnp.ones(29)
with TraceWatch() as _w:
    _outer_once(_n)
result = _w.names
""",
        "inf": "result = float(jnp.float32(0.0) * jnp.inf)",
        "grad_inf": """
_rows_inf = jnp.array([2.0, 3.0, jnp.inf])
result = float(jax.grad(lambda t: jnp.sum(jnp.where(keep, (t * _rows_inf) ** 2, 0.0)))(1.0))
""",
        "grad_plus": """
result = [float(jax.grad(lambda t: jnp.sum(jnp.where(keep, t + rows, 0.0)))(1.0)),
          float(jax.grad(lambda t: jnp.sum(jnp.where(keep, t + _rows_inf, 0.0)))(1.0))]
""",
    },
    "loops": {
        "one_class": """
_closed = jax.make_jaxpr(lambda v: lax.fori_loop(0, 3, lambda i, w: w * 2.0, v))(jnp.ones(3))
_subs = [v for e in _closed.eqns for v in e.params.values() if isinstance(v, (ClosedJaxpr, Jaxpr))]
result = [ClosedJaxpr is Jaxpr, _closed.jaxpr is _closed, len(_subs) > 0 and all(s.jaxpr is s for s in _subs)]
""",
        "count10": "result = count_equations(lambda v: unrolled(v, 3), x)",
        "summarize_format": """
def _col0(v):
    return (
jnp.sin(v))


@jax.jit
def _helper(v):
    return jnp.cos(v)


def _calls(v):
    return _helper(v)


_held = jax.make_jaxpr(_calls)(x).jaxpr.eqns[0]
result = [source_info_util.summarize(jax.make_jaxpr(_col0)(x).jaxpr.eqns[0].source_info), _col0.__code__.co_firstlineno,
          source_info_util.summarize(_held.source_info), _calls.__code__.co_firstlineno,
          source_info_util.summarize(_held.params["jaxpr"].jaxpr.eqns[0].source_info)]
""",
        "bookkeeping": """
def _walk_summaries(jaxpr):
    for _eqn in jaxpr.eqns:
        yield _eqn.primitive.name, source_info_util.summarize(_eqn.source_info)
        for _value in _eqn.params.values():
            for _sub in _value if isinstance(_value, (tuple, list)) else (_value,):
                if isinstance(_sub, ClosedJaxpr):
                    yield from _walk_summaries(_sub.jaxpr)


result = list(_walk_summaries(jax.make_jaxpr(lambda v: lax.fori_loop(0, 10, lambda i, w: jnp.sin(w), v))(x).jaxpr))
""",
        "dump_agrees": """
import base64 as _base64
import inspect as _inspect
import shutil as _shutil

from autograder.kit import programs as _programs

result = []
for _blocks in ((("loop", 20, 1), ("loop", 5, 6)), (("fori", 1000, 3), ("loop", 3, 2)),
                (("loop", 3, 2), ("helper", 8, 2)), (("fori", 500, 1), ("loop", 5, 1), ("loop", 2, 4)),
                (("helperloop", 100, 8), ("loop", 2, 3), ("scan", 30, 2), ("helper", 3, 1)),
                (("loop", 3, 2), ("softmax",)), (("foridef", 300, 4), ("loop", 2, 1))):
    _fn = _programs.listing(_blocks)
    _held = []

    def _hold(jaxpr):
        for _eqn in jaxpr.eqns:
            for _value in _eqn.params.values():
                for _sub in _value if isinstance(_value, (tuple, list)) else (_value,):
                    if isinstance(_sub, ClosedJaxpr):
                        _held.append(id(_sub.jaxpr))
                        _hold(_sub.jaxpr)

    _hold(jax.make_jaxpr(_fn)(x).jaxpr)
    _dir = tempfile.mkdtemp()
    _saved = {n: jax.config.values[n] for n in ("jax_dump_ir_to", "jax_dump_ir_modes")}
    jax.config.update("jax_dump_ir_to", _dir)
    jax.config.update("jax_dump_ir_modes", "eqn_count_pprof")
    try:
        jax.jit(_fn)(jnp.linspace(-1.0, 1.0, 11))
    finally:
        for _n, _v in _saved.items():
            jax.config.update(_n, _v)
    _dumps = [n for n in sorted(os.listdir(_dir)) if n.endswith("_fn.eqn_count_pprof")]
    result.append([[_base64.b64encode(open(os.path.join(_dir, n), "rb").read()).decode() for n in _dumps],
                   heaviest_line(_fn, x), "def fn(x):" in _inspect.getsource(_fn), len(_held) == len(set(_held))])
    _shutil.rmtree(_dir)
""",
        "grad": """
try:
    jax.grad(lambda v: jnp.sum(rolled(v, 3)))(x)
    _dynamic = "no error"
except ValueError as e:
    _dynamic = "ValueError"
_static = jax.jit(lambda v, n: lax.fori_loop(0, n, lambda i, w: 0.5 * w + jnp.sin(w), v), static_argnums=1)
_static_grad = jax.grad(lambda v: jnp.sum(_static(v, 3)))(x)
result = [_dynamic, str(jax.make_jaxpr(lambda v: rolled(v, 3))(x)).count("while["),
          str(jax.make_jaxpr(lambda v: _static(v, 3))(x)).count("scan["),
          bool(jnp.all(jnp.isfinite(_static_grad)))]
""",
        "while_loop": """
_w = jax.make_jaxpr(lambda v: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, v)))(x)
result = [e.primitive.name for e in _w.jaxpr.eqns]
""",
        "rounding_window": """
# eager quantise against the jitted one, where they differ: how far is the quotient from a half,
# in float32 units in its last place, and in absolute terms for the graders' inputs and larger ones
_rng = np.random.default_rng(0)
_ulps, _far = [], {}
for _bound in (100.0, 1e4):
    _far[_bound] = 0.0
    for _scale in (0.1, 0.3, 3.0):
        _x = _rng.uniform(-_bound, _bound, 200_000).astype(np.float32)
        _eager = np.asarray(quantise({"w": jnp.asarray(_x)}, _scale)["w"])
        _jitted = np.asarray(quantise_jitted({"w": jnp.asarray(_x)}, _scale)["w"])
        _q = _x.astype(np.float64) / np.float64(np.float32(_scale))
        _d = np.abs(np.abs(_q - np.floor(_q)) - 0.5)[_eager != _jitted]
        _u = np.spacing(np.abs(_q).astype(np.float32)).astype(np.float64)[_eager != _jitted]
        _ulps.extend((_d / _u).tolist())
        _far[_bound] = max([_far[_bound], *_d.tolist()])
result = [len(_ulps) > 0, max(_ulps), _far[100.0], _far[1e4]]
""",
        "round": """
result = [float(jnp.round(jnp.float32(0.25) / 0.5)), float(jnp.round(jnp.float32(0.75) / 0.5)),
          float(jnp.floor(jnp.float32(0.25) / 0.5 + 0.5))]
""",
        "dump_written": """
import base64 as _base64
import shutil as _shutil
_names = sorted(os.listdir(dump_dir))
result = [_names, [_base64.b64encode(open(os.path.join(dump_dir, n), "rb").read()).decode() for n in _names]]
_shutil.rmtree(dump_dir)
""",
        "dump_cached_eager": """
import shutil as _shutil
_fresh = jnp.ones(37)
_dir = tempfile.mkdtemp()
_saved = {n: jax.config.values[n] for n in ("jax_dump_ir_to", "jax_dump_ir_modes")}
jax.config.update("jax_dump_ir_to", _dir)
jax.config.update("jax_dump_ir_modes", "eqn_count_pprof")
try:
    unrolled(x, 30)  # compiled before, by the self-check: no dump
    _cached = sorted(os.listdir(_dir))
    jnp.cos(_fresh)  # an eager operation at a new shape
    _eager = sorted(os.listdir(_dir))
finally:
    for _n, _v in _saved.items():
        jax.config.update(_n, _v)
_shutil.rmtree(_dir)
result = [_cached, _eager]
""",
        "eager_programs": """
_tree = {"w": jnp.ones((5, 17)), "b": jnp.ones(17)}  # leaf shapes nothing else uses
_events = []
def _listen(event, duration, **kw):
    if event in ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/backend_compile_duration"):
        _events.append((event.rsplit("/", 1)[1], kw.get("fun_name")))
jax.monitoring.register_event_duration_secs_listener(_listen)
try:
    quantise(_tree, 0.3)
finally:
    jax.monitoring.unregister_event_duration_listener(_listen)
result = [[n for e, n in _events if e == "jaxpr_trace_duration"], [n for e, n in _events if e == "backend_compile_duration"]]
""",
        "division": """
_rng = np.random.default_rng(0)
_x = _rng.uniform(-100.0, 100.0, 1_000_000).astype(np.float32)
result = []
for _scale in (0.1, 0.3):
    _s = np.float32(_scale)
    _exact, _recip = _x / _s, _x * (np.float32(1.0) / _s)  # numpy float32: correctly rounded division
    _eager = np.asarray(jnp.asarray(_x) / _scale)
    _alone = np.asarray(jax.jit(lambda a, b: a / b)(jnp.asarray(_x), _scale))
    _fused = np.asarray(jax.jit(lambda a, b: jnp.round(a / b) * b)(jnp.asarray(_x), _scale))
    result.append([bool(np.array_equal(_eager, _recip)), bool(np.array_equal(_alone, _recip)),
                   bool(np.array_equal(_exact, _recip)),
                   bool(np.array_equal(_fused, (np.round(_exact) * _s).astype(np.float32))),
                   bool(np.array_equal(_fused, (np.round(_recip) * _s).astype(np.float32)))])
""",
        "remainder": """
def _one(v):
    return 0.5 * v + jnp.sin(v)
def _blocked(k):
    @functools.partial(jax.jit, static_argnames="steps")
    def _rolled_k(v, steps):
        def _block(c, _):
            for _ in range(k):
                c = _one(c)
            return c, None
        v, _ = lax.scan(_block, v, None, length=steps // k)
        for _ in range(steps % k):  # the remainder as a Python loop
            v = _one(v)
        return v
    return _rolled_k
result = {}
for _k in (2, 3, 5):
    _r = _blocked(_k)
    result[_k] = [count_equations(lambda v: _r(v, s), x) for s in (1, 2, 3, 5, 8, 13, 21, 40)]
result["reference"] = [count_equations(lambda v: rolled(v, s), x) for s in (1, 2, 3, 5, 8, 13, 21, 40)]
""",
        "unroll_param": """
result = []
for _u in (8, True):
    _e = jax.make_jaxpr(lambda v: lax.scan(lambda c, _: (0.5 * c + jnp.sin(c), None), v, None, length=40, unroll=_u)[0])(x).jaxpr.eqns[0]
    result.append([_e.primitive.name, _e.params["unroll"], _e.params["length"]])
""",
        "cond_tuple": """
def _tuples_only(jaxpr):
    total = 0
    for eqn in jaxpr.eqns:
        total += 1
        for value in eqn.params.values():
            for sub in value if isinstance(value, tuple) else (value,):
                if isinstance(sub, ClosedJaxpr):
                    total += _tuples_only(sub.jaxpr)
                elif isinstance(sub, Jaxpr):
                    total += _tuples_only(sub)
    return total
def _mixed(v):
    v = lax.cond(v[0] > 0, jnp.sin, jnp.cos, v)
    v = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, v))[1]
    return lax.scan(lambda c, _: (jax.jit(jnp.cos)(c), None), v, None, length=3)[0]
_staged = jax.make_jaxpr(_mixed)(x)
_cond = [e for e in _staged.jaxpr.eqns if e.primitive.name == "cond"][0]
result = [type(_cond.params["branches"]).__name__, _tuples_only(_staged.jaxpr), count_equations(_mixed, x)]
""",
        "rewrap_quantise": """
_compiled = []
def _listen(event, duration, **kw):
    if event == "/jax/core/compile/backend_compile_duration":
        _compiled.append(kw.get("fun_name"))
_rewrapped = {"w": jnp.ones((3, 19)), "b": jnp.ones(19)}
_fresh_lambda = {"w": jnp.ones((4, 19)), "b": jnp.ones(21)}
jax.monitoring.register_event_duration_secs_listener(_listen)
try:
    for _s in (0.1, 0.2, 0.3):
        jax.jit(quantise)(_rewrapped, _s)  # the same top-level function, wrapped again
    _once = len(_compiled)
    for _s in (0.1, 0.2, 0.3):
        jax.jit(lambda t, s: quantise(t, s))(_fresh_lambda, _s)  # a new lambda each time
finally:
    jax.monitoring.unregister_event_duration_listener(_listen)
result = [_once, len(_compiled) - _once]
""",
        "quantise_jaxpr": """
_eqns = jax.make_jaxpr(quantise)({"w": jnp.ones((4, 3)), "b": jnp.ones(3), "gain": jnp.ones(())}, 0.5).jaxpr.eqns
_names = [e.params.get("name") if e.primitive.name == "jit" else e.primitive.name for e in _eqns]
result = [_names.count("div"), _names.count("round"), _names.count("mul"), _names.count("convert_element_type")]
""",
    },
    "cache_misses": {
        "eager_unexplained": """
_z = jnp.ones(13)
with TraceWatch() as _w:
    _texts = explanations_during(lambda: jnp.sin(_z))
result = [_w.names, _texts]
""",
        "context": """
@jax.jit
def _twice(v):
    return v * 2.0
_a = jnp.ones(3)
_twice(_a)
def _go():
    with jax.default_matmul_precision("highest"):
        _twice(_a)
result = explanations_during(_go)
""",
        "link_last": """
_g = jax.jit(lambda s, v: jnp.sum(s * v))
_s, _v3, _v4 = jnp.float32(2.0), jnp.ones(3), jnp.ones(4)
def _go():
    _g(2.0, _v3)
    _g(_s, _v4)
result = explanations_during(_go)
""",
        "flag_off_first": """
def _made_here(v):
    return jax.jit(lambda w: jnp.sum(4.0 * w))(v)
_made_here(x)  # a miss with explanations off
_first_on = explanations_during(lambda: _made_here(x))
_second_on = explanations_during(lambda: _made_here(x))
result = ["re-defined" in _first_on[0], "re-defined" in _second_on[0]]
""",
        "static_hidden": """
_h = jax.jit(lambda x, k: x * k, static_argnames="k")
def _go():
    _h(jnp.ones(3), k=1)
    _h(jnp.ones(5), k=1)
    _h(jnp.ones(5), k=2)
result = explanations_during(_go)
""",
        "static_alone": """
_h2 = jax.jit(lambda x, k: x * k, static_argnames="k")
def _go():
    _h2(jnp.ones(3), k=1)
    _h2(jnp.ones(3), k=2)
    _h2(jnp.ones(3), k=3)
result = explanations_during(_go)
""",
        "tie_by_text": """
_t = jax.jit(lambda x: x + 1)
def _go():
    _t(jnp.ones(3, jnp.float32))
    _t(jnp.ones(3, jnp.int32))
    _t(jnp.ones(5, jnp.int32))
result = explanations_during(_go)
""",
        "eager_once": """
_e = jnp.ones(17)
with TraceWatch() as _w:
    _e * 2.0
    _e * 3.0
    _e * 2.0
result = _w.names
""",
        "kept_alive": """
import gc as _gc
import re as _re
import weakref as _weakref
_alive = []
def _made(v):
    _f = lambda w: jnp.sum(3.0 * w)
    _alive.append(_f)  # kept: no address is freed for the next lambda
    return jax.jit(_f)(v)
_texts = explanations_during(lambda: [_made(x) for _ in range(3)])
_ids = [_re.search(r"id=(\\d+)", t)[1] for t in _texts]
_g = lambda v: v * 5.0
jax.jit(_g)(x)
_ref = _weakref.ref(_g)
del _g
_gc.collect()
result = [len(_texts), len(set(_ids)), _ref() is None]
""",
        "summarise_again": """
_x4 = jnp.arange(4.0)  # the worked cell's x
with TraceWatch() as _w:
    summarise(_x4)
result = _w.names
""",
        "guess_named": """
@jax.jit
def _first_kept(v):
    return jnp.min(v)
@jax.jit
def _second_kept(v):
    return jnp.mean(v)
def _both(v):
    for _f in (_first_kept, _second_kept):
        _f(v)
result = [miss_cause(t) for t in explanations_during(lambda: _both(x))]
""",
        "debug_tier": """
def _plain(a, b):
    return a * b
_d3, _d4 = jnp.ones(3), jnp.ones(4)
jax.jit(_plain)(_d3, _d3)
_types_too = explanations_during(lambda: jax.jit(jax.checkpoint(_plain))(_d4, _d4))
_tree_too = explanations_during(lambda: jax.jit(jax.checkpoint(_plain))(_d3, b=_d3))
result = [_types_too, _tree_too]
""",
        "nested_jit": """
@jax.jit
def _inner_once(v):
    return v + 1.0
@jax.jit
def _outer_once(v):
    return _inner_once(v) * 2.0
_n = jnp.ones(29)
with TraceWatch() as _w:
    _outer_once(_n)
result = _w.names
""",
    },
    "branch_repair": {
        "nested_jit": """
@jax.jit
def _inner_once(v):
    return v + 1.0
@jax.jit
def _outer_once(v):
    return _inner_once(v) * 2.0
_n = jnp.ones(29)
with TraceWatch() as _w:
    _outer_once(_n)
result = _w.names
""",
        "cond_jaxpr": """
_eqns = jax.make_jaxpr(halve_if_large)(jnp.arange(3.0), 1.0).jaxpr.eqns
_conds = [e for e in _eqns if e.primitive.name == "cond"]
result = [len(_conds), len(_conds[0].params["branches"])]
""",
        "vmap_jaxpr": """
_batched = jax.make_jaxpr(jax.vmap(halve_if_large, in_axes=(0, None)))(jnp.arange(6.0).reshape(2, 3), 1.0)
result = [[e.primitive.name for e in _batched.jaxpr.eqns],
          [str(e.outvars[0].aval.shape) for e in _batched.jaxpr.eqns if e.primitive.name == "div"]]
""",
        "static_array_gain": """
try:
    jax.jit(broken_branch, static_argnames=("gain",))(x8, jnp.float32(2.0))
    result = "accepted"
except Exception as e:
    result = type(e).__name__
""",
        "branches_not_counted": """
_v4 = jnp.arange(4.0)
_jitted_halve = jax.jit(halve_if_large)
with TraceWatch() as _w:
    _jitted_halve(_v4, 1.0)
result = _w.names
""",
        "gain_edges": """
_tiny = 1.00000001
result = [float(broken_branch(x8, float("nan"))), float(repaired(x8, float("nan"))),
          float(broken_branch(x8, _tiny)), float(repaired(x8, _tiny)), float(repaired(x8, 1.0000001)),
          float(repaired(x8, 1.00000006)), float(repaired(x8, 1.0000000596))]
""",
        "blend_nan": """
_big = jnp.array([1e20, 1e20], dtype=jnp.float32)
def _blend(v, gain):
    w = (gain > 1.0).astype(jnp.float32)
    return w * jnp.sum(v ** 2) + (1 - w) * jnp.sum(v)
with jax.disable_jit():
    result = float(_blend(_big, jnp.float32(0.5)))
""",
    },
    "static_max_mode": {
        "jit_refuses_a_str_mode": """
try:
    jax.jit(choose_reduction)(jnp.ones(3), mode="sum")
    result = None
except TypeError as _e:
    result = "static_argnames" in str(_e)
""",
        "nested_jit": """
@jax.jit
def _inner_once(v):
    return v + 1.0
@jax.jit
def _outer_once(v):
    return _inner_once(v) * 2.0
_n = jnp.ones(29)
with TraceWatch() as _w:
    _outer_once(_n)
result = _w.names
""",
        "positional_after_keyword": """
_t = jnp.arange(7, dtype=jnp.float32)
with TraceWatch() as _w:
    compiled_power_sum(_t, power=3)
    compiled_power_sum(_t, power=3)
    compiled_power_sum(_t, 3)
result = _w.count
""",
        "weak_arrays": "result = [jnp.full(3, 0.).weak_type, jnp.zeros(3, jnp.float32).weak_type]",
        "integer_mean": """
_ints = jnp.array([1, 2], jnp.int32)
result = [float(choose_reduction(_ints, "mean")), float(choose(_ints, mode="mean")),
          jnp.issubdtype(choose(_ints, mode="mean").dtype, jnp.floating)]
""",
        "host_decision_staged": """
_x = jnp.array([3.0, -1.0, 4.0, 1.0, -5.0])
_inner = jax.jit(lambda v, clip: (v, jnp.max(jnp.abs(v))))
def _decides_on_host(x, mode, n_iter, eps, clip_at):
    y, peak = _inner(x / 10.0, clip_at)
    if float(peak) > float(clip_at):
        y = y * (clip_at / peak)
    return y
def _staged_or_error(fn):
    try:
        jax.make_jaxpr(fn, static_argnums=(1, 2, 3, 4))(_x, "l2", 2, 0.1, 0.05)
        return "staged"
    except jax.errors.ConcretizationTypeError:
        return "raised"
result = [_staged_or_error(_decides_on_host), _staged_or_error(normalise_jitted)]
""",
        "string_refused": """
_ran = []
def _reduce(values, mode):
    _ran.append(mode)
    return jnp.sum(values) if mode == "sum" else jnp.mean(values)
try:
    jax.jit(_reduce)(jnp.ones(3), "sum")
    result = "accepted"
except TypeError as e:
    result = ["TypeError", len(_ran),
              float(jax.jit(lambda t, d, n: t[0] + d["a"])((jnp.float32(1.0), 5), {"a": jnp.float32(2.0)}, None))]
""",
    },
}


# A trace event without a Python run (the TraceWatch and PhaseWatch docstrings, host_sync, ledger Part A),
# and what `.trace()` and `.lower()` do at a signature new or already traced: run in each notebook's namespace.
_KEPT_JAXPR = """
_ran = {"n": 0}
def _kept_body(v):
    _ran["n"] += 1
    return v * 2.0
_kept = jax.jit(_kept_body)
_other = jax.jit(lambda v: v - 1.0)
_v, _new, _newer = jnp.arange(41.0), jnp.arange(43.0), jnp.arange(47.0)
_kept(_v)
_other(_v)
_events = []
def _listen(event, duration, **kw):
    if event in ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/backend_compile_duration"):
        _events.append((event.rsplit("/", 1)[1], kw.get("fun_name")))
def _watched(step):
    _events.clear()
    _before = _ran["n"]
    step()
    return [[n for e, n in _events if e == "jaxpr_trace_duration"], _ran["n"] - _before,
            len([n for e, n in _events if e == "backend_compile_duration"])]
jax.monitoring.register_event_duration_secs_listener(_listen)
try:
    result = {
        "trace_at_traced": _watched(lambda: _kept.trace(_v)),
        "lower_at_traced": _watched(lambda: _kept.lower(_v)),
        "trace_after_clear": _watched(lambda: (_other.clear_cache(), _kept.trace(_v))),
        "committed_after_clear": _watched(lambda: (_other.clear_cache(), _kept(jax.device_put(_v, jax.devices()[0])))),
        "trace_at_new": _watched(lambda: _kept.trace(_new)),
        "lower_at_new": _watched(lambda: _kept.lower(_newer)),
    }
finally:
    jax.monitoring.unregister_event_duration_listener(_listen)
"""

_WHERE_COND = """
_with_where = lambda t: jnp.where(t > 0, t, jnp.sqrt(-t))
_with_cond = lambda t: jax.lax.cond(t > 0, lambda u: u, lambda u: jnp.sqrt(-u), t)
try:
    jax.lax.cond(jnp.array([True, False]), lambda u: u, lambda u: -u, jnp.ones(2))
    _rows = "accepted"
except TypeError:
    _rows = "TypeError"
result = [float(_with_where(2.0)), float(jax.grad(_with_where)(2.0)), float(_with_cond(2.0)),
          float(jax.grad(_with_cond)(2.0)), float(jax.jit(jax.grad(_with_where))(2.0)),
          float(jax.jit(jax.grad(_with_cond))(2.0)), _rows]
"""

_TRACED_BOUND = """
import base64 as _base64
import collections as _collections
import shutil as _shutil


def _one_op(i, v):
    return jnp.sin(v)


def _bounded(x, n):
    y = jnp.cos(jnp.tan(x))
    return lax.fori_loop(0, n, _one_op, y)


_by_line = _collections.Counter()
_unnamed = []
def _walk_lines(jaxpr):
    for _eqn in jaxpr.eqns:
        _where = source_info_util.summarize(_eqn.source_info)
        if _where:
            _by_line[int(_where.split(":")[1].split(" ")[0])] += 1
        else:
            _unnamed.append(_eqn.primitive.name)
        for _value in _eqn.params.values():
            for _sub in _value if isinstance(_value, (tuple, list)) else (_value,):
                if isinstance(_sub, ClosedJaxpr):
                    _walk_lines(_sub.jaxpr)
_closed = jax.make_jaxpr(_bounded)(x, 5)
_walk_lines(_closed.jaxpr)
_dir = tempfile.mkdtemp()
_saved = {n: jax.config.values[n] for n in ("jax_dump_ir_to", "jax_dump_ir_modes")}
jax.config.update("jax_dump_ir_to", _dir)
jax.config.update("jax_dump_ir_modes", "eqn_count_pprof")
try:
    jax.jit(_bounded)(jnp.linspace(-1.0, 1.0, 13), 5)
finally:
    for _n, _v in _saved.items():
        jax.config.update(_n, _v)
_dumps = [n for n in sorted(os.listdir(_dir)) if n.endswith("_bounded.eqn_count_pprof")]
result = [{str(k): v for k, v in _by_line.items()}, sorted(_unnamed),
          [_base64.b64encode(open(os.path.join(_dir, n), "rb").read()).decode() for n in _dumps],
          _bounded.__code__.co_firstlineno, _closed.jaxpr.eqns[-1].primitive.name]
_shutil.rmtree(_dir)
"""

for _a in ("branch_repair", "cache_misses", "host_sync", "ledger_extension", "padded_masking", "static_max_mode"):
    PROBES[_a]["kept_jaxpr"] = _KEPT_JAXPR
for _a in ("branch_repair", "padded_masking"):
    PROBES[_a]["where_cond"] = _WHERE_COND
PROBES["loops"]["traced_bound"] = _TRACED_BOUND
PROBES["loops"]["literal_bounds"] = """
import inspect as _inspect
import linecache as _linecache
import re as _re

from autograder.kit import programs as _programs

_ok = []
for _blocks in ((("fori", 1000, 3), ("loop", 3, 2)), (("helperloop", 100, 8), ("scan", 30, 2), ("helper", 3, 1)),
                (("scan", 64, 1), ("loop", 4, 3), ("fori", 7, 2))):
    _fn = _programs.listing(_blocks)
    _text = "".join(_linecache.getlines(_inspect.getfile(_fn)))
    _bounds = _re.findall(r"fori_loop\\(0, ([^,]+),", _text)
    _ok.append(list(_inspect.signature(_fn).parameters) == ["x"] and bool(_bounds)
               and all(b.strip().isdigit() for b in _bounds))
result = all(_ok)
"""


def _kept_jaxpr(*keys):
    """The claim that each step named by ``keys`` behaved as the probe ``kept_jaxpr`` expects."""
    expected = {
        "trace_at_traced": [[], 0, 0], "lower_at_traced": [[], 0, 0],
        "trace_after_clear": [["_kept_body"], 0, 0], "committed_after_clear": [["_kept_body"], 0, 1],
        "trace_at_new": [["_kept_body"], 1, 0], "lower_at_new": [["_kept_body"], 1, 0],
    }
    return lambda run: _eq({k: run.probe("kept_jaxpr")[k] for k in keys}, {k: expected[k] for k in keys})


_NOT_PROOF = ("after another jitted function's ``.clear_cache()``, a ``.trace()`` or a call with a committed array, "
              "at a signature already traced, {verb} it again while JAX reuses the jaxpr it kept.")
_TRACE_EVENT_TEXT = _kept_jaxpr("trace_after_clear", "committed_after_clear")


# --------------------------------------------------------------------------- the claims


def _host_sync_claims():
    a = "host_sync"

    def three_logs(run):
        out = run.output('for name, loop in (("loop_one", loop_one)')
        logs = dict(part.split("\n", 1) for part in out.split("--- ")[1:])
        _eq(logs["loop_one"], "")
        two = logs["loop_two"].splitlines()
        _eq(sum(ln.startswith("Finished tracing") for ln in two), 3)
        _eq(sum(ln.startswith("Finished XLA compilation") for ln in two), 3)
        three = logs["loop_three"].splitlines()
        _eq(sum(ln.startswith("Finished tracing") for ln in three), 0)
        _eq([ln.split(" ")[0] for ln in three if ln.startswith(("Compiling", "Finished XLA"))], ["Compiling", "Finished"])

    def again(run):
        _eq(run.probe("log_again"), [[], []])

    def reads(run):
        assert run.line("every = CountingRead()", "reads:") == "reads: 6 vs 1 | traces during both loops: 0"
        assert run.line("every = CountingRead()", "same numbers:") == "same numbers: True"

    def rows(run):
        out = run.output('("halver.trace(v3, 2.0)"').splitlines()
        assert len(out) == 5, out
        want = [("['halve']", "[]"), ("[]", "['jit(halve)']"), ("[]", "[]"), ("['halve']", "['jit(halve)']"), ("[]", "[]")]
        got = [(re.search(r"traces=(\[.*?\])", ln)[1], re.search(r"compiles=(\[.*?\])", ln)[1]) for ln in out]
        assert got == want, got

    def lower_after_trace(run):
        out = run.output("halver.trace(v7, 2.0)")
        assert "traces=[] compiles=['jit(halve)']" in out, out

    def step_traces_nothing(run):
        reads(run)
        _eq(run.probe("stack_once"), ["stack"])

    def rewrap(run):
        assert run.probe("rewrap") == [1, 3], f"jit(step) made 3 times traced, a fresh lambda 3 times traced: {run.probe('rewrap')}"

    def timing(run):
        line = run.line("product.block_until_ready()", "time to dispatch:")
        found = re.fullmatch(r"time to dispatch: ([\d.]+) ms \| time to the result: ([\d.]+) ms", line)
        assert found, line
        assert float(found[1]) <= float(found[2]), line

    def log(run):
        out = run.output("def compile_log(thunk):")
        blocks = {b.split("\n", 1)[0]: b.split("\n", 1)[1].strip().splitlines() if "\n" in b else []
                  for b in out.split("--- ")[1:]}
        _eq(list(blocks), ["first call", "new scale, cached", "a host read"])
        first = blocks["first call"]
        _eq([m.split(" ")[0] + " " + m.split(" ")[1] for m in first],
            ["Finished tracing", "Compiling jit(quarter_sum)", "Finished jaxpr", "Finished XLA"])
        assert first[0].startswith("Finished tracing quarter_sum for jit in ") and first[0].endswith(" sec"), first
        assert "ShapedArray(float32[6])" in first[1] and "weak_type=True" in first[1], first[1]
        assert first[3].startswith("Finished XLA compilation of jit(quarter_sum) in "), first
        _eq((blocks["new scale, cached"], blocks["a host read"]), ([], []))

    return [
        Claim(a, "the loop makes JAX **trace** again (a new signature, a new static value or a new function every step), it makes XLA **compile** again without tracing (the program was traced before, but not compiled for what the loop now passes), or it does neither and **waits** (the steps reuse their program, and the time goes to running them and bringing results back). The compile log tells the three apart.",
              three_logs),
        Claim(a, "Calling `loop()` a second time would meet whatever the first run compiled, so run it once.", again),
        Claim(a, "*Compiling* is logged when JAX lowers a program for XLA, so `.lower()` alone logs it and compiles nothing; *Finished XLA compilation* is the compile itself.",
              lambda run: _eq(run.probe("lower_logs"), ["Compiling jit(<lambda>)", "Finished jaxpr"])),
        Claim(a, "Twelve steps ran and none traced; only the number of waits differs.", reads),
        Claim(a, "The cell below times one call from a single start twice: when the call returns (the time to dispatch) and after `block_until_ready()` (the time to the result).",
              timing),
        Claim(a, "`.block_until_ready()` waits until the result exists, and converts nothing.",
              lambda run: _eq(run.probe("boundary_returns"), [True, True])),
        Claim(a, "Both change from run to run and from machine to machine, but the time to the result is never shorter than the time to dispatch",
              timing),
        Claim(a, "Look for *Finished tracing*, *Compiling* (which lists the signature: shapes, dtypes and weak types), *Finished jaxpr to MLIR module conversion* and *Finished XLA compilation*, and for what a cached call and a host read log: nothing.",
              log),
        Claim(a, "The first call logs its trace, then the compile, with the times; the cached call and the host read log nothing", log),
        Claim(a, "A jitted function called inside a function JAX is already tracing is part of that trace and reports nothing of its own.",
              lambda run: _eq(run.probe("nested_jit"), [["_outer_once"], ["jit(_outer_once)"]])),
        Claim(a, "JAX fires one monitoring event each time it starts a top-level trace (named after the function; a jitted function traced inside another trace fires none), and another each time XLA compiles a program (named ``jit(<function>)``).",
              lambda run: _eq(run.probe("nested_jit"), [["_outer_once"], ["jit(_outer_once)"]])),
        Claim(a, "A trace event is not proof that the function's Python ran: " + _NOT_PROOF.format(verb="fires"), _TRACE_EVENT_TEXT),
        Claim(a, "A trace event is not the same observation as a counter inside the function: after another jitted function's `.clear_cache()`, a `.trace()` or a call with a committed array, at a signature already traced, fires the trace event again while JAX reuses the jaxpr it kept, and the counter does not move.",
              _TRACE_EVENT_TEXT),
        Claim(a, "at a signature not traced yet, `jitted.trace(...)` and `jitted.lower(...)` trace without compiling (at one already traced they run no Python and compile nothing);",
              _kept_jaxpr("trace_at_new", "lower_at_new", "trace_at_traced", "lower_at_traced")),
        Claim(a, "The first row traced and did not compile; the second compiled and did not trace; the third did neither.", rows),
        Claim(a, "The ahead-of-time `.lower(v5, 2.0).compile()` did both because nothing had traced `halver` at shape 5 yet", rows),
        Claim(a, "after a `.trace(...)` at the same signature it only compiles", lower_after_trace),
        Claim(a, "Wrapping the same top-level function in `jax.jit` again does not trace again, because jit's cache is keyed on the wrapped function.", rewrap),
        Claim(a, "a new `jax.jit(step)` around the same `step` finds the program already traced and compiled", rewrap, where="source"),
        Claim(a, "Neither choice changes what the step traces (stacking the kept losses at the end runs one small eager `stack` program, traced the first time it meets that many losses).",
              step_traces_nothing),
        Claim(a, "the tracing configuration in force at the call, such as `jax.default_matmul_precision`, is part of the key too (a setting that does not change the trace, such as `jax_debug_nans`, is not).",
              lambda run: _eq(run.probe("context_key")[:2], [["halve"], []])),
        Claim(a, "an array committed to a device (`jax.device_put(x, device)` with a device named; a plain `jax.device_put(x)` does not commit) can compile again without a new trace.",
              lambda run: _eq(run.probe("context_key")[2:], [[], ["jit(halve)"], [], []])),
        Claim(a, "whether each is passed by position or by keyword",
              lambda run: _eq(run.probe("keyword"), ["halve", "halve"])),
        Claim(a, "`read(losses)` on the list of device losses is one read",
              lambda run: _eq(run.probe("read_list")[:2], [1, [1.0, 2.0]])),
        Claim(a, "(`jnp.stack([])` would raise)", lambda run: _ne(run.probe("read_list")[2], "no error")),
        Claim(a, "Eager operations fire them too, for small programs of JAX's own, the first time each operation meets a signature",
              lambda run: _eq(len(run.probe("eager_once")), 1)),
    ]


def _eq(got, want):
    assert got == want, f"got {got!r}, expected {want!r}"


def _le(got, bound):
    assert got <= bound, f"got {got!r}, above {bound!r}"


def _ne(got, unwanted):
    assert got != unwanted, f"got {got!r}"


def _padded_masking_claims():
    a = "padded_masking"

    def two_traces(run):
        _eq(run.output('print("traces for lengths 8, 8, 5:"').strip(), "traces for lengths 8, 8, 5: 2")

    def padded(run):
        _eq(run.line("last_padded = np.pad", "traces for the padded batch:"), "traces for the padded batch: 0")
        f = run.line("last_padded = np.pad", "padded:").split()
        _eq((f[1], f[3]), ("30.0", "30.0"))

    def weights(run):
        assert_nan(run.line("weights = keep.astype", "multiply by 0/1 weights:").split(":")[1])
        _eq(run.line("weights = keep.astype", "select with where:").split(":")[1].strip(), "5.0")

    def bool_mask(run):
        _eq(run.line("times the bool mask, eager", "times the bool mask, eager:").split(":")[1].strip(), "5.0")
        assert_nan(run.line("times the bool mask, eager", "times the bool mask, disable_jit:").split(":")[1])

    def gradient(run):
        (selected,) = (_fields(ln) for ln in run.output("def selected_loss(t):").splitlines())
        _eq(selected["value"], "13.0")
        assert_nan(selected["gradient"])

    def step_follows_nan(run):
        gradient(run)
        slope = float(run.line("def selected_loss(t):", "selected_loss").split("gradient=")[1])
        assert_nan(1.0 - 0.1 * slope)  # a step t - lr * gradient from t = 1.0

    def scores(run):
        out = run.output('print("masked score:')
        values = [ln.split(":")[1].strip() for ln in out.splitlines()]
        _eq(values, ["55.0", "58.0", "55.0"])

    def layout(run):
        out = run.output("demo_padded, demo_mask = pad_batch([3.0, 1.0, 4.0], 5)").splitlines()
        _eq(out[1], "[ True  True  True False False] bool")

    return [
        Claim(a, "Two traces: the short batch is a new shape.", two_traces),
        Claim(a, "A jitted function called inside a function JAX is already tracing is part of that trace and is not noted on its own.", lambda run: _eq(run.probe("nested_jit"), ["_outer_once"])),
        Claim(a, "JAX emits a monitoring event each time it starts a top-level trace, named after the function traced (a jitted function traced inside another trace emits none).", lambda run: _eq(run.probe("nested_jit"), ["_outer_once"])),
        Claim(a, "The event is not proof that the function's Python ran: " + _NOT_PROOF.format(verb="emits"), _TRACE_EVENT_TEXT),
        Claim(a, "Pad it to eight rows with zeros and the shape is familiar again, so nothing is traced.", padded),
        Claim(a, "Multiplying by a 0/1 weight looks equivalent but is not: `0.0 * nan` is `nan`", weights),
        Claim(a, "and `0.0 * inf` is `nan` too", lambda run: assert_nan(run.probe("inf"))),
        Claim(a, "There it prints `5.0` even without `jit`", bool_mask, device="cpu"),
        Claim(a, "Only under `jax.disable_jit()` is the product computed as written, and then it gives `nan`.", bool_mask,
              device="cpu"),
        Claim(a, "`0 * nan` and `0 * inf` are both `nan`, so the gradient of that parameter is `nan`.",
              lambda run: (gradient(run), assert_nan(run.probe("grad_inf")))),
        Claim(a, "for `f = t + x` the derivative in `t` is `1` whatever the row holds, and the gradient stays finite.",
              lambda run: _eq(run.probe("grad_plus"), [2.0, 2.0])),  # 1 per kept row, two kept
        Claim(a, "Below, a loss in a parameter `t` has the right value and a `nan` gradient.", gradient),
        Claim(a, "A training step would follow that `nan` and ruin `t`.", step_follows_nan),
        Claim(a, "The gradient of `jnp.where(t > 0, t, jnp.sqrt(-t))` at `t = 2.0` is `nan`, although its value, `2.0`, never uses the square root.",
              _where_gradient_is_nan),
        Claim(a, "The same function written with `jax.lax.cond(t > 0, lambda u: u, lambda u: jnp.sqrt(-u), t)` (the `branch_repair` notebook) has gradient `1.0` there: `cond` differentiates only the branch it ran.",
              _cond_gradient_is_one),
        Claim(a, "A `cond` takes one scalar predicate, though, one choice for the whole computation, not one per row.",
              lambda run: _eq(run.probe("where_cond")[6], "TypeError")),
        Claim(a, "The masked score should equal the unpadded objective, `1 + 4 + 9 + 16 + 25 = 55`. The same padded batch summed without the mask comes out at 58", scores),
        Claim(a, "three values in a bucket of five should give a mask of three `True` followed by two `False`", layout),
    ]


def assert_nan(value):
    assert _is_nan(value), f"got {str(value).strip()!r}, expected nan"


def _loops_claims():
    a = "loops"

    def counts(run):
        out = run.output('for label, closed in (("3 steps", three), ("30 steps", thirty)):').splitlines()
        tail = [ln for ln in out if "steps:" in ln]
        _eq(tail, ["3 steps: 1 top-level equation, 9 inside the jit", "30 steps: 1 top-level equation, 90 inside the jit"])

    def dump_file(run):
        out = run.output("jax.config.update(\"jax_dump_ir_modes\", \"eqn_count_pprof\")").splitlines()
        assert len(out) == 1 and re.fullmatch(r"jax_\d{6}_unrolled\.eqn_count_pprof \d+ bytes", out[0]), out

    def dump_by_line(run):
        import base64

        names, contents = run.probe("dump_written")
        _eq(len(names), 1)
        body = next(c["code"] for c in run.cells.values() if "def unrolled(x, steps):" in c["code"])
        body_line = 1 + next(i for i, ln in enumerate(body.splitlines()) if "x = 0.5 * x + jnp.sin(x)" in ln)
        _eq(_equations_in(base64.b64decode(contents[0])), {body_line: 90})

    def dump_cached_eager(run):
        cached, eager = run.probe("dump_cached_eager")
        _eq(cached, [])
        assert len(eager) == 1 and re.fullmatch(r"jax_\d{6}_cos\.eqn_count_pprof", eager[0]), eager

    def remainder(run):
        counts = run.probe("remainder")
        for k in ("3", "5"):
            assert counts[k][1] > counts[k][0], (k, counts[k])  # 2 steps above 1 step: fails
        assert max(counts["2"]) == counts["2"][0], counts["2"]  # k = 2: nothing above 1 step

    def division(run):
        rows = run.probe("division")
        for eager_recip, alone_recip, exact_is_recip, fused_exact, _ in rows:
            _eq((eager_recip, alone_recip, exact_is_recip, fused_exact), (True, True, False, True))
        # and the fused program's rounding tells the exact quotient from the reciprocal one somewhere
        _eq(any(not fused_recip for *_, fused_recip in rows), True)

    def grad(run):
        dynamic, whiles, scans, finite = run.probe("grad")
        _eq((dynamic, whiles >= 1), ("ValueError", True))
        _eq((scans >= 1, finite), (True, True))

    def summarize_format(run):
        col0, col0_first, held, calls_first, inner = run.probe("summarize_format")
        _eq(col0, f"<loops probe summarize_format>:{col0_first + 2} (_col0)")  # no column at column 0
        _eq(held, f"<loops probe summarize_format>:{calls_first + 1}:11 (_calls)")
        assert re.fullmatch(r"<loops probe summarize_format>:\d+:11 \(_helper\)", inner), inner

    def worked_lines(run):
        out = run.output("print(outer.primitive, \"|\", source_info_util.summarize(outer.source_info))").splitlines()
        _eq(out[0], "jit | ")
        body = next(c["code"] for c in run.cells.values() if "def unrolled(x, steps):" in c["code"])
        text = next(ln for ln in body.splitlines() if "x = 0.5 * x + jnp.sin(x)" in ln)
        places = {ln.split("|")[1].strip().rsplit(" (", 1)[0].split(":", 1)[1] for ln in out[1:]}
        line = 1 + body.splitlines().index(text)
        _eq(places, {f"{line}:{text.index('0.5 * x')}", f"{line}:{text.index('jnp.sin(x)')}"})
        _eq(len(out), 5)

    def bookkeeping(run):
        summaries = run.probe("bookkeeping")
        _eq(any(prim == "add" and where == "" for prim, where in summaries), True)
        _eq(all(where for prim, where in summaries if prim == "sin"), True)

    def dump_agrees(run):
        import base64

        for dumps, answer, readable, held_once in run.probe("dump_agrees"):
            _eq((len(dumps), readable, held_once), (1, True, True))
            by_line = _equations_in(base64.b64decode(dumps[0]))
            top = sorted(by_line.values())
            assert top[-1] >= top[-2] + 2, by_line
            _eq(max(by_line, key=by_line.get), answer)

    def one_class(run):
        _eq(run.probe("one_class"), [True, True, True])

    def traced_bound(run):
        import base64

        by_line, unnamed, dumps, first, outer = run.probe("traced_bound")
        _eq((outer, unnamed, len(dumps)), ("while", ["add", "lt"], 1))
        tan_line, loop_line, body_line = first + 1, first + 2, first - 3  # the lines of `_bounded` and `_one_op`
        _eq(by_line, {str(tan_line): 2, str(loop_line): 1, str(body_line): 1})
        _eq(_equations_in(base64.b64decode(dumps[0])), {tan_line: 2, loop_line: 3, body_line: 1})

    return [
        Claim(a, "in JAX 0.12 the two names are one class, and a jaxpr's `.jaxpr` is the jaxpr itself, so either test finds every jaxpr",
              one_class),
        Claim(a, "every equation carries its source in `eqn.source_info`, and `jax.extend.source_info_util.summarize` turns it into text, `\"file:line:column (function)\"` (or `\"file:line (function)\"` when the column is 0): the innermost frame outside JAX's own code, which is the line that ran the operation.",
              summarize_format),
        Claim(a, "For the outer `jit` equation `summarize` names no line (an empty string): `make_jaxpr` was handed `unrolled` itself, and no line of this notebook ran that equation.",
              worked_lines),
        Claim(a, "The equations inside it all belong to the loop's body in the read-only cell, every copy to the same line, at two columns: where `0.5 * x` and `jnp.sin(x)` begin.",
              worked_lines),
        Claim(a, "an equation it names no line for (an empty string: a few equations JAX adds for its own bookkeeping) belongs to no line;",
              bookkeeping),
        Claim(a, "The graders call it on plain (not jitted) functions of their own, written in a file of their own (so their line numbers are that file's, and `inspect.getsource(fn)` can show you one)",
              dump_agrees),
        Claim(a, "On these functions the result is the line the dump would put first", dump_agrees),
        Claim(a, "every loop bound in them is a number written in the code, never a traced value.",
              lambda run: _eq(run.probe("literal_bounds"), True)),
        Claim(a, "A `lax.fori_loop` whose bound is traced becomes a `while` loop with a counter: a comparison `lt` and an increment `add`, for which `summarize` names no line, while the dump gives both to the line that calls `fori_loop`.",
              traced_bound),
        Claim(a, "`summarize` puts the first line ahead (2 against 1) and the dump puts the loop's line ahead (3 against 2).",
              traced_bound),
        Claim(a, "None of them holds the same sub-jaxpr twice, so whether to count a repeated one again does not arise here",
              dump_agrees),
        Claim(a, "Three equations per step (`mul`, `sin`, `add`): 9 at 3 steps, 90 at 30 steps.", counts),
        Claim(a, "A total such as 90 says how big the program is, not which line made it big.", dump_by_line),
        Claim(a, "JAX itself writes a file for every program it lowers for XLA, a profile that counts the program's equations by the Python line that created them.",
              lambda run: (dump_file(run), dump_by_line(run))),
        Claim(a, "the cell below writes the dump for 30 steps without it.", dump_file),
        Claim(a, "One file, `jax_<n>_unrolled.eqn_count_pprof`, where `<n>` counts the programs this process has dumped: a gzip-compressed pprof profile whose samples count equations, each sample tied to the Python line that created them.",
              lambda run: (dump_file(run), dump_by_line(run))),
        Claim(a, "`pprof -top -lines` on it would list 90 equations on one line, the loop's body `x = 0.5 * x + jnp.sin(x)`: the line that made the program big.",
              dump_by_line),
        Claim(a, "so a call that finds its program already compiled writes nothing (which is why the cell clears `unrolled`'s cache first), and an eager operation run while dumping is on writes a file of its own.",
              dump_cached_eager),
        Claim(a, "Run eagerly, each leaf goes through three small programs of JAX's own, `true_divide`, `round` and `multiply`, and each is traced and compiled again for every new leaf shape.",
              lambda run: _eq(run.probe("eager_programs"), [["true_divide", "round", "multiply"] * 2,
                                                            ["jit(true_divide)", "jit(round)", "jit(multiply)"] * 2])),
        Claim(a, "the jaxpr must not grow with the step count: at no step count may it hold more equations than at 1 step.",
              lambda run: _eq(len(set(run.probe("remainder")["reference"])), 1)),
        Claim(a, "A jaxpr whose size rises and falls with `steps % k` (a scan over blocks of `k` steps, and a Python loop for the remaining `steps % k`) fails as soon as some step count gives more equations than 1 step does: with `k` of 3 or more, 2 steps already do.",
              remainder),
        Claim(a, "the scan equation shows `k` as its `unroll` parameter (`unroll=True` shows as the number of steps).",
              lambda run: _eq(run.probe("unroll_param"), [["scan", 8, 40], ["scan", 40, 40]])),
        Claim(a, "In the graders' programs a parameter holding several jaxprs is always a tuple, never a list: opening tuples is enough, and opening lists as well does no harm.",
              lambda run: (_eq(run.probe("cond_tuple")[0], "tuple"), _eq(run.probe("cond_tuple")[1], run.probe("cond_tuple")[2]))),
        Claim(a, "a function that calls `jax.jit(f)` afresh on every call, around the same top-level `f`, is accepted too, because jit's cache is keyed on the wrapped function and finds the program already compiled.",
              lambda run: _eq(run.probe("rewrap_quantise")[0], 1)),
        Claim(a, "A `lambda`, `functools.partial` or inner `def` made inside the call is a new function every time, and compiles again.",
              lambda run: _eq(run.probe("rewrap_quantise")[1], 3)),
        Claim(a, "on a CPU a division that runs as a program of its own, eagerly (the `true_divide` of `quantise`) or jitted alone, is computed as a multiplication by the reciprocal, while one jitted program that divides and then rounds divides exactly.",
              division, device="cpu"),
        Claim(a, "Notice what a *top-level* count says about a jitted function: always 1.", counts),
        Claim(a, "it shows one `div`, `round` and `mul` per leaf", lambda run: _eq(run.probe("quantise_jaxpr")[:3], [3, 3, 3])),
        Claim(a, "beside a `convert_element_type` of a Python-float `scale` before each",
              lambda run: _eq(run.probe("quantise_jaxpr")[3], 6)),
        Claim(a, "So `count_equations(unrolled_3, x)` for `unrolled_3 = lambda v: unrolled(v, 3)` is 1 + 9 = 10.",
              lambda run: _eq(run.probe("count10"), 10)),
        Claim(a, "`fori_loop` with a traced bound becomes a `while` loop, and `jax.grad` through it raises `ValueError`", grad),
        Claim(a, "With `steps` static, `fori_loop` becomes a `scan`, which `jax.grad` can differentiate", grad),
        Claim(a, "`lax.while_loop` is accepted too: its equation is a `while`.",
              lambda run: _eq(run.probe("while_loop"), ["while"])),
        Claim(a, "Only a quotient within about one float32 unit in the last place of a half, when `scale` is not a power of two, may round either way",
              lambda run: (_eq(run.probe("rounding_window")[0], True), _le(run.probe("rounding_window")[1], 1.0)), device="cpu"),
        Claim(a, "That window grows with the quotient; the graders' leaves hold values within ±100 and their scales are at least `0.1`, so quotients are at most 1000, where it is under `1e-3`",
              lambda run: (_le(run.probe("rounding_window")[2], 1e-3), _le(1e-3, run.probe("rounding_window")[3]))),
        Claim(a, "(`0.25 / 0.5 = 0.5` rounds to `0`, `0.75 / 0.5 = 1.5` to `2`), and `jnp.floor(q + 0.5)` is not the same.",
              lambda run: _eq(run.probe("round"), [0.0, 2.0, 1.0])),
    ]


def _explanations(out: str) -> list[str]:
    return ["TRACING CACHE MISS" + part for part in out.split("TRACING CACHE MISS")[1:]]


def _cache_misses_claims():
    a = "cache_misses"

    def three_misses(run):
        texts = _explanations(run.output("def doubled_total(x):"))
        _eq(len(texts), 3)
        _eq(["never seen function" in t for t in texts], [True, True, True])
        _eq(["re-defined repeatedly" in t for t in texts], [False, True, True])

    def one_miss(run):
        out = run.output("def doubled_total_fixed(x):")
        assert out.startswith("1 explanation(s):"), out
        _eq(len(_explanations(out)), 1)

    def each_step(run):
        texts = _explanations(run.output("def weigh(x, s, k=1):"))
        _eq(len(texts), 6)
        assert "never seen function" in texts[0], texts[0]
        _eq(texts[1].strip().splitlines()[-1].strip(), "cache miss explanation unavailable")
        assert "* at x, now i32[3] and before f32[3]" in texts[2], texts[2]
        assert "* at x, now f32[5] and before f32[3]" in texts[3], texts[3]
        assert "* at s, now f32[]{weak_type=False} and before f32[]{weak_type=True}" in texts[4], texts[4]
        assert "different input pytree" in texts[5] and "different input types" not in texts[5], texts[5]
        _eq([len([ln for ln in t.splitlines() if ln.strip().startswith("* at")]) for t in texts[2:]], [1, 1, 1, 2])
        assert not any("Static(" in t for t in texts), texts

    def link_last(run):
        texts = run.probe("link_last")
        lines = texts[-1].rstrip().splitlines()
        assert "weak_type" in lines[-2] and "weak-types" not in lines[-2], lines
        assert lines[-1].startswith("  * at v, now f32[4] and before f32[3]https://"), lines

    def eager(run):
        names, texts = run.probe("eager_unexplained")
        _eq((names, texts), (["sin"], []))

    def context(run):
        texts = run.probe("context")
        assert len(texts) == 1 and "Tracing context doesn't match" in texts[0], texts

    def static_hidden(run):
        last = run.probe("static_hidden")[-1]
        _eq([ln.strip() for ln in last.splitlines() if "* at" in ln], ["* at x, now f32[5] and before f32[3]"])
        assert "unavailable" not in last and "Static(" not in last, last

    def static_unlisted(run):
        """A static value alone, twice: unavailable both times, never listed."""
        texts = run.probe("static_alone")
        _eq(len(texts), 3)
        _eq([t.strip().splitlines()[-1].strip() for t in texts[1:]], ["cache miss explanation unavailable"] * 2)
        assert not any("Static(" in t or "k=" in t or "val=" in t for t in texts), texts

    def false_positive(run):
        texts = _explanations(run.output("def summarise(x):"))
        _eq(len(texts), 2)
        sites = [t.splitlines()[0] for t in texts]
        _eq(sites[0], sites[1])
        _eq(["never seen function" in t for t in texts], [True, True])
        assert "total_of" in texts[0] and "largest_of" in texts[1], texts
        _eq(["re-defined repeatedly" in t for t in texts], [False, True])

    def same_ids(run):
        texts = _explanations(run.output("def doubled_total(x):"))
        ids = [re.search(r"id=(\d+)", t)[1] for t in texts]
        _eq(len(set(ids)), 1)
        kept = run.probe("kept_alive")
        _eq(kept[:2], [3, 3])  # three lambdas kept alive: three misses at three addresses

    def debug_tier(run):
        types_too, tree_too = run.probe("debug_tier")
        # debug info differs (traced for checkpoint, not jit) and so do the shapes: debug info comes first
        # (the first explanation of each is the new jit of the checkpointed function, never seen)
        assert "Debug info doesn't match" in types_too[-1], types_too
        assert "different input types" not in types_too[-1], types_too
        # debug info differs and so does the pytree: the pytree comes first
        assert "different input pytree" in tree_too[-1], tree_too

    def three_forms(run):
        texts = _explanations(run.output("def weigh(x, s, k=1):"))[1:]
        forms = ("different input types", "different input pytree", "cache miss explanation unavailable")
        _eq([sum(form in t for form in forms) for t in texts], [1] * len(texts))
        _eq({form for t in texts for form in forms if form in t}, set(forms))
        context(run)

    return [
        Claim(a, "Three calls with the very same `x`, three misses.", three_misses),
        Claim(a, "From the second call on, JAX adds that it has seen *another function defined on the same line*", three_misses),
        Claim(a, "One miss, the first call's, and none after.", one_miss),
        Claim(a, "Each call below changes one thing about an earlier call, and JAX's explanation compares it with a call that differs in that one thing only:", each_step),
        Claim(a, "right after the last listed line with no space, so it follows the weak-type marker only when that line is last.", link_last),
        Claim(a, "`jnp.sin(x)` at a new shape traces, and logs nothing.", eager),
        Claim(a, "and the tracing configuration in force at the call (the *tracing context*, such as `jax.default_matmul_precision`).", context),
        Claim(a, "For every cause in this notebook that is not a new function (those say *never seen function*, as above) it says one of three things; JAX has a few more for other causes, such as *Tracing context doesn't match* for a changed configuration and *Debug info doesn't match* when the same function is traced for another transformation (`jax.checkpoint` tracing a function that `jit` traced before, for example).",
              lambda run: (three_forms(run), debug_tier(run))),
        Claim(a, "the key JAX picked differs from the call only in something JAX does not list. For the functions in this notebook that is a static argument's value: the JAX this course uses (0.12) keeps static values in its cache key but leaves them out of its explanations.",
              lambda run: (static_unlisted(run), each_step(run))),
        Claim(a, "JAX finds the first kind of difference in a fixed order (the tracing context; then the pytree of the arguments; then the *debug info*, what JAX records about the function and what it was traced for; then the types of the arguments; last, a difference it cannot list)",
              lambda run: (context(run), static_hidden(run), debug_tier(run))),
        Claim(a, "JAX adds it whenever a function it has never seen is called from a call site (the place it names after *TRACING CACHE MISS at*) where an earlier never-seen function was explained in this process; a miss made while explanations were off leaves no such memory.",
              lambda run: (three_misses(run), false_positive(run), _eq(run.probe("flag_off_first"), [False, True]))),
        Claim(a, "So the first miss at a call site never carries it, and two different functions, each built once and kept, get it too when one line calls both",
              false_positive),
        Claim(a, "`largest_of` is defined once, on a line of its own, and never re-defined, yet its first miss carries the remark: `total_of` missed at the same call site just before.",
              false_positive),
        Claim(a, "Call `summarise(x)` again and nothing traces, since both programs are cached.",
              lambda run: _eq(run.probe("summarise_again"), [])),
        Claim(a, "The three `id=` values are equal, yet the three lambdas are three different objects.", same_ids),
        Claim(a, "Each lambda is freed once its call returns, and Python reuses the freed memory for the next one, so each new lambda gets the same `id()`.",
              same_ids),
        Claim(a, "JAX's cache does not key on `id()`: it holds the functions it has seen weakly (it does not keep them alive) and compares the function objects themselves, so a new lambda at an old address is still a function it has never seen.",
              lambda run: (same_ids(run), three_misses(run), _eq(run.probe("kept_alive")[2], True))),
        Claim(a, "this names JAX's guess, so return it whenever the remark is there, even for two functions built once and called from one line",
              lambda run: _eq(run.probe("guess_named"), ["new function", "redefined function"])),
        Claim(a, "A jitted function called inside a function JAX is already tracing is part of that trace and is not noted on its own.",
              lambda run: _eq(run.probe("nested_jit"), ["_outer_once"])),
        Claim(a, "JAX emits a monitoring event each time it starts a top-level trace (a jitted function traced inside another trace emits none).",
              lambda run: _eq(run.probe("nested_jit"), ["_outer_once"])),
        Claim(a, "The event is not proof that the function's Python ran: " + _NOT_PROOF.format(verb="emits"), _TRACE_EVENT_TEXT),
        Claim(a, "after calls at `f32[3]` and `f32[5]`, both with `k=1`, a call at `f32[5]` with `k=2` is explained as `now f32[5] and before f32[3]`, a new shape, though only `k` is new.",
              static_hidden),
        Claim(a, "which is how this JAX reports a change in a static value alone.", static_unlisted, where="source"),
        Claim(a, "So after calls at `f32[3]` and `i32[3]`, a call at `i32[5]` is explained as `now i32[5] and before f32[3]`, which reads like a new dtype.",
              lambda run: _eq([ln.strip() for ln in run.probe("tie_by_text")[-1].splitlines() if "* at" in ln],
                              ["* at x, now i32[5] and before f32[3]"])),
        Claim(a, "for example *Tracing context doesn't match* when a setting such as `jax.default_matmul_precision` differs from the key JAX picked.", context),
        Claim(a, "but only the first time an operation meets a signature: a repeat at a signature already met emits nothing.",
              lambda run: _eq(len(run.probe("eager_once")), 1)),
    ]


def _branch_repair_claims():
    a = "branch_repair"

    def vmapped(run):
        names, div_shapes = run.probe("vmap_jaxpr")
        assert "cond" not in names and "select_n" in names, names
        _eq(div_shapes, ["(2, 3)"])

    def rows(run):
        out = [ln.split() for ln in run.output("print(gain, float(repaired(x8, gain))").splitlines()]
        _eq([row[1:] for row in out], [["28.0", "28.0"], ["28.0", "28.0"], ["140.0", "140.0"]])

    return [
        Claim(a, "A function traced inside another trace, such as a branch of a `lax.cond` in a jitted function, is part of that trace and is not counted on its own.",
              lambda run: _eq(run.probe("branches_not_counted"), ["halve_if_large"])),
        Claim(a, "JAX emits a monitoring event each time it starts a top-level trace, named after the function traced (a jitted function traced inside another trace emits none).", lambda run: _eq(run.probe("nested_jit"), ["_outer_once"])),
        Claim(a, "The event is not proof that the function's Python ran: " + _NOT_PROOF.format(verb="emits"), _TRACE_EVENT_TEXT),
        Claim(a, "`nan > 1.0` is false, so a nan gain takes the plain sum too.",
              lambda run: _eq(run.probe("gain_edges")[:2], [28.0, 28.0])),
        Claim(a, "(A Python float above 1.0 by no more than half that step, about `6e-8`, such as `1.00000001`, becomes `1.0` when `jit` makes it a float32",
              lambda run: _eq(run.probe("gain_edges")[2:], [140.0, 28.0, 140.0, 140.0, 28.0])),
        Claim(a, "Its jaxpr shows a single `cond` equation that carries both branches",
              lambda run: _eq(run.probe("cond_jaxpr"), [1, 2])),
        Claim(a, "under `jax.vmap` with a batched predicate it turns into a select and runs both", vmapped),
        Claim(a, "no `cond` equation, a `div` that runs for every element, and `select_n` equations.", vmapped),
        Claim(a, "the gradient of `jnp.where(t > 0, t, jnp.sqrt(-t))` at `t = 2.0` is `nan`, from the square root of `-2.0` that the value never uses.",
              _where_gradient_is_nan),
        Claim(a, "`jax.lax.cond(t > 0, lambda u: u, lambda u: jnp.sqrt(-u), t)` differentiates only the branch it ran: its gradient there is `1.0`.",
              _cond_gradient_is_one),
        Claim(a, "a gain of `0.5` should give `28.0` and a gain of `2.0` should give `140.0`",
              lambda run: _eq(run.output("print(broken_branch(x8, 0.5), broken_branch(x8, 2.0))").split(), ["28.0", "140.0"])),
        Claim(a, "Under `jax.jit` it stops with `TracerBoolConversionError`",
              lambda run: _eq(run.output("jax.jit(broken_branch)(x8, jnp.float32(2.0))").split(":")[-1].strip(),
                              "TracerBoolConversionError")),
        Claim(a, "Each row should print the same number twice: `28.0`, `28.0`, `140.0`.", rows),
        Claim(a, "every distinct gain becomes its own program, and a gain held in a JAX array is no longer accepted at all.",
              lambda run: _ne(run.probe("static_array_gain"), "accepted")),
        Claim(a, "where the side not taken overflows to `inf`, `0 * inf` is `nan`.", lambda run: assert_nan(run.probe("blend_nan"))),
    ]


def _static_max_mode_claims():
    a = "static_max_mode"

    def ledger(run):
        out = run.output("jitted_square_total = jax.jit(square_total)").splitlines()
        _eq([_fields(ln)["traces"] for ln in out], ["1", "0", "1"])

    def weak(run):
        out = run.output("def scaled_total(values, scale):").splitlines()
        _eq(out[0], "traces: 2")
        assert out[1].startswith("~float32[] weak: True | float32[] weak: False"), out[1]

    # Part C (sort the arguments yourself): checked here, in the test's process, on the notebook's own `normalise`.
    def part_c():
        import jax
        import jax.numpy as jnp
        import numpy as np

        namespace = {"jnp": jnp}
        exec(run_part_c_source[0], namespace)
        return jax, jnp, np, namespace["normalise"]

    run_part_c_source = []

    def with_normalise(check):
        def claim(run):
            cell = [c for c in run.cells.values() if c["code"].startswith("def normalise(x, mode, n_iter, eps, clip_at):")]
            _eq(len(cell), 1)
            run_part_c_source[:] = [cell[0]["code"].split("\n\n\nsignal")[0]]
            check(run, *part_c())
        return claim

    def plain_jit_raises(run, jax, jnp, np, normalise):
        signal = jnp.array([3.0, -1.0, 4.0, 1.0, -5.0])
        try:
            jax.jit(normalise)(signal, "max", 2, 0.5, 0.6)
            got = "no error"
        except TypeError:
            got = "TypeError"
        _eq([got, round(float(normalise(signal, "max", 2, 0.5, 0.6)[3]), 5)], ["TypeError", 0.6])

    def array_static_refused(run, jax, jnp, np, normalise):
        f = jax.jit(lambda x, eps: x + eps, static_argnums=(1,))
        eps = jnp.float32(0.1)
        _eq([jax.typeof(eps).shape, str(eps.dtype)], [(), "float32"])
        try:
            f(jnp.ones(3), eps)
            got = "accepted"
        except ValueError as error:
            got = "hashable" in str(error)
        _eq(got, True)

    return [
        Claim(a, "`jax.jit(choose_reduction)` alone is refused on its first call: read the error, and what it suggests.",
              lambda run: _eq(run.probe("jit_refuses_a_str_mode"), True)),
        Claim(a, "The value change cost nothing; the new length cost one trace.", ledger),
        Claim(a, "A jitted function called inside a function JAX is already tracing is part of that trace and is not noted on its own.", lambda run: _eq(run.probe("nested_jit"), ["_outer_once"])),
        Claim(a, "JAX emits a monitoring event each time it starts a top-level trace, named after the function traced (a jitted function traced inside another trace emits none).", lambda run: _eq(run.probe("nested_jit"), ["_outer_once"])),
        Claim(a, "The event is not proof that the function's Python ran: " + _NOT_PROOF.format(verb="emits"), _TRACE_EVENT_TEXT),
        Claim(a, "Here `power` is static, so Python sees an actual integer and may branch on it, and each power produces its own jaxpr.",
              lambda run: assert_startswith(run.output("def power_sum(values, power):").splitlines()[-1], "traces: 2 ")),
        Claim(a, "Calling `compiled_power_sum(three, 3)` positionally after calling it with `power=3` is a different cache key, and it traces again.",
              lambda run: _eq(run.probe("positional_after_keyword"), 2)),
        Claim(a, "The two hold the same number but are different signatures, so switching from one to the other traces again.", weak),
        Claim(a, "`jnp.full(3, 0.)` (filled from a Python float) is weakly typed, `jnp.zeros(3, jnp.float32)` is not.",
              lambda run: _eq(run.probe("weak_arrays"), [True, False])),
        Claim(a, "the string is refused before the helper even runs: `jit` turns every array or number among its arguments into a tracer (it opens containers such as tuples and dicts, and keeps `None` as structure), and a `str` is none of these, so it raises a `TypeError`.",
              lambda run: _eq(run.probe("string_refused"), ["TypeError", 0, 3.0])),
        Claim(a, "You should see `-7.0`, about `-2.33` and `-1.0`.",
              lambda run: _eq([round(float(ln.split()[1]), 2) for ln in run.output("negatives = jnp.array").splitlines()],
                              [-7.0, -2.33, -1.0])),
        Claim(a, "Called eagerly it works. Wrapped as it is, `jax.jit(normalise)(signal, \"max\", 2, 0.5, 0.6)` raises before computing anything",
              with_normalise(plain_jit_raises)),
        Claim(a, "as 0-d float32 arrays (`jnp.float32(0.1)`)", with_normalise(array_static_refused)),
        Claim(a, "the mean of the `int32` array `[1, 2]` is `1.5`, a floating-point number, never `1`.",
              lambda run: _eq(run.probe("integer_mean"), [1.5, 1.5, True])),
        Claim(a, "The graders stage your function with `jax.make_jaxpr`, `x` traced and the other arguments passed as they are (`static_argnums=(1, 2, 3, 4)`); a function that reads `x` back raises there instead of showing one program.",
              lambda run: _eq(run.probe("host_decision_staged"), ["raised", "staged"])),
    ]


def _where_gradient_is_nan(run):
    """The `where_cond` probe: `jnp.where(t > 0, t, jnp.sqrt(-t))` at 2 has the value 2 and a `nan`
    gradient, eagerly and jitted (the square root of -2 the value never uses)."""
    found = run.probe("where_cond")
    _eq(found[0], 2.0)
    assert_nan(found[1])
    assert_nan(found[4])


def _cond_gradient_is_one(run):
    """The `where_cond` probe: the same function with `lax.cond` has the value 2 and gradient 1, eagerly and
    jitted: `cond` differentiates only the branch it ran."""
    found = run.probe("where_cond")
    _eq(found[2:4] + [found[5]], [2.0, 1.0, 1.0])


def assert_startswith(text, start):
    assert text.startswith(start), f"{text!r} does not start with {start!r}"


def _ledger_extension_claims():
    a = "ledger_extension"

    def rows(run):
        out = run.output("def centered_norm(x):").splitlines()
        _eq([_fields(ln)["traced"] for ln in out], ["True", "False", "True", "True"])

    def phases(run):
        out = run.output('("trace only: compiled_norm.trace(fresh)"').splitlines()
        _eq([ln.rsplit("traced=", 1)[1] for ln in out[:4]], ["True", "False", "False", "True"])

    def experiments(run):
        out = run.output("print(\"leaves:\", len(leaves)").splitlines()
        _eq([ln.rsplit(" ", 1)[1] for ln in out[2:]], ["False", "True"])
        assert out[2].startswith("new values") and out[3].startswith("new shape"), out

    def powered_ledger(run):
        rows = [ast.literal_eval(line) for line in run.output("powered_rows, signatures_met = [], set()").splitlines()]
        _eq([(r["label"], r["static"], r["traced"], r["predicted"]) for r in rows],
            [("first call", {"power": 2}, True, True), ("new values", {"power": 2}, False, False),
             ("new power only", {"power": 3}, True, True), ("first call again", {"power": 2}, False, False)])

    return [
        Claim(a, "Only the change of `power` traced: a static value is part of the signature, so each new one is a program of its own, and going back to `power=2` found the first program still cached.",
              powered_ledger),
        Claim(a, "Watch which rows move it.", rows),
        Claim(a, "A jitted function called inside a function JAX is already tracing is part of that trace and is not noted on its own.", lambda run: _eq(run.probe("nested_jit"), ["_outer_once"])),
        Claim(a, "JAX emits a monitoring event each time it starts a top-level trace, named after the function traced (a jitted function traced inside another trace emits none).", lambda run: _eq(run.probe("nested_jit"), ["_outer_once"])),
        Claim(a, "The event is not proof that the function's Python ran: " + _NOT_PROOF.format(verb="emits"), _TRACE_EVENT_TEXT),
        Claim(a, "The answers agree and neither loop traces (the cell traced and compiled `accumulate` before timing), so any difference in time comes from the reads: each `float(total)` waits for the device to finish that step and then converts the value to a Python float. Tracing plays no part.",
              lambda run: _eq(run.probe("timed_loops"), [0, True])),
        Claim(a, "The next call at that signature compiles (slowly) but does not trace again; a cached call does neither.", phases),
        Claim(a, "`jitted.trace(x)` at a new signature traces without compiling (at a signature already traced it runs no Python and compiles nothing).",
              _kept_jaxpr("trace_at_new", "trace_at_traced")),
        Claim(a, "JAX's trace event (what `TraceWatch` hears) is not the same as the function's Python running. After another jitted function's `.clear_cache()` (Part C's `traced_again` calls one), a `.trace()` or a call with a committed array, at a signature already traced, fires the event again while the function's Python does not run.",
              lambda run: (_TRACE_EVENT_TEXT(run), _eq("compiled_powered_sum.clear_cache()" in next(
                  c["code"] for c in run.cells.values() if c["code"].startswith("power_log = ")), True))),
        Claim(a, "Any direct call of the jitted function, or `jax.clear_caches()`, changes what the next call does.", phases),
        Claim(a, "a converted scale or a keyword argument is another signature and the row would describe another call.",
              lambda run: _eq(run.probe("call_forms"), [1, 1, 1, 0])),
        Claim(a, "a call whose signature JAX has met reuses that program, any other call traces.", experiments),
        Claim(a, "JAX runs with 64-bit types off (its default), so a NumPy float64 value, such as `np.array(2.0)`, reaches the program as float32.",
              lambda run: _eq(run.probe("setting_facts")[:3], [False, "float32[]", False])),
        Claim(a, "the order in which keyword arguments, or a dict's keys, are written does not matter: JAX sorts a dict's keys, and the keyword arguments by name, before it looks a call up.",
              lambda run: _eq(run.probe("setting_facts")[3:], [False, False, "PyTreeDef({'a': *, 'b': *})",
                                                               ["float32[3]", "int32[3]"]])),
        Claim(a, "New values alone did not trace; the new shape did.", experiments),
        Claim(a, "Two tools show what JAX sees of the arguments, and neither traces anything.",
              lambda run: _eq(run.probe("signature_tools")[0], 0)),
        Claim(a, "`jax.typeof(v)` gives the type JAX gives a value: its dtype and shape, written like `float32[3]`, with a `~` in front when the type is weak.",
              lambda run: _eq(run.probe("signature_tools")[1], ["float32[5]", "~float32[]"])),
        Claim(a, "`jax.tree.flatten(tree)` returns the leaves of a pytree and its structure, a `PyTreeDef` that prints the containers and compares equal for equal structures.",
              lambda run: _eq(run.probe("signature_tools")[2:] + [run.line("print(\"leaves:\", len(leaves)", "leaves:")],
                              ["PyTreeDef", True, "PyTreeDef({'p': *, 'q': [*]})",
                               "leaves: 3 | structure: PyTreeDef({'a': (*, *), 'b': *})"])),
        Claim(a, "the same number in the other form is a new signature, so the call traces at a shape and dtype it has seen.",
              lambda run: _eq(run.output('("trace only: compiled_norm.trace(fresh)"').splitlines()[-1],
                              "traces for a weak, then a strong scale: 2")),
    ]


_COMPILE_LOG_PHASES = """
def _phase_records(step):
    fn = jax.jit(lambda v, s: jnp.tanh(v * s))
    text = compile_log_of(lambda: step(fn))
    return [kind for kind, words in (("trace", "Finished tracing"), ("lower", "Compiling jit("),
                                     ("compile", "Finished XLA compilation")) if words in text]

_xs = [jax.device_put(np.linspace(0.0, 1.0, n, dtype=np.float32)) for n in (21, 22, 23)]
_records = [_phase_records(lambda f: f.trace(_xs[0], 0.5)),
            _phase_records(lambda f: f.trace(_xs[0], 0.5).lower()),
            _phase_records(lambda f: f.lower(_xs[0], 0.5)),
            _phase_records(lambda f: f.lower(_xs[0], 0.5).compile())]
_kept = jax.jit(lambda v, s: jnp.tanh(v * s))
_kept.lower(_xs[1], 0.5)
_later = compile_log_of(lambda: _kept(_xs[1], 0.5))
_levels = []

class _Level(logging.Handler):
    def emit(self, record):
        _levels.append((record.levelname, record.name.split(".")[0]))

_jax_logger = logging.getLogger("jax")
_level = _Level()
_jax_logger.addHandler(_level)
try:
    with jax.log_compiles(True):
        jax.jit(lambda v: v + 1.0)(_xs[2])
finally:
    _jax_logger.removeHandler(_level)
result = [_records, [w in _later for w in ("Finished tracing", "Compiling jit(", "Finished XLA compilation")],
          sorted(set(_levels))]
"""
PROBES["compile_log"] = {"phases": _COMPILE_LOG_PHASES}


def _compile_log_claims():
    a = "compile_log"

    def phases(run):
        records, later, levels = run.probe("phases")
        _eq(records, [["trace"], ["trace", "lower"], ["trace", "lower"], ["trace", "lower", "compile"]])
        _eq(later, [False, False, True])

    return [
        Claim(a, "`f.trace(x)` traces, `f.trace(x).lower()` (or `f.lower(x)`) lowers, and `.compile()` on what `lower` returned compiles.", phases),
        Claim(a, "JAX keeps what each phase made, and a later call reuses what it can.", phases),
        Claim(a, "It writes them through Python's standard `logging` module, at the level of a warning (`WARNING`).",
              lambda run: _eq(run.probe("phases")[2], [["WARNING", "jax"]])),
    ]


CLAIMS = (_host_sync_claims() + _padded_masking_claims() + _loops_claims() + _cache_misses_claims()
          + _branch_repair_claims() + _static_max_mode_claims() + _ledger_extension_claims() + _compile_log_claims())


# --------------------------------------------------------------------------- the tests


def _needed(session) -> list[str]:
    """The notebooks the selected tests of this module look at."""
    needed = set()
    for item in session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "claim" in params:
            needed.add(params["claim"].assignment)
        elif params.get("assignment") in ASSIGNMENTS and item.module.__name__ == __name__:
            needed.add(params["assignment"])
    return sorted(needed)


@pytest.fixture(scope="session")
def runs(request) -> dict[str, Run]:
    """Every release notebook a selected test needs, run once, two processes at a time."""
    needed = _needed(request.session)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(needed, pool.map(_run_in_a_process, needed)))
    return {a: Run(a, {int(k): v for k, v in r["cells"].items()}, r["probes"]) for a, r in results.items()}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_cell_runs_with_the_reference_solutions(assignment, runs):
    """A worked example or self-check that raises cannot back what the prose says of it."""
    failed = {i: c["error"] for i, c in runs[assignment].cells.items() if c["error"]}
    assert not failed, f"{assignment}: cells that raised with the reference solutions: {failed}"


def test_a_sentence_marked_for_the_cpu_is_in_a_paragraph_that_says_so():
    """A claim marked ``device="cpu"`` quotes a paragraph that tells the student it holds on a CPU."""
    for claim in CLAIMS:
        if claim.device != "cpu":
            continue
        nb = nbformat.read(REPO / claim.where / claim.assignment / f"{claim.assignment}.ipynb", as_version=4)
        paragraphs = [para for cell in nb.cells if cell.cell_type == "markdown"
                      for para in re.split(r"\n\s*\n", cell.source) if _norm(claim.sentence) in _norm(para)]
        assert paragraphs and all("CPU" in para for para in paragraphs), claim.id


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_claim_holds(claim: Claim, runs):
    text = _notebook_text(claim.assignment, claim.where)
    assert _norm(claim.sentence) in text, (
        f"{claim.where}/{claim.assignment}: the sentence “{claim.sentence}” is no longer in the notebook; "
        "update this claim with the prose")
    if claim.device == "cpu" and PLATFORM != "cpu":
        pytest.skip(f"the notebook says this holds on a CPU; the claims run on {PLATFORM}")
    try:
        claim.check(runs[claim.assignment])
    except AssertionError as failure:
        raise AssertionError(
            f"{claim.where}/{claim.assignment}: the sentence “{claim.sentence}” does not hold on "
            f"JAX {_jax_version()}: {failure}") from None


def _jax_version() -> str:
    from importlib.metadata import version

    return version("jax")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_notebook_notices_a_jax_other_than_the_pinned_one(assignment):
    """The first code cell of each release notebook names the JAX the course pins (pyproject.toml), and prints
    a notice only when the student's differs (issue 54): on the pinned JAX it prints nothing."""
    import tomllib

    pins = [r for r in tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
            if r.replace(" ", "").startswith("jax==")]
    assert len(pins) == 1, pins
    pinned = pins[0].split("==", 1)[1].strip()
    first = _code_cells(assignment)[0][1]
    named = re.findall(r'^COURSE_JAX = "([^"]+)"', first, re.MULTILINE)
    assert named == [pinned], f"release/{assignment}: the first code cell names {named}, the course pins jax {pinned}"
    assert "if jax.__version__ != COURSE_JAX:" in first, first
    for version, prints in ((pinned, False), ("0.0.1", True)):
        import jax

        out = io.StringIO()
        real = jax.__version__
        try:
            jax.__version__ = version
            with contextlib.redirect_stdout(out):
                exec(compile(first, f"<{assignment} first cell>", "exec"), {"__name__": "__main__"})
        finally:
            jax.__version__ = real
        assert bool(out.getvalue()) == prints, (version, out.getvalue())
        assert not prints or (pinned in out.getvalue() and "0.0.1" in out.getvalue()), out.getvalue()


# --- the eqn_count_pprof dump loops describes ---------------------------------------------------

_PPROF_SENTENCE = ("(or, before JAX starts, the environment variables `JAX_DUMP_IR_TO` and `JAX_DUMP_IR_MODES`), JAX itself "
                   "writes a file for every program it lowers for XLA, a profile that counts the program's equations by "
                   "the Python line that created them.")

_PPROF_RUN = """
import sys
import jax
import jax.numpy as jnp
import functools
source = sys.stdin.read()
exec(compile(source, "slow_functions", "exec"))
unrolled(jnp.array([0.5, 1.0, 2.0], dtype=jnp.float32), 30)
"""


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _proto_fields(data: bytes):
    """(field, wire type, value) of one protobuf message, enough for a pprof profile."""
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            size, i = _varint(data, i)
            value, i = data[i:i + size], i + size
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        else:
            value, i = data[i:i + 4], i + 4
        yield field, wire, value


def _ints(value, wire) -> list[int]:
    if wire == 0:
        return [value]
    out, i = [], 0
    while i < len(value):
        number, i = _varint(value, i)
        out.append(number)
    return out


def _equations_by_line(path: Path) -> dict[int, int]:
    """Sum of the sample values of a gzipped pprof profile file, by source line."""
    return _equations_in(path.read_bytes())


def _equations_in(gzipped: bytes) -> dict[int, int]:
    """Sum of the sample values of a gzipped pprof profile, by source line."""
    import gzip

    profile = gzip.decompress(gzipped)
    samples, lines = [], {}
    for field, wire, value in _proto_fields(profile):
        if field == 2:  # Sample: location ids, values
            ids, values = [], []
            for f, w, v in _proto_fields(value):
                ids += _ints(v, w) if f == 1 else []
                values += _ints(v, w) if f == 2 else []
            samples.append((ids, values))
        elif field == 4:  # Location: id, lines
            parts = list(_proto_fields(value))
            location = next(v for f, _, v in parts if f == 1)
            lines[location] = [dict((f, v) for f, _, v in _proto_fields(v)).get(2) for f, _, v in parts if f == 4]
    totals: dict[int, int] = {}
    for ids, values in samples:
        for line in lines[ids[0]][:1]:
            totals[line] = totals.get(line, 0) + values[0]
    return totals


def test_eqn_count_pprof_counts_the_unrolled_loop_by_line(tmp_path):
    assert _norm(_PPROF_SENTENCE) in _notebook_text("loops", "release"), "the eqn_count_pprof sentence changed"
    cell = next(code for _, code in _code_cells("loops") if "def unrolled(x, steps):" in code)
    env = dict(os.environ, JAX_PLATFORMS="cpu", JAX_DUMP_IR_TO=str(tmp_path), JAX_DUMP_IR_MODES="eqn_count_pprof")
    subprocess.run([sys.executable, "-c", _PPROF_RUN], input=cell, text=True, env=env, check=True, timeout=120)
    dumps = list(tmp_path.glob("*unrolled*.eqn_count_pprof"))
    assert len(dumps) == 1, sorted(p.name for p in tmp_path.iterdir())
    body_line = 1 + next(i for i, line in enumerate(cell.splitlines()) if "x = 0.5 * x + jnp.sin(x)" in line)
    by_line = _equations_by_line(dumps[0])
    assert by_line == {body_line: 90}, (
        f"release/loops: the sentence “{_PPROF_SENTENCE}” does not hold: the dump counts {by_line}, "
        f"not 90 equations on the loop's body line {body_line}")


# --- compile_log: the sample log the notebook shows ----------------------------------------------

_SAMPLE_RUN = r"""
import io, logging, jax, jax.numpy as jnp
print("option before:", jax.config.jax_log_compiles)
kept = io.StringIO()
handler = logging.StreamHandler(kept)
jax_logger = logging.getLogger("jax")
jax_logger.addHandler(handler)
jax_logger.propagate = False
with jax.log_compiles(True):
    exec(compile(SAMPLE, "<sample>", "exec"))
print(kept.getvalue(), end="")
"""


def test_the_compile_log_sample_is_what_jax_writes():
    """compile_log shows the log JAX 0.12 wrote for a short session "in a fresh process" with the option on
    ("off unless you turn it on"): run the notebook's own code in a fresh process and compare record by record,
    the durations aside."""
    text = "\n".join(c.source for c in nbformat.read(REPO / "release" / "compile_log" / "compile_log.ipynb",
                                                       as_version=4).cells if c.cell_type == "markdown")
    assert "off unless you turn it on" in text and "in a fresh process on JAX 0.12.0.1" in _norm(text)
    code = re.search(r"```python\n(.*?)```", text, re.DOTALL).group(1)
    shown = re.search(r"```text\n(.*?)```", text, re.DOTALL).group(1).splitlines()
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", f"SAMPLE = {code!r}\n" + _SAMPLE_RUN], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    first, *written = proc.stdout.splitlines()
    assert first == "option before: False"
    durations = re.compile(r" in \d+\.\d+ sec$")
    assert [durations.sub(" in _ sec", line) for line in written] == [durations.sub(" in _ sec", line) for line in shown]


# --- the README's learning goals ---------------------------------------------------------------


def _goal_rows():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Learning goals"):]
    section = section[:section.index("\n## ", 1)]
    return [[c.strip() for c in line.split("|")[1:-1]] for line in section.splitlines() if line.startswith("| 00")]


def _declared_fails(path: Path) -> set[str]:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "FAILS":
            return set(ast.literal_eval(node.value))
    raise AssertionError(f"{path} declares no FAILS")


def test_each_graded_goal_is_held_by_a_misconception_its_properties_kill():
    rows = _goal_rows()
    assert len(rows) >= 15, rows
    for seed, goal, notebooks, graded, mutants, _ in rows:
        if graded.startswith(("taught, not graded", "not taught")):
            assert mutants == "—", (goal, mutants)
            continue
        listed = {n.strip(" `") for n in graded.split(",")}
        killed: set[str] = set()
        for name in (m.strip(" `") for m in mutants.split(",")):
            path = REPO / "tests" / "corpus" / f"{name}.py"
            assert path.is_file(), f"goal “{goal}”: no corpus submission {name}"
            fails = _declared_fails(path)
            assert fails & listed, f"goal “{goal}”: {name} fails none of {sorted(listed)} (it fails {sorted(fails)})"
            killed |= fails
        assert listed <= killed, (
            f"goal “{goal}”: {sorted(listed - killed)} fail for none of the misconceptions named ({mutants})")


def test_each_graded_goal_names_a_mutant_of_the_reference_its_properties_kill():
    """The last column: mutants of the reference (``python -m autograder mutants``) written with the
    goal's misconception, each killed, in the record beside the property module, by a listed property
    (``check`` holds the records to the notebook and the graders as they are now)."""
    named = 0
    for seed, goal, notebooks, graded, _, mutants in _goal_rows():
        if graded.startswith(("taught, not graded", "not taught")) or mutants.startswith("—"):
            assert not graded.startswith(("taught", "not taught")) or mutants == "—", (goal, mutants)
            continue
        listed = {n.strip(" `") for n in graded.split(",")}
        for item in (m.strip(" `") for m in mutants.split(",")):
            assignment, mutant = (part.strip() for part in item.split(":"))
            record = json.loads((REPO / "autograder" / "properties" / f"{assignment}.mutants.json").read_text())
            assert mutant in record["killed"], f"goal “{goal}”: {item} is not a killed mutant of the reference"
            failed = {name.split("/")[-1] for name in record["killed"][mutant]["failed"]}
            assert failed & listed, f"goal “{goal}”: {item} is killed by {sorted(failed)}, none of {sorted(listed)}"
            named += 1
    assert named >= 10, named


# --- python tests/test_claims.py ASSIGNMENT [--json] -------------------------------------------

if __name__ == "__main__":
    result = _run_here(sys.argv[1])
    if "--json" in sys.argv:
        print(_MARKER + json.dumps(result))
    else:
        for i, cell in result["cells"].items():
            print(f"--- cell {i}\n{cell['out']}", end="")
            if cell["error"]:
                print(f"RAISED {cell['error']}")
        for name, probe in result["probes"].items():
            print(f"--- probe {name}: {probe}")
