"""The values a kernel and its judge exchange: JSON lines, never pickles.

The judge (:mod:`autograder.grading.judge`, in nbgrader's process) sends a kernel the
arguments of each call of a student's function; the kernel (:mod:`autograder.grading.serve`)
sends back what the call returned. Arrays travel as dtype, shape, weak type and raw bytes,
so a JAX array arrives as a JAX array of the same type (``signature_of`` and ``render.kind``
see what they saw in the kernel); numbers, strings, ``None`` and containers of them travel
as themselves, and so does a dtype; a jaxpr travels as its outline (:mod:`autograder.kit.jaxprs`);
anything else arrives as a :class:`~autograder.grading.render.Described` value, its kind and
rendering as the kernel saw them (cut to 300 characters), and its ``hash()`` where it has one.

The other way, the judge may also hand the student's code what it built of its own: a function
made from a description (:mod:`autograder.kit.programs`), a compiled program or a thunk
(:mod:`autograder.kit.handed`), and the ``read`` of the kernel's
:class:`~autograder.kit.host_reads.HostReads` (or its placeholder). Only the kernel decodes those
(:class:`Handing`): the judge builds nothing from what a kernel sends.

Whatever the kernel sends is data: decoding it builds only arrays, numbers, strings and
containers, within fixed bounds of size and depth, and anything else is an error
(:class:`WireError`), which the judge reports as the kernel's fault.
"""

from __future__ import annotations

import base64
import json
import math
import types

import numpy as np

from autograder.grading import render
from autograder.kit import handed as handed_kit
from autograder.kit import host_reads, jaxprs, programs

#: dtypes an array may have on the wire (names, as ``numpy.dtype(...).name`` gives them).
DTYPES = frozenset({
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "bfloat16", "complex64", "complex128",
})
MAX_BYTES = 16 * 2**20  # one array; a larger result is described, not sent
MAX_LINE = 32 * 2**20  # one message: the largest array, in base64 (4/3 of MAX_BYTES), and room around it
#: JSON values and containers in one message, counted before it is parsed: what the parse of a line of
#: ``[{},{},...]`` costs grows with this (about 100 bytes each), not with the line's length. A reply the
#: serving side builds holds a few per array and per event; a message past this is not one it built.
MAX_VALUES = 2**20
MAX_DEPTH = 16
MAX_ITEMS = 10_000


def jax_versions() -> dict[str, str]:
    """This process's jax and jaxlib: a kernel says them when it connects, and the judge names a
    kernel whose JAX is not its own (what a call traces and compiles can differ between versions)."""
    import jax
    import jaxlib

    return {"jax": str(jax.__version__), "jaxlib": str(getattr(jaxlib, "__version__", "?"))}


class WireError(ValueError):
    """A message that is not what the protocol allows."""


def _is_jax_array(x) -> bool:
    return type(x).__module__.startswith(("jax", "jaxlib")) and hasattr(x, "dtype") and hasattr(x, "shape")


def _dtype(name: str):
    if name not in DTYPES:
        raise WireError(f"dtype {name!r} cannot travel")
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


class Handing:
    """The kernel's side of what a judge hands over in one request: the ``read`` of the host-read
    observation open for the call, and the objects decoded that report back (thunks)."""

    def __init__(self, read=None):
        self.read = read
        self.made: list = []


def encode(x, depth: int = 0, handed: list | None = None):
    """A JSON-able form of ``x`` (see the module doc); whatever ``x`` does when looked at.

    ``handed`` is the judge's: with it, what the judge hands over travels as such, and the thunks
    met on the way are appended to it, in the order the kernel will meet them. Without it (a
    kernel's result), a thunk or a read the student's code sends back is only described."""
    try:
        return _encode(x, depth, handed)
    except Exception:  # noqa: BLE001 - a student's object may raise anything from any attribute
        return {"t": "described", "kind": "an object that cannot be looked at", "text": "?"}


