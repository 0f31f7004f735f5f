"""Tamper evidence: the objects grading relies on, compared with what they were
before any student code ran.

``record_baseline()`` runs when the grading kernel starts (``autograder.confinement.sandbox``).
Before each group, :func:`tampered` names every protected object a notebook has
replaced since: a patched ``jax.jit``, a faked ``jax.monitoring``, a rebound builtin,
a substitute module in ``sys.modules``, and any global, class attribute or function
code of the grading package itself (a ``GroupReport.earned`` that always says full
marks, say). A kernel started without the sandbox (a student's own Jupyter, the
project's tests) records its baseline at first import.

Limit: the check itself runs in the notebook's process, so code written against
this module's internals can still disarm it; that is in docs/threat-model.md.
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import sys

#: (module, attribute) pairs whose identity grading depends on.
_PROTECTED = {
    "jax": ("jit", "device_put", "make_jaxpr", "clear_caches"),
    "jax.monitoring": (
        "register_event_duration_secs_listener",
        "unregister_event_duration_listener",
        "record_event_duration_secs",
        "clear_event_listeners",
    ),
    "jax._src.monitoring": ("record_event_duration_secs", "_event_duration_secs_listeners"),
    "jax.numpy": ("asarray", "array", "sum", "where"),
    "numpy": ("asarray", "array", "sum", "mean", "max", "isclose", "array_equal", "issubdtype", "ndim"),
    "numpy.testing": ("assert_allclose", "assert_array_equal"),
    "hypothesis": ("given", "settings", "example"),
    "math": ("isclose", "isfinite", "isnan"),
}
#: Builtins grading calls. (Jupyter swaps ``input`` and adds ``display`` on every
#: execution, so the whole builtins namespace cannot be compared.)
_BUILTINS = (
    "__import__", "abs", "all", "any", "bool", "callable", "compile", "dict", "enumerate", "exec", "float",
    "getattr", "hasattr", "id", "int", "isinstance", "issubclass", "iter", "len", "list", "max", "min", "next",
    "print", "range", "repr", "round", "set", "sorted", "str", "sum", "tuple", "type", "vars", "zip",
)
_MODULES = ("autograder", "autograder.grading.grade", "autograder.kit.traces", "autograder.kit.checks", "jax", "jax.numpy",
            "jax.monitoring", "numpy", "numpy.testing", "hypothesis", "math", "builtins")

#: Globals of the grading package that change after the baseline, by design: this module's record, and
#: the state of a process that starts grading kernels (its fork server, its kernels' sockets, where they
#: compute), which nothing in a kernel reads. A process that both starts kernels and grades in-process
#: (the course's tests, one module after another in one worker) changes them between two groups.
_CHANGING = frozenset({
    "autograder.grading.integrity._baseline",
    *(f"autograder.confinement.kernel_manager.{name}"
      for name in ("_server", "_no_server", "_server_started_for", "_announced", "_sockets_root")),
    "autograder.grading.backend._chosen",
})

_baseline: dict[str, object] | None = None


def _functions_of(value) -> list:
    if isinstance(value, property):
        return [value.fget, value.fset, value.fdel]
    if isinstance(value, (staticmethod, classmethod)):
        return [value.__func__]
    return [value]


def _grader_state() -> dict[str, object]:
    """Each global of the grading package's modules, each attribute of its classes, and
    the code and defaults of each of their functions."""
    seen: dict[str, object] = {}
    for name, module in list(sys.modules.items()):
        if name != "autograder" and not name.startswith("autograder."):
            continue
        for key, value in list(vars(module).items()):
            where = f"{name}.{key}"
            if key.startswith("__") or where in _CHANGING:
                continue
            members = [(where, value)]
            if isinstance(value, type) and value.__module__ == name:
                members += [(f"{where}.{attr}", member) for attr, member in vars(value).items()]
            for label, member in members:
                seen[label] = member
                for fn in _functions_of(member):
                    if inspect.isfunction(fn):
                        seen[f"{label}.__code__"] = fn.__code__
                        seen[f"{label}.__defaults__"] = fn.__defaults__
                        seen[f"{label}.__kwdefaults__"] = fn.__kwdefaults__
    return seen


def _current() -> dict[str, object]:
    seen: dict[str, object] = {}
    for name in _MODULES:
        seen[f"sys.modules[{name!r}]"] = sys.modules.get(name)
    for module_name, attributes in _PROTECTED.items():
        module = sys.modules.get(module_name) or importlib.import_module(module_name)
        for attribute in attributes:
            seen[f"{module_name}.{attribute}"] = getattr(module, attribute, None)
    for name in _BUILTINS:
        seen[f"builtins.{name}"] = getattr(builtins, name, None)
    seen.update(_grader_state())
    return seen


def record_baseline() -> None:
    """Remember the genuine objects; later calls keep the first record."""
    global _baseline
    if _baseline is None:
        for name in _PROTECTED:
            importlib.import_module(name)
        _baseline = _current()


def tampered() -> list[str]:
    """Names of protected objects replaced since the baseline, in a stable order."""
    record_baseline()
    now = _current()
    return sorted(name for name, original in _baseline.items() if now.get(name) is not original)
