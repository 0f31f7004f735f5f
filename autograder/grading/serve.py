"""The kernel's side of a grade cell judged outside the kernel: it serves calls, it judges nothing.

Under autograde, nbgrader's process (:class:`autograder.confinement.preprocessors.ConfinedExecute`)
runs a grade cell of an assignment judged outside the kernel as one call of :func:`serve`. The
kernel connects to the judge (:mod:`autograder.grading.judge`), proves it is the kernel the
judge is waiting for with the token it was sent, and then answers requests until the judge is
done: look a name up, call a function of the notebook with the judge's arguments (under JAX's
trace and compile listeners, op by op or through ``jax.jit`` or ``jax.make_jaxpr`` if asked, within
the property's time budget), clear a
function's cache. Each reply carries the raw result (:mod:`autograder.grading.wire`), the
events observed during the call. Asked, it names the grading objects the notebook replaced
(:func:`autograder.grading.integrity.tampered`), before and after each group as in the kernel.

No property, reference answer, expected value, key or verdict is ever in the kernel: the
property modules of such assignments are not imported here, and nothing the kernel sends can
do more than describe what the notebook's code did.
"""

from __future__ import annotations

import contextlib
import socket
import time

from autograder.grading import wire
from autograder.grading.grade import as_failure
from autograder.grading.integrity import tampered
from autograder.grading.limits import PropertyTimeout, full_budget, time_limit
from autograder.grading.quiet import heard, quiet
from autograder.grading.results import PropertyFailure
from autograder.grading.submission import Submission, describe_error, staged
from autograder.kit.compiles import CompileLog
from autograder.kit.handed import Thunk
from autograder.kit.host_reads import HostReads
from autograder.kit.traces import TraceLog, clear_cache_of

_CONNECT_SECONDS = 30.0


def serve(assignment: str, group: str, namespace: dict, address: str, token: str) -> None:
    """Answer the judge at ``address`` (``unix:PATH``, a file in this kernel's own folder of
    sockets, or ``host:port`` for a kernel run unconfined) until it is done (see the module doc)."""
    with _connect(address) as connection:
        connection.settimeout(None)
        stream = connection.makefile("rwb")
        agent = Agent(Submission(namespace))
        stream.write(wire.dumps({"token": token, "assignment": assignment, "group": group,
                                 "versions": wire.jax_versions()}))
        stream.flush()
        while True:
            line = stream.readline(wire.MAX_LINE + 1)
            if not line:
                return
            request = wire.loads(line)
            if request.get("op") == "done":
                return
            stream.write(wire.dumps(agent.answer(request)))
            stream.flush()



def _connect(address: str) -> socket.socket:
    if address.startswith("unix:"):
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.settimeout(_CONNECT_SECONDS)
        try:
            connection.connect(address.removeprefix("unix:"))
        except BaseException:
            connection.close()
            raise
        return connection
    host, port = address.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=_CONNECT_SECONDS)


#: What the judge may ask to have observed during a call: an observation's kind -> its class.
OBSERVATIONS = {kind.KIND: kind for kind in (TraceLog, CompileLog, HostReads)}