def _encode_handed(x, handed: list):
    """The wire form of what a judge hands over, or None if ``x`` is none of that."""
    if isinstance(x, handed_kit.Compiled):
        return {"t": "compiled", "data": x.serialized(), "parameters": list(x.parameters)}
    if isinstance(x, handed_kit.Thunk):
        handed.append(x)
        return {"t": "thunk", **x.to_data()}
    if getattr(x, "__func__", None) is host_reads.HostReads.read:
        return {"t": "read"}
    if x is host_reads.placeholder_read:
        return {"t": "placeholder read"}
    if type(x) is types.FunctionType and isinstance(getattr(x, "program", None), tuple):
        parts, arity = x.program
        return {"t": "program", "parts": programs.checked(parts), "arity": arity}
    if type(x) is types.FunctionType and isinstance(getattr(x, "listing", None), tuple):
        return {"t": "listing", "blocks": programs.checked_blocks(x.listing)}
    return None


def _encode(x, depth: int, handed: list | None = None):
    if depth > MAX_DEPTH:
        return _described(x)
    if x is None or isinstance(x, (bool, str)):
        return x
    if type(x) is int:
        return x if abs(x) < 2**53 else {"t": "int", "v": str(x)}
    if type(x) is float:
        return x if math.isfinite(x) else {"t": "float", "v": repr(x)}
    if isinstance(x, (np.ndarray, np.generic)) or _is_jax_array(x):
        return _encode_array(x)
    if isinstance(x, np.dtype) and x.name in DTYPES:
        return {"t": "dtype", "name": x.name}
    handed_form = None if handed is None else _encode_handed(x, handed)
    if handed_form is not None:
        return handed_form
    if jaxprs.is_jaxpr(x):
        try:
            return {"t": "jaxpr", "eqns": jaxprs.outline(x)}
        except jaxprs.OutlineError:
            return _described(x)
    if type(x) in (list, tuple) and len(x) <= MAX_ITEMS:
        return {"t": type(x).__name__, "v": [encode(v, depth + 1, handed) for v in x]}
    if type(x) is dict and len(x) <= MAX_ITEMS and all(type(k) in (str, int) for k in x):
        return {"t": "dict", "v": [[encode(k), encode(v, depth + 1, handed)] for k, v in x.items()]}
    return _described(x)


def _encode_array(x):
    try:
        array = np.asarray(x)
    except Exception:  # noqa: BLE001 - a deleted buffer, a tracer that leaked out of a trace
        return _described(x)
    if array.dtype.name not in DTYPES or array.nbytes > MAX_BYTES:
        return _described(x)
    kind = "jax" if _is_jax_array(x) else ("np" if isinstance(x, np.ndarray) else "scalar")
    weak = bool(getattr(getattr(x, "aval", None), "weak_type", False))
    return {"t": kind, "dtype": array.dtype.name, "shape": list(array.shape), "weak": weak,
            "data": base64.b64encode(np.ascontiguousarray(array).tobytes()).decode("ascii")}


def _described(x):
    try:
        kind, text = render.kind(x), render.value(x)
    except Exception:  # noqa: BLE001 - a student object's repr may raise anything
        kind = text = f"a {type(x).__name__} object"
    described = {"t": "described", "kind": kind[:300], "text": text[:300]}
    try:  # equal objects hash equal: what lets the judge compare two it cannot see whole
        described["hash"] = str(int(hash(x)))
    except Exception:  # noqa: BLE001 - unhashable, or a hash that raises
        pass
    return described


#: Tags only a kernel decodes (:class:`Handing`): what the judge hands over.
_HANDED_TAGS = frozenset({"compiled", "thunk", "read", "placeholder read", "program", "listing"})


