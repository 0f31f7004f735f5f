"""Host-read evidence: which device values a loop brings back to Python, and how.

On the CPU backend ``jax.transfer_guard_device_to_host("disallow")`` never fires, so
the guard cannot see a host read. Two probes together do:

* :class:`HostReads` counts, while active, every conversion of a ``jax.Array`` to a
  Python or NumPy value made through the array's own methods (``float``, ``int``,
  ``bool``, ``.item()``, ``.tolist()``, ``format``/f-strings, ``str``/``repr``/``print``,
  ``__array__`` and so ``jax.device_get``, ``__dlpack__``, pickling, ``._value``): it
  wraps those methods of JAX's ``ArrayImpl`` class for the duration of the block,
  counts only the outermost conversion (``float`` reaching ``_value`` is one read), and
  restores them after. Conversions made inside its own :meth:`HostReads.read` are the
  counted reads, not bypasses.
* NumPy reads a CPU array through the buffer protocol (``np.asarray``, ``np.array``,
  ``np.float32(x)``, ``np.mean(x)``), a C slot no Python patch reaches. For those,
  :func:`conversion_under_trace` runs the loop once more with the starting parameters
  as a tracer (under ``jax.make_jaxpr``): every value the loop computes from them is a
  tracer then, and converting a tracer to a concrete value raises. ``read`` gives back
  zeros of the right shape in that run.

Waits are counted too: the ``block_until_ready`` method, the C++ function through which
``jax.block_until_ready`` waits for several arrays at once (looked up where JAX calls it, so an
alias taken with ``from jax import block_until_ready`` is seen as well), and ``is_ready`` (a loop
that polls it waits all the same). None brings a value to Python, but each makes the loop wait
for the device, which is what a hidden per-step read costs.

Limits: a conversion through JAX's private C++ methods (``x._arrays[0]...``) is seen by
neither probe; ``print`` of a tracer does not raise, so it is the first probe's to see.
"""

from __future__ import annotations

import os

import jax
import numpy as np

from autograder.grading.results import CallRaised, PropertyFailure
from autograder.kit import observing

_JAX_FOLDER = os.path.dirname(jax.__file__) + os.sep

#: The methods of ``ArrayImpl`` through which Python code turns a device array into a host value.
CONVERSIONS = (
    "_value", "__float__", "__int__", "__bool__", "__index__", "__complex__", "__array__", "item", "tolist",
    "tobytes", "__format__", "__repr__", "__str__", "__dlpack__", "__reduce__",
    "block_until_ready",  # no value reaches Python, but the loop waits for the device all the same
    "is_ready",  # polled in a loop, a wait by another name
)

#: In plain words, for feedback.
_SPOKEN = {
    "_value": "reading `._value`", "__float__": "`float(...)`", "__int__": "`int(...)`",
    "__bool__": "a truth test (`if`, `bool`, a comparison used as a condition)", "__index__": "use as an index",
    "__complex__": "`complex(...)`", "__array__": "`np.asarray`/`jax.device_get`", "item": "`.item()`",
    "tolist": "`.tolist()`", "tobytes": "`.tobytes()`", "__format__": "formatting (an f-string or `format`)",
    "__repr__": "`repr` (printing a container of arrays)", "__str__": "`str`/`print`",
    "__dlpack__": "`np.from_dlpack`", "__reduce__": "pickling",
    "block_until_ready": "`.block_until_ready()` (a wait for the device, even without a value)",
    "jax.block_until_ready": "`jax.block_until_ready(...)` (a wait for the device, even without a value)",
    "is_ready": "`.is_ready()` (polling the device until a result is done)",
}

#: The C++ function ``jax.block_until_ready`` waits through for several arrays at once, and the
#: module JAX calls it from (looked up there at each call).
_BATCHED_WAIT = "batched_block_until_ready"


def _wait_module():
    from jax._src.lib import xla_client

    return xla_client


def _array_class():
    from jax._src.array import ArrayImpl

    return ArrayImpl


def spoken(method: str) -> str:
    return _SPOKEN.get(method, f"`{method}`")


