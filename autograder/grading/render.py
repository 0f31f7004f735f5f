"""Plain-words renderings of the values a property shows a student."""

from __future__ import annotations

import inspect
import re

import numpy as np

_MAX_ELEMENTS = 12
#: A memory address in a repr or a message: it would make feedback differ between runs.
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


class Described:
    """A value known only by how it was described where it lives (a student's object in the
    kernel, seen from the judge): :func:`kind` and :func:`value` give those words back."""

    def __init__(self, kind: str, text: str, hashed: int | None = None):
        #: ``hash()`` of the object where it lives, when it has one: two objects whose descriptions are
        #: cut to the same words still tell apart by it, and equal ones share it.
        self.kind, self.text, self.hashed = kind, text, hashed

    def __repr__(self) -> str:
        return self.text


def value(x) -> str:
    """Render an argument or a result: arrays with dtype and shape, then their values."""
    if isinstance(x, Described):
        return x.text
    if isinstance(x, (bool, int, float, str, type(None))):
        return repr(x)
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {value(v)}" for k, v in x.items()) + "}"
    if isinstance(x, (tuple, list)) and not _is_array(x):
        inner = ", ".join(value(v) for v in x)
        if isinstance(x, tuple):
            return f"({inner},)" if len(x) == 1 else f"({inner})"
        return f"[{inner}]"
    if _is_array(x):
        try:
            array = np.asarray(x)
        except Exception:  # noqa: BLE001 - a tracer has a shape and a dtype but no values
            return f"a traced {x.dtype}[{','.join(str(d) for d in x.shape)}]"
        kind = f"{array.dtype}[{','.join(str(d) for d in array.shape)}]"
        if array.size == 0:
            return f"{kind} (empty)"
        flatten = array.ndim > 1 and array.size > _MAX_ELEMENTS
        shown = np.array2string(
            array.ravel()[:_MAX_ELEMENTS] if flatten else array,
            precision=6,
            separator=", ",
            threshold=_MAX_ELEMENTS,
            edgeitems=4,
            max_line_width=10_000,
            formatter={"float_kind": _number, "int_kind": str, "bool": str},
        ).replace("\n", "")
        return f"{kind} {shown}{' ...' if flatten else ''}"
    text = ADDRESS.sub("", repr(x))
    return text if len(text) <= 80 else text[:77] + "..."


def call(name: str, args=(), kwargs=None) -> str:
    """Render a call as the student would write it, with rendered arguments."""
    parts = [value(a) for a in args]
    parts += [f"{k}={value(v)}" for k, v in (kwargs or {}).items()]
    return f"{name}({', '.join(parts)})"


def kind(x) -> str:
    """A short description of what a value is, for 'returned the wrong kind of thing'."""
    if isinstance(x, Described):
        return x.kind
    if _is_array(x):
        array = np.asarray(x)
        return f"an array of dtype {array.dtype} and shape {array.shape}"
    if inspect.isfunction(x):
        return "a plain Python function"
    if callable(x) and not isinstance(x, type):
        return f"a callable {type(x).__name__} object"
    return f"a {type(x).__name__} ({value(x)})"


def _number(v) -> str:
    text = f"{float(v):.7g}"
    return text + ".0" if text.lstrip("-").isdigit() else text


def _is_array(x) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype")