class Agent:
    """Answers one judge's requests about one notebook's namespace."""

    def __init__(self, submission: Submission):
        self.submission = submission
        self.left = full_budget()

    def answer(self, request: dict) -> dict:
        op = request.get("op")
        try:
            if op == "budget":  # a new property starts: its own time budgets
                self.left = full_budget()
                return {"ok": None}
            if op == "tampered":  # asked before and after a group, as grade.run_group asks here
                return {"tampered": tampered()}
            if op == "get":
                return self._get(str(request["name"]))
            if op == "tail":
                length, value = self.submission.tail(str(request["name"]), max(int(request["start"]), 0))
                with quiet():
                    return {"length": length, "value": wire.encode(value)}
            if op == "call":
                return self._call(request)
            if op == "run":  # a thunk of the grader's, outside any student call
                handing = wire.Handing()
                wire.decode(request["thunk"], handing=handing)
                if len(handing.made) != 1 or not isinstance(handing.made[0], Thunk):
                    raise ValueError("only a thunk runs")
                try:
                    with quiet():
                        handing.made[0]()
                except Exception as error:  # noqa: BLE001 - the notebook may have broken what a thunk uses
                    return {"failure": _failure(as_failure(error))}
                return {"ok": None, "handed": [made.report() for made in handing.made]}
            if op == "clear_cache":
                fn = self.submission.function(str(request["name"]))
                try:
                    with quiet():
                        clear_cache_of(fn)
                except Exception as error:  # noqa: BLE001 - a student's clear_cache: that property alone fails
                    return {"failure": _failure(as_failure(error))}
                return {"ok": None}
        except PropertyFailure as failure:
            return {"failure": _failure(failure)}
        except (KeyError, TypeError, ValueError) as error:
            return {"error": f"bad request: {error}"}
        return {"error": f"unknown request {op!r}"}

    def _get(self, name: str) -> dict:
        value = self.submission.get(name)
        if callable(value):
            return {"callable": True}
        with quiet():
            return {"callable": False, "value": wire.encode(value)}

    def _call(self, request: dict) -> dict:
        name = str(request["name"])
        fn = self.submission.function(name)
        if self.left and min(self.left.values()) <= 0:  # no budgets where the platform has no interval timers
            return {"timeout": self._spent_text()}
        kinds = [kind for kind in request.get("observe", ()) if kind in OBSERVATIONS]
        reply: dict = {}
        with quiet(), contextlib.ExitStack() as stack:
            # Host reads first: the arguments may hold its `read`. JAX's events only once they are decoded.
            observed = {kind: stack.enter_context(OBSERVATIONS[kind]()) for kind in kinds if kind == HostReads.KIND}
            reads = observed.get(HostReads.KIND)
            handing = wire.Handing(read=reads.read if reads is not None else None)
            args = tuple(wire.decode(a, handing=handing) for a in request.get("args", []))
            kwargs = {str(k): wire.decode(v, handing=handing) for k, v in request.get("kwargs", {}).items()}
            replace = {str(k): wire.decode(v, handing=handing) for k, v in request.get("replace", {}).items()}
            observed.update((kind, stack.enter_context(OBSERVATIONS[kind]())) for kind in kinds if kind not in observed)
            if request.get("stage") is not None:
                static = request.get("static", [])
                if not isinstance(static, list) or not all(type(i) is int for i in static):
                    raise ValueError("static_argnums must be a list of integers")
                fn, args = staged(str(request["stage"]), fn, args, static)
            if request.get("disable_jit"):
                import jax

                stack.enter_context(jax.disable_jit())
            stack.enter_context(self.submission.replaced(**replace))
            try:
                result = self._timed(fn, args, kwargs)
            except PropertyTimeout as timeout:
                return {"timeout": str(timeout)}
            except Exception as error:  # noqa: BLE001 - student code may raise anything: described, not judged
                reply["raised"] = _raised(error)
        # The observations closed above: one the notebook's code removed has raised its failure by now.
        reply["observed"] = {kind: observation.report() for kind, observation in observed.items()}
        reply["handed"] = [made.report() for made in handing.made]
        if "raised" not in reply:
            with quiet():
                reply["result"] = wire.encode(result)
        return reply

    def _timed(self, fn, args, kwargs):
        cpu, wall = time.process_time(), time.monotonic()
        try:
            with heard(), time_limit(self.left):  # the notebook's own log handlers hear its call (timer off first)
                return fn(*args, **kwargs)
        finally:
            for kind, spent in (("CPU", time.process_time() - cpu), ("wall-clock", time.monotonic() - wall)):
                if kind in self.left:
                    self.left[kind] -= spent

    def _spent_text(self) -> str:
        kind = min(self.left, key=self.left.get)
        return f"used up its {full_budget()[kind]:g} s of {kind} time"


def _raised(error: Exception) -> dict:
    """What a call raised: its classes, and the sentence :func:`describe_error` makes of it."""
    try:
        description = describe_error(error)
    except Exception:  # noqa: BLE001 - a student's exception whose message itself raises
        description = "(its message could not be read)"
    return {"types": [[str(c.__module__), str(c.__qualname__)] for c in type(error).__mro__],
            "description": description}


def _failure(failure: PropertyFailure) -> dict:
    return {"problem": failure.problem, "example": failure.example, "got": failure.got, "expected": failure.expected}