class HostReads:
    """Counts host reads while active: those through :meth:`read` and those around it.

    >>> with HostReads() as reads:
    ...     trainer(theta, batches, lr, reads.read)
    >>> reads.read_calls, reads.bypasses
    """

    def __init__(self):
        self.read_calls = 0
        self.bypasses: list[str] = []  # the method of each conversion made outside `read`
        self._depth = 0
        self._active = False
        self._originals: dict[str, object] = {}
        self._patches: dict[str, object] = {}

    def read(self, value):
        """The one host read a loop may make: a device array (or a list of them) to a Python float
        (for a single number) or a NumPy array."""
        self.read_calls += 1
        self._depth += 1
        try:
            if isinstance(value, (list, tuple)):
                host = np.asarray([np.asarray(v) for v in value])
            else:
                host = np.asarray(value)
        finally:
            self._depth -= 1
        return host.item() if host.ndim == 0 else host  # a Python float for one number

    def _wrap(self, method: str, fn):
        reads = self

        def counted(*args, **kwargs):
            if reads._active and reads._depth == 0:
                reads.bypasses.append(method)
            reads._depth += 1
            try:
                return fn(*args, **kwargs)
            finally:
                reads._depth -= 1

        counted.__name__ = counted.__qualname__ = method  # a C++ method has no wrappable metadata
        counted.__doc__ = getattr(fn, "__doc__", None)
        return counted

    #: What :mod:`autograder.kit.observing` calls this observation.
    KIND = "host reads"

    def report(self) -> dict:
        """What was counted here, for a :class:`HostReads` in another process."""
        return {"read_calls": self.read_calls, "bypasses": list(self.bypasses)}

    def absorb(self, report: dict) -> None:
        """The reads counted in the process that ran the student's code (its :meth:`report`)."""
        calls, bypasses = report.get("read_calls", 0), report.get("bypasses", [])
        if type(calls) is not int or not 0 <= calls <= 100_000 or not isinstance(bypasses, list):
            raise ValueError("not a report of host reads")
        self.read_calls += calls
        self.bypasses.extend(str(method)[:100] for method in bypasses[:100_000])

    def __enter__(self) -> "HostReads":
        self._here = observing.here()
        if not self._here:
            observing.opened(self)
            return self  # the student's code runs elsewhere: counted there, taken in by absorb()
        cls = _array_class()
        for method in CONVERSIONS:
            original = cls.__dict__.get(method)
            if original is None:
                continue
            fn = original.fget if isinstance(original, property) else original
            code = getattr(fn, "__code__", None)
            native = code is None and type(fn).__name__ == "nb_method"  # a method of jaxlib's C++ class
            if not native and (code is None or not code.co_filename.startswith(_JAX_FOLDER)):
                raise PropertyFailure(
                    f"Tampering: `jax.Array`'s `{method}` is not JAX's own any more (the notebook replaced it), "
                    "so host reads cannot be counted."
                )
            patch = property(self._wrap(method, fn)) if isinstance(original, property) else self._wrap(method, fn)
            self._originals[method] = original
            self._patches[method] = patch
        module = _wait_module()
        self._wait_original = getattr(module, _BATCHED_WAIT, None)
        code = getattr(self._wait_original, "__code__", None)  # jaxlib's is C++, with no Python code
        if code is not None and not code.co_filename.startswith(_JAX_FOLDER):
            raise PropertyFailure(
                "Tampering: JAX's wait for several arrays is not JAX's own any more (the notebook replaced it), so "
                "waits for the device cannot be counted."
            )
        self._wait_patch = None
        if self._wait_original is not None:
            self._wait_patch = self._wrap("jax.block_until_ready", self._wait_original)
            setattr(module, _BATCHED_WAIT, self._wait_patch)
        for method, patch in self._patches.items():
            setattr(cls, method, patch)
        self._active = True
        observing.opened(self)
        return self

    def __exit__(self, *exc) -> None:
        observing.closed(self)
        if not self._here:
            return
        self._active = False
        cls = _array_class()
        replaced = [m for m, patch in self._patches.items() if cls.__dict__.get(m) is not patch]
        if self._wait_patch is not None:
            module = _wait_module()
            if getattr(module, _BATCHED_WAIT, None) is not self._wait_patch:
                replaced.append("jax.block_until_ready")
            setattr(module, _BATCHED_WAIT, self._wait_original)
        for method, original in self._originals.items():
            setattr(cls, method, original)
        restored = all(cls.__dict__.get(m) is original for m, original in self._originals.items())
        if (replaced or not restored) and exc[0] is None:
            raise PropertyFailure(
                "Tampering: the notebook's code replaced `jax.Array`'s conversion methods while the grader "
                f"watched them ({', '.join(f'`{m}`' for m in replaced) or 'they could not be restored'}), so "
                "its host reads cannot be counted."
            )


def placeholder_read(value):
    """``read`` in the traced run: zeros of the value's shape (the values are not known there)."""
    if isinstance(value, (list, tuple)):
        return np.zeros((len(value),) + tuple(np.shape(value[0]) if value else ()), np.float32)
    shape = tuple(getattr(value, "shape", ()))
    return 0.0 if shape == () else np.zeros(shape, np.float32)


#: What JAX raises when Python code asks a tracer for a concrete value.
_CONVERSION_ERRORS = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerArrayConversionError,
    jax.errors.TracerIntegerConversionError,
)


def conversion_under_trace(submission, name: str, theta, *rest) -> CallRaised | None:
    """Call ``name(theta, *rest, read)`` once with ``theta`` a tracer (under ``jax.make_jaxpr``,
    the rest passed as they are) and a ``read`` that returns zeros (:func:`placeholder_read`).

    Returns the failure of a call that asked a value computed from ``theta`` for its
    concrete value (a host read outside ``read``), else None. Any other error is not
    evidence of a read (some code does not run under tracing at all), so it gives None.
    """
    try:
        submission.call_staged("make_jaxpr", name, theta, *rest, placeholder_read,
                               static_argnums=tuple(range(1, len(rest) + 2)))
    except CallRaised as failure:
        return failure if issubclass(failure.error_type, _CONVERSION_ERRORS) else None
    return None