def decode(x, depth: int = 0, handing: Handing | None = None):
    """The value :func:`encode` encoded; :class:`WireError` for anything else. What a judge hands
    over is decoded only with ``handing`` (in a kernel)."""
    if depth > MAX_DEPTH:
        raise WireError("nested too deeply")
    if x is None or isinstance(x, (bool, str, int, float)):
        return x
    if not isinstance(x, dict):
        raise WireError(f"unexpected {type(x).__name__}")
    tag = x.get("t")
    if tag == "int":
        return int(str(x["v"])[:400])
    if tag == "float":
        return float(str(x["v"]))
    if tag in ("list", "tuple"):
        items = _items(x)
        values = [decode(v, depth + 1, handing) for v in items]
        return values if tag == "list" else tuple(values)
    if tag == "dict":
        pairs = _items(x)
        if not all(isinstance(p, list) and len(p) == 2 and type(p[0]) in (str, int) for p in pairs):
            raise WireError("a dict's keys must be strings or integers")
        return {k: decode(v, depth + 1, handing) for k, v in pairs}
    if tag in ("jax", "np", "scalar"):
        return _decode_array(x, tag)
    if tag == "dtype":
        return _dtype(str(x.get("name")))
    if tag == "jaxpr":
        try:
            return jaxprs.from_outline(x.get("eqns"))
        except jaxprs.OutlineError as error:
            raise WireError(str(error)) from None
    if tag in _HANDED_TAGS:
        if handing is None:
            raise WireError(f"a {tag} is handed to a kernel, never sent by one")
        return _decode_handed(x, tag, handing)
    if tag == "described":
        hashed = x.get("hash")
        hashed = int(hashed) if isinstance(hashed, str) and len(hashed) <= 24 and hashed.lstrip("-").isdigit() else None
        return render.Described(str(x.get("kind", ""))[:300], str(x.get("text", ""))[:300], hashed)
    raise WireError(f"unknown tag {tag!r}")


def _decode_handed(x, tag: str, handing: Handing):
    try:
        if tag == "program":
            return programs.program(x.get("parts"), x.get("arity"))
        if tag == "listing":
            fn = programs.listing(x.get("blocks"))
            del fn.listing  # the description would name the heaviest line; the notebook reads the program
            return fn
        if tag == "compiled":
            return handed_kit.Compiled.from_serialized(str(x.get("data", "")), x.get("parameters"))
        if tag == "thunk":
            thunk = handed_kit.Thunk.from_data(x)
            handing.made.append(thunk)
            return thunk.handed()
    except (programs.ProgramError, handed_kit.HandedError, ValueError) as error:
        raise WireError(f"a {tag} that cannot be rebuilt: {error}") from None
    if tag == "placeholder read":
        return host_reads.placeholder_read
    if handing.read is None:
        raise WireError("a read handed over with no host reads observed")
    return handing.read


def _items(x) -> list:
    items = x.get("v")
    if not isinstance(items, list) or len(items) > MAX_ITEMS:
        raise WireError("a container must be a list of at most MAX_ITEMS values")
    return items


def _decode_array(x, tag: str):
    dtype = _dtype(str(x.get("dtype")))
    shape = x.get("shape")
    if not isinstance(shape, list) or len(shape) > 8 or not all(type(d) is int and 0 <= d for d in shape):
        raise WireError("an array's shape must be a list of sizes")
    data = base64.b64decode(str(x.get("data", "")), validate=True)
    if len(data) != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize or len(data) > MAX_BYTES:
        raise WireError("an array's bytes do not match its shape and dtype")
    array = np.frombuffer(data, dtype=dtype).reshape(shape).copy()
    if tag == "np":
        return array
    if tag == "scalar":
        return array[()]
    import jax
    from jax._src.lax import lax as _lax

    result = jax.device_put(array)
    return _lax._convert_element_type(result, weak_type=True) if x.get("weak") else result


def dumps(message: dict) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n"


def loads(line: bytes) -> dict:
    """A message, parsed within a memory bound: at most :data:`MAX_LINE` bytes and :data:`MAX_VALUES`
    values (an upper bound, counted from the separators and brackets, strings included)."""
    if len(line) > MAX_LINE:
        raise WireError("message too long")
    if sum(line.count(mark) for mark in (b",", b":", b"[", b"{")) > MAX_VALUES:
        raise WireError("a message must hold at most MAX_VALUES values")
    try:
        message = json.loads(line)
    except (UnicodeDecodeError, ValueError) as error:
        raise WireError(f"not JSON: {error}") from None
    if not isinstance(message, dict):
        raise WireError("a message must be an object")
    return message
