"""What a hostile entry is: the assignment it attacks, how it is built, the points it must get.

The entries themselves are in :mod:`hostile.corpus` (the first corpus) and in one module per
concern beside it (:mod:`hostile.isolation`, :mod:`hostile.pages`, ...), each exporting ``ENTRIES``;
:data:`hostile.corpus.CORPUS` is all of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .notebooks import Build

SMM, PM, BR, LE = "static_max_mode", "padded_masking", "branch_repair", "ledger_extension"
HS, LP, CM, RC = "host_sync", "loops", "cache_misses", "repair_clinic"
CL = "compile_log"

#: Points of each autograded cell, as the source notebooks give them (checked by the test).
FULL = {
    SMM: {"test_modes": 3, "test_errors": 1, "test_traces": 2, "test_sorting": 2},
    PM: {"test_padding": 2, "test_objective": 3, "test_traces": 1, "test_gradient": 2},
    BR: {"test_failure": 1, "test_repair": 3, "test_traces": 2},
    LE: {"test_rows": 2, "test_traces": 3, "test_sixteen": 1, "test_signature": 2},
    HS: {"test_step": 2, "test_reads": 4, "test_traces": 2, "test_ledger": 2, "test_diagnosis": 2},
    LP: {"test_rolled": 2, "test_counting": 2, "test_pytree": 2, "test_attribution": 2},
    CM: {"test_repairs": 3, "test_traces": 2, "test_causes": 2},
    RC: {"test_scale": 2, "test_step": 2, "test_smooth": 2, "test_dataset": 2, "test_train": 2},
    CL: {"test_capture": 2, "test_programs": 4},
}
NOT_GRADED = "not graded"
Scores = Mapping[str, float | None] | str


def points(assignment: str, **cells: float | None) -> dict[str, float | None]:
    """Full points of every autograded cell, except the cells named."""
    unknown = set(cells) - set(FULL[assignment])
    if unknown:
        raise KeyError(f"{assignment} has no autograded cells {sorted(unknown)}")
    return {**FULL[assignment], **cells}


def zero(assignment: str) -> dict[str, float]:
    return dict.fromkeys(FULL[assignment], 0)


@dataclass(frozen=True)
class Gap:
    """What the course does not defend yet, and what it does today instead."""

    why: str
    today: Scores  # the scores today, which differ from the entry's


@dataclass(frozen=True)
class Hostile:
    name: str
    assignment: str
    build: Build
    scores: Scores
    feedback: str
    gap: Gap | None = None
    #: Files handed in next to the notebook (relative path -> text).
    files: Mapping[str, str] = field(default_factory=dict)
    #: Links put into the exchange's inbound folder after the submit (relative path -> target;
    #: ``{course}`` is the course's root): what a student who writes there directly hands in.
    links: Mapping[str, str] = field(default_factory=dict)

    @property
    def student(self) -> str:
        return f"h-{self.name}"

    @property
    def scores_today(self) -> Scores:
        return self.gap.today if self.gap else self.scores
