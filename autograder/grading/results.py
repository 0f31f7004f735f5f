"""The result model: what a property found, in words a student can act on."""

from __future__ import annotations

from dataclasses import dataclass, field


class PropertyFailure(AssertionError):
    """A property does not hold; raised with the example that shows it.

    ``problem`` is one sentence; ``example`` describes the input in plain words;
    ``got`` and ``expected`` are short renderings (``expected`` may be omitted
    when showing it would give away more than the one failing example).
    """

    def __init__(self, problem: str, *, example: str = "", got: str = "", expected: str = ""):
        super().__init__(problem)
        self.problem = problem
        self.example = example
        self.got = got
        self.expected = expected

    def __str__(self) -> str:
        parts = [self.problem]
        parts += [f"{label}: {text}" for label, text in
                  (("Example", self.example), ("Got", self.got), ("Expected", self.expected)) if text]
        return "\n".join(parts)


class CallRaised(PropertyFailure):
    """A student's function raised while a property called it (the problem names the call;
    ``error_type`` is the class of what it raised)."""

    def __init__(self, problem: str, *, error_type: type = Exception, error_name: str = "", **parts):
        super().__init__(problem, **parts)
        self.error_type = error_type
        #: The name of the class of what was raised (``error_type`` may be a base of it, where the
        #: class lives only in the process that ran the call).
        self.error_name = error_name or error_type.__name__


@dataclass(frozen=True)
class Property:
    """One graded property: a pytest test function plus what grading needs to know."""

    name: str
    group: str
    points: float
    title: str
    hint: str
    run: object = field(repr=False, compare=False)


@dataclass(frozen=True)
class PropertyResult:
    """The outcome of one property on one submission."""

    prop: Property
    passed: bool
    failure: PropertyFailure | None = None
    #: What of the kernel's own word the verdict used (judged outside the kernel: what a call raised,
    #: trace, compile or host-read reports, thunk counts, staged programs); empty for values alone.
    evidence: frozenset = frozenset()
    #: It passed, but on that evidence, in a notebook that reaches into the grader: its points are held back.
    withheld: bool = False

    @property
    def earned(self) -> float:
        return self.prop.points if self.passed else 0.0


@dataclass(frozen=True)
class GroupReport:
    """The outcome of every property in one grade cell's group."""

    assignment: str
    group: str
    results: tuple[PropertyResult, ...]
    #: Sentences for the whole cell, one per line, each shown under the header: the notebook reaches
    #: into the grader; its kernel runs another JAX than the judge.
    notice: str = ""

    @property
    def earned(self) -> float:
        return sum(result.earned for result in self.results)

    @property
    def possible(self) -> float:
        return sum(result.prop.points for result in self.results)
