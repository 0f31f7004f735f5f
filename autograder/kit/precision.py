"""What float32 precision the grading backend delivers: the one definition every numerical comparison
of the graders uses (:func:`autograder.kit.checks.close`, the property modules' own closers through
:func:`allclose` and :func:`widened`).

The measurement is the released self-check's own (:func:`autograder.public.runner.measure_precision`:
one jitted function over a small grid, the course's transcendental functions and a default-precision
matrix product against float64 NumPy), so students and graders allow for the same thing. Here it is
taken on the platform the course chose (:mod:`autograder.grading.backend`) and on this process's own
default device, the worse of the two, once per process: never on anything a kernel reports.

The rule (docs/accelerators.md): a tolerance is today's, widened by :data:`PROPAGATION` times the
backend's error beyond :data:`BASELINE` (4 float32 ulp), elementwise, plus the matrix products' for
a value that went through matrix products (``products=True``). On a CPU the excess is 0 and every
tolerance is exactly what it was.
"""

from __future__ import annotations

import logging
import threading

import numpy as np

from autograder.grading import backend
from autograder.public.runner import BASELINE, PROPAGATION, ULP, Precision, measure_precision

__all__ = ["BASELINE", "PROPAGATION", "ULP", "Precision", "allclose", "excess", "measured", "widened"]

log = logging.getLogger(__name__)

_lock = threading.Lock()
_MEASURED: dict = {}
#: Set by a test (or a caller that knows better) in place of the measurement.
_override: Precision | None = None


def measured() -> Precision:
    """The precision the graders allow for here, measured once per process and device."""
    if _override is not None:
        return _override
    with _lock:
        found = []
        for device in backend.devices():
            key = (device.platform, device.id)
            if key not in _MEASURED:
                try:
                    _MEASURED[key] = measure_precision(device)
                except Exception as error:  # noqa: BLE001 - a probe that cannot run keeps a CPU's tolerances
                    log.warning("autograder: could not measure float32 precision on %s (%s: %s); tolerances "
                                "are a CPU's", device, type(error).__name__, error)
                    _MEASURED[key] = Precision(0.0, 0.0, f"not measured: {type(error).__name__}")
            found.append(_MEASURED[key])
    return Precision(max(p.elementwise for p in found), max(p.products for p in found),
                     " and ".join(p.where for p in found))


def excess(products: bool = False) -> float:
    """What every tolerance gains here (:meth:`Precision.excess`): 0 on a CPU."""
    return measured().excess(products)


def widened(rtol: float, atol: float, products: bool = False) -> tuple[float, float]:
    """``(rtol, atol)`` widened by this backend's excess; a zero tolerance (exact by contract) stays zero."""
    if rtol == 0 and atol == 0:
        return rtol, atol
    extra = excess(products)
    return rtol + extra, atol + extra


def allclose(got, expected, rtol: float, atol: float, products: bool = False, equal_nan: bool = False) -> bool:
    """``np.allclose`` with today's ``rtol`` and ``atol``, else with them :func:`widened`: on a CPU
    exactly ``np.allclose(got, expected, rtol, atol)``."""
    if np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return True
    wider_rtol, wider_atol = widened(rtol, atol, products)
    if (wider_rtol, wider_atol) == (rtol, atol):
        return False
    return bool(np.allclose(got, expected, rtol=wider_rtol, atol=wider_atol, equal_nan=equal_nan))
