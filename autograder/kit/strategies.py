"""Bounded hypothesis strategies: every new shape costs a compile, so shapes come
from a small fixed set while values range freely."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

#: Shapes a grader draws from: one element, a short vector, a 2-D block.
SHAPES = ((1,), (3,), (2, 3))

#: Values students' code must handle: negatives, zeros, ties, fractions.
_FLOAT32 = st.floats(min_value=-1000.0, max_value=1000.0, allow_nan=False, allow_infinity=False, width=32)


def float32_values(shapes=SHAPES) -> st.SearchStrategy[np.ndarray]:
    """float32 NumPy arrays of one of ``shapes``, finite, ties and negatives included."""
    return st.sampled_from(shapes).flatmap(lambda shape: hnp.arrays(np.float32, shape, elements=_FLOAT32))


def vectors(length: int, dtype=np.float32, bound: float = 1000.0) -> st.SearchStrategy[np.ndarray]:
    """1-D arrays of exactly ``length`` elements of ``dtype``, within +-bound."""
    if np.issubdtype(dtype, np.integer):
        elements = st.integers(min_value=-int(bound), max_value=int(bound))
    else:
        elements = st.floats(-bound, bound, allow_nan=False, allow_infinity=False, width=32)
    return hnp.arrays(dtype, (length,), elements=elements)


#: What a careless padding might leave in padded rows: anything at all.
_HUGE = float(np.float32(1e30))  # bounds of a width-32 strategy must be float32 numbers
GARBAGE = st.one_of(
    st.just(np.nan),
    st.just(np.inf),
    st.just(-np.inf),
    st.floats(-_HUGE, _HUGE, allow_nan=False, width=32),
)
