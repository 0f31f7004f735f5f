"""The judge: a grade cell's properties run outside the kernel that runs the student's code.

In nbgrader's process. For every grade cell that calls the course's grader, nbgrader's preprocessor
(:class:`autograder.confinement.preprocessors.ConfinedExecute`) opens a :class:`Session`: a socket,
a fresh token, and a thread that waits for the kernel. For a confined kernel the socket is a file in
that kernel's own folder of sockets (:func:`autograder.confinement.kernel_manager.sockets_folder`),
which no other kernel can see or reach: kernels have no network of nbgrader's. Only for a kernel
run unconfined is it a port on the loopback address, which any process of the machine can reach. It then runs, in
place of the cell's source, one call of :func:`autograder.grading.serve.serve`, which connects and
serves. The thread runs the group's properties, hypothesis search included, against a
:class:`RemoteSubmission`, whose every call of a student's function is a request to the kernel:
the arguments go there, the raw result and the trace and compile events observed during the
call come back. Reference answers, expected values and verdicts never leave this process, and
the preprocessor writes the cell's feedback and points itself: nothing the kernel prints or
returns can raise a score beyond what the values it returns earn.

What the kernel reports about a call other than its value (what it raised, which traces and
compiles it saw, whether grading objects were replaced) is in-kernel evidence: code written
against the kernel's side can falsify it. The README's threat model says which properties that
leaves forgeable.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import logging
import os
import queue
import secrets
import selectors
import shutil
import socket
import sys
import tempfile
import threading
import time

from autograder.grading import render, wire
from autograder.grading.grade import run_group
from autograder.grading.limits import WALL_SECONDS, PropertyTimeout
from autograder.grading.registry import properties_of
from autograder.grading.results import CallRaised, GroupReport, PropertyFailure, PropertyResult
from autograder.grading.submission import STAGES, Submission

log = logging.getLogger(__name__)

#: Seconds a kernel may take to answer one request: a call within its budget, and then some.
REPLY_SECONDS = WALL_SECONDS + 20.0
#: Seconds a connecting kernel has to say who it is, and how many may be saying it at once.
_HELLO_SECONDS = 5.0
_PENDING = 64
_POLL_SECONDS = 0.1
#: Seconds the preprocessor waits for the judge to write its report once the cell has run.
_FINISH_SECONDS = 30.0


def preload() -> None:
    """Import the property modules (and with them JAX and hypothesis) now: a process that forks
    grading workers pays for them once. Starts no JAX backend and no thread."""
    from autograder.grading.registry import assignments

    for assignment in assignments():
        properties_of(assignment)


class KernelGone(PropertyFailure):
    """The kernel stopped answering, or sent what the protocol does not allow."""

    def __init__(self, why: str):
        super().__init__(
            f"The notebook's kernel stopped answering the grader ({why}), so this check could not finish. "
            "A kernel that dies, is interrupted or has its grading code replaced loses the checks it did not finish."
        )


class Channel:
    """One kernel's connection: a request, then its reply, in turn."""

    def __init__(self, connection: socket.socket):
        self.connection = connection
        self.stream = connection.makefile("rwb")
        self.closed = False

    def ask(self, request: dict) -> dict:
        if self.closed:
            raise KernelGone("its connection is closed")
        try:
            self.stream.write(wire.dumps(request))
            self.stream.flush()
            line = self.stream.readline(wire.MAX_LINE + 1)
        except TimeoutError:
            self.close()
            raise KernelGone(f"no answer within {REPLY_SECONDS:g} s") from None
        except OSError as error:
            self.close()
            raise KernelGone(f"its connection failed: {error.strerror or error}") from None
        except ValueError:  # the stream closed under the read: the cell ended while the judge still waited
            self.close()
            raise KernelGone("the grade cell ended before the kernel answered") from None
        if not line:
            self.close()
            raise KernelGone("it closed the connection")
        try:
            return wire.loads(line)
        except wire.WireError as error:
            self.close()
            raise KernelGone(f"it sent what the grader cannot read: {error}") from None

    def close(self, say_done: bool = False) -> None:
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(OSError):
            if say_done:
                self.stream.write(wire.dumps({"op": "done"}))
                self.stream.flush()
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError, ValueError):
            self.stream.close()  # the file holds the socket open: without this a kernel still sending blocks for good
        with contextlib.suppress(OSError):
            self.connection.close()


class RemoteFunction:
    """A function of the notebook, called in its kernel (see :class:`RemoteSubmission`)."""

    def __init__(self, submission: "RemoteSubmission", name: str):
        self.submission = submission
        self.name = self.__name__ = name

    def __call__(self, *args, **kwargs):
        return self.submission.call(self.name, *args, **kwargs)

    def clear_cache(self) -> None:
        """Its cache cleared in the kernel (its own, or all of JAX's if it has none)."""
        self.submission.ask({"op": "clear_cache", "name": self.name})

    def __repr__(self) -> str:
        return f"<the notebook's {self.name}>"


class RemoteSubmission(Submission):
    """The :class:`~autograder.grading.submission.Submission` of a notebook whose kernel runs
    elsewhere: the same methods, each call a request to the kernel. A name that holds data
    arrives as its value; a function, as a :class:`RemoteFunction`. There is no ``namespace``.

    :attr:`evidence` names what of the kernel's own word (not a returned value) the property now
    running has used (:data:`EVIDENCE`): an observation's report read, a thunk's count read, a
    call's raised exception, a program staged in the kernel; :func:`grade.run_group` empties it
    before each property. Something a property keeps in :attr:`memo` carries the evidence it was
    made from to every property that reads it."""

    def __init__(self, channel: Channel, label: str = "the notebook", notebook_memo: dict | None = None):
        # no namespace: Submission.__init__ is not for it
        self.channel = channel
        self.label = label
        self.evidence: set[str] = set()
        self.memo: dict = _EvidenceMemo(self.evidence)
        self.notebook_memo = {} if notebook_memo is None else notebook_memo
        self._tampered: list[str] = []
        self._replaced: dict = {}

    # How a property runs against this submission (grade.run_group).
    quiet = staticmethod(contextlib.nullcontext)  # the kernel keeps its own output quiet

    def tampered(self) -> list[str]:
        """The grading objects the notebook replaced in its kernel, as the kernel says (as it last
        said, once it no longer answers: its checks have failed for that already)."""
        with contextlib.suppress(KernelGone):
            self._tampered = _names(self.ask({"op": "tampered"}).get("tampered", []))
        return self._tampered

    @contextlib.contextmanager
    def time_limit(self):
        """Each property gets fresh time budgets in the kernel, which enforces them call by call."""
        self.ask({"op": "budget"})
        yield

    def ask(self, request: dict) -> dict:
        reply = self.channel.ask(request)
        if "failure" in reply:
            raise PropertyFailure(**_failure_parts(reply["failure"]))
        if "timeout" in reply:
            raise PropertyTimeout(str(reply["timeout"])[:200])
        if "error" in reply:
            raise KernelGone(f"it could not answer: {str(reply['error'])[:200]}")
        return reply

    def get(self, name: str):
        reply = self.ask({"op": "get", "name": name})
        if reply.get("callable"):
            return RemoteFunction(self, name)
        return self._decode(reply.get("value"))

    def tail(self, name: str, start: int) -> tuple[int | None, object]:
        reply = self.ask({"op": "tail", "name": name, "start": int(start)})
        length = reply.get("length")
        return (length if type(length) is int else None), self._decode(reply.get("value"))

    def call(self, name: str, *args, **kwargs):
        return self._returned(name, args, kwargs)

    def call_staged(self, stage: str, name: str, *args, static_argnums: tuple[int, ...] = (), **kwargs):
        if stage not in STAGES:
            raise ValueError(f"no stage {stage!r}; the stages are {', '.join(STAGES)}")
        return self._returned(name, args, kwargs, (stage, [int(i) for i in static_argnums]))

    def _returned(self, name: str, args: tuple, kwargs: dict, stage: tuple | None = None):
        """What the call returned; what it raised, as :class:`CallRaised`."""
        reply = self._request_call(name, args, kwargs, stage)
        if "raised" in reply:
            self.evidence.add(RAISED)  # the kernel says it raised: a property that goes on has taken its word
            types, description = _raised(reply["raised"])
            error_name = types[0][1].rsplit(".", 1)[-1]
            raise CallRaised(
                f"`{name}` raised {error_name}: {description}", error_type=_error_type(types),
                error_name=error_name, example=render.call(name, args, kwargs),
            )
        return self._decode(reply.get("result"))

    def raises(self, expected: type[BaseException], name: str, *args, **kwargs) -> BaseException | None:
        reply = self._request_call(name, args, kwargs)
        if "raised" not in reply:
            return None
        self.evidence.add(RAISED)
        types, description = _raised(reply["raised"])
        if [expected.__module__, expected.__qualname__] in types:
            return CallRaised(description, error_type=expected)  # what was raised, as this process can hold it
        raise PropertyFailure(
            f"`{name}` should raise {expected.__name__}, but raised {types[0][1].rsplit('.', 1)[-1]}: {description}",
            example=render.call(name, args, kwargs),
        )

    def _request_call(self, name: str, args: tuple, kwargs: dict, stage: tuple | None = None) -> dict:
        """The kernel's reply to one call; ``stage`` is (a :data:`STAGES` name, static positions).

        The observations open in this thread (:mod:`autograder.kit.observing`) are opened in the
        kernel for the call, one of each kind, and each here takes in its kind's report; so do the
        thunks handed over, of how the call used them."""
        import jax

        from autograder.kit import observing

        observations = observing.active()
        handed: list = []
        stage_name, static = stage or (None, [])
        reply = self.ask({
            "op": "call", "name": name, "stage": stage_name, "static": static,
            "args": [wire.encode(a, handed=handed) for a in args],
            "kwargs": {key: wire.encode(value, handed=handed) for key, value in kwargs.items()},
            "replace": {key: wire.encode(value, handed=handed) for key, value in self._replaced.items()},
            "observe": sorted({o.KIND for o in observations}),
            "disable_jit": bool(jax.config.jax_disable_jit),
        })
        observed = reply.get("observed")
        observed = observed if isinstance(observed, dict) else {}
        self._absorb((o, observed.get(o.KIND)) for o in observations)
        self._absorb(zip(handed, _listed(reply.get("handed"))))
        if stage_name == "make_jaxpr":  # what the staged program holds, or that staging raised: the kernel's word
            self.evidence.add(STAGED)
        return reply

    def _absorb(self, pairs) -> None:
        """Each observation (or handed thunk) takes in the kernel's report of its kind (or of it),
        and reading what it took in (or that nothing came) is evidence from then on."""
        for taker, report in pairs:
            _watch(taker, self.evidence)
            if report is None:
                continue
            try:
                taker.absorb(report if isinstance(report, dict) else {})
            except (ValueError, TypeError) as error:
                self.channel.close()
                raise KernelGone(f"it sent a report the grader cannot read: {error}") from None

    @contextlib.contextmanager
    def replaced(self, **names):
        """The notebook's ``names`` bound to the grader's values in the kernel for every call made
        while the block runs (the kernel puts them in place around each call, and back after)."""
        saved = self._replaced
        self._replaced = {**saved, **names}
        try:
            yield
        finally:
            self._replaced = saved

    def run_grader(self, thunk):
        """Run a thunk of the grader's in the kernel, outside any call of the student's code."""
        handed: list = []
        reply = self.ask({"op": "run", "thunk": wire.encode(thunk, handed=handed)})
        self._absorb(zip(handed, _listed(reply.get("handed"))))

    def _decode(self, value):
        try:
            return wire.decode(value)
        except (wire.WireError, ValueError, TypeError) as error:
            self.channel.close()
            raise KernelGone(f"it sent a value the grader cannot read: {error}") from None


#: The kinds of in-kernel evidence a property can use (:attr:`RemoteSubmission.evidence`).
RAISED = "what a call raised"
STAGED = "a program staged in the kernel"
#: An observation's class -> what its report is (kit.traces.TraceLog, kit.compiles.CompileLog, kit.host_reads.HostReads).
_OBSERVED = {"TraceLog": "JAX's trace events", "CompileLog": "JAX's compile events", "HostReads": "host reads"}
THUNK_CALLS = "how often a thunk was called"
EVIDENCE = (RAISED, STAGED, *_OBSERVED.values(), THUNK_CALLS)


class _EvidenceMemo(dict):
    """A property's memo that remembers, with each value, the evidence used until it was stored,
    and adds it to the evidence of any property that reads it."""

    def __init__(self, evidence: set):
        super().__init__()
        self._evidence, self._made_from = evidence, {}

    def __setitem__(self, key, value):
        self._made_from[key] = frozenset(self._evidence)
        super().__setitem__(key, value)

    def __getitem__(self, key):
        value = super().__getitem__(key)
        self._evidence.update(self._made_from.get(key, ()))
        return value

    def get(self, key, default=None):
        return self[key] if key in self else default


_WATCHED: dict[type, type] = {}


def _watch(taker, evidence: set) -> None:
    """From now on, reading a value of ``taker`` (an observation, a thunk) from outside its own
    methods adds its kind to ``evidence``: its methods may use what they took in, and calling a
    method (a `read` handed over again) is not reading it."""
    cls = type(taker)
    kind = THUNK_CALLS if not hasattr(cls, "KIND") else _OBSERVED.get(cls.__name__, f"what the kernel observed ({cls.KIND})")
    if cls not in _WATCHED.values():
        if cls not in _WATCHED:
            def __getattribute__(self, name, _get=object.__getattribute__):
                value = _get(self, name)
                if not name.startswith("__") and not callable(value):
                    watch = _get(self, "__dict__").get("_evidence_watch")
                    if watch is not None and sys._getframe(1).f_locals.get("self") is not self:
                        watch[0].add(watch[1])
                return value

            _WATCHED[cls] = type(cls.__name__, (cls,), {"__getattribute__": __getattribute__, "__slots__": (),
                                                          "__module__": cls.__module__, "__qualname__": cls.__qualname__})
        taker.__class__ = _WATCHED[cls]
    taker.__dict__["_evidence_watch"] = (evidence, kind)


def _listed(value) -> list:
    return value if isinstance(value, list) else []


def _names(value) -> list[str]:
    if not isinstance(value, list) or len(value) > wire.MAX_ITEMS:
        return ["(what the kernel said)"]
    return [str(name)[:200] for name in value]


def _failure_parts(failure) -> dict[str, str]:
    failure = failure if isinstance(failure, dict) else {}
    return {key: str(failure.get(key, ""))[:2000] for key in ("problem", "example", "got", "expected")}


def _raised(raised) -> tuple[list[list[str]], str]:
    raised = raised if isinstance(raised, dict) else {}
    types = [[str(m), str(q)] for m, q in raised.get("types", [])[:64]] or [["builtins", "Exception"]]
    return types, str(raised.get("description", ""))[:2000]


def _error_type(types: list[list[str]]) -> type:
    """The first class of what the kernel raised that this process knows (a built-in exception,
    or one of an imported module's: JAX's errors), else Exception. Nothing is imported."""
    for module_name, qualname in types:
        module = builtins if module_name == "builtins" else sys.modules.get(module_name)
        value = module
        for part in qualname.split("."):
            value = getattr(value, part, None)
        if isinstance(value, type) and issubclass(value, BaseException):
            return value
    return Exception


def _drop(connection: socket.socket, selector, pending: dict) -> None:
    pending.pop(connection, None)
    with contextlib.suppress(KeyError, ValueError, OSError):
        selector.unregister(connection)
    with contextlib.suppress(OSError):
        connection.close()


def _listen(folder: str | None) -> tuple[socket.socket, str]:
    """A listening socket and where the kernel connects (:func:`autograder.grading.serve.serve`):
    ``unix:PATH``, a file in ``folder`` that anyone who can enter the folder may use (only its
    kernel and this process can), or ``HOST:PORT`` on the loopback address where there is none.

    The kernel owns ``folder`` and may put anything in it, a link to a file of this process's
    included: the socket is made and given its mode in a folder of this process's own beside it
    (the kernels' sockets root), then renamed in, which replaces whatever has that name and follows
    no link."""
    if folder is None:
        listener = socket.create_server(("127.0.0.1", 0))
        host, port = listener.getsockname()[:2]
        return listener, f"{host}:{port}"
    name = f"judge-{secrets.token_hex(8)}"
    staging = tempfile.mkdtemp(prefix=".judge-", dir=os.path.dirname(os.path.abspath(folder)))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(os.path.join(staging, name))
        os.chmod(os.path.join(staging, name), 0o666)  # the kernel runs as a user of its own
        listener.listen()
        path = os.path.join(folder, name)
        os.rename(os.path.join(staging, name), path)
    except BaseException:
        listener.close()
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return listener, f"unix:{path}"


_NAMED_VERSIONS: set = set()


def another_jax(said) -> str:
    """The sentence for a kernel that says it runs another jax or jaxlib than this judge (its hello's
    ``versions``), logged once per pair; empty when they agree. The kernel's word: it can hide the
    sentence, never change a grade with it."""
    if not isinstance(said, dict) or not said:
        return ""  # a kernel that says nothing of its JAX (one whose serving code was replaced) is not named
    ours = wire.jax_versions()
    theirs = {name: str(said.get(name, "(not said)"))[:40] for name in ours}
    if theirs == ours:
        return ""
    pair = (tuple(theirs.values()), tuple(ours.values()))
    if pair not in _NAMED_VERSIONS:
        _NAMED_VERSIONS.add(pair)
        log.warning("autograder: a grading kernel runs jax %s, jaxlib %s, and the judge jax %s, jaxlib %s: the kernelspec's "
                    "Python is not nbgrader's; what the notebooks' code traces and compiles is observed on another JAX "
                    "than the properties expect", theirs["jax"], theirs["jaxlib"], ours["jax"], ours["jaxlib"])
    return (f"Graded by a kernel with jax {theirs['jax']}, jaxlib {theirs['jaxlib']}, while the grader runs jax "
            f"{ours['jax']}, jaxlib {ours['jaxlib']}: what the code traced and compiled was observed on another JAX "
            "than the checks were written for, so a grade may differ from one on the grader's.")


class _JudgeThreads:
    """The threads that judge sessions, kept between sessions: each judges one at a time, and a
    session finds an idle one or starts a new one (a daemon, so a judge still waiting on a kernel
    never holds nbgrader's exit).

    Kept because a new thread costs hypothesis a garbage collection of the whole process: the first
    search in a thread registers a random generator of that thread's own, and registering one runs
    ``gc.collect()`` and ``gc.get_referrers`` to check that it is held. In nbgrader's process, with
    JAX and the property modules loaded, that was 0.15 s for every grade cell."""

    def __init__(self):
        self._forget()
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        """No thread yet: a fork holds none of its parent's threads, nor a lock one of them held."""
        self._lock = threading.Lock()
        self._idle: list[queue.SimpleQueue] = []

    def run(self, task) -> threading.Event:
        """Run ``task`` on an idle thread, or a new one; the event is set once it has returned."""
        done = threading.Event()
        with self._lock:
            tasks = self._idle.pop() if self._idle else None
        if tasks is None:
            tasks = queue.SimpleQueue()
            threading.Thread(target=self._serve, args=(tasks,), name="judge", daemon=True).start()
        tasks.put((task, done))
        return done

    def _serve(self, tasks: queue.SimpleQueue) -> None:
        while True:
            task, done = tasks.get()
            try:
                task()
            except BaseException:  # noqa: BLE001 - a task reports its own faults; the thread stays for the next
                log.exception("autograder: a judge's thread failed")
            with self._lock:
                self._idle.append(tasks)  # idle before done: the session that waits may start the next at once
            done.set()


_JUDGES = _JudgeThreads()


class Session:
    """One grade cell judged in this process while its kernel serves calls (see the module doc).

    Open it before the cell runs, run :attr:`kernel_code` in the kernel in place of the cell's
    source, then :meth:`finish`, which returns the group's report: every property failed, with
    the reason, when no kernel served the cell.
    """

    def __init__(self, assignment: str, group: str, notebook_memo: dict | None = None, folder: str | None = None):
        """``folder``: the kernel's own folder of sockets, where the session listens (a file only that
        kernel can reach); None for an unconfined kernel, reached on a loopback port."""
        from autograder.kit import observing  # imported here, not by the thread: no two threads import one module

        self._observing = observing
        self.assignment, self.group = assignment, group
        #: Shared by the sessions of one notebook's grade cells (:attr:`Submission.notebook_memo`).
        self.notebook_memo = {} if notebook_memo is None else notebook_memo
        self._listener, self._address = _listen(folder)
        self._listener.settimeout(_POLL_SECONDS)
        self._token = secrets.token_hex(16)
        self._cell_ended = threading.Event()
        self._channel: Channel | None = None
        self._report: GroupReport | None = None
        self._why = "the cell never called the grader"
        self._judged = _JUDGES.run(self._judge)

    @property
    def kernel_code(self) -> str:
        return (f"__import__('autograder.grading.serve', fromlist=['serve']).serve("
                f"{self.assignment!r}, {self.group!r}, globals(), {self._address!r}, {self._token!r})")

    def _judge(self) -> None:
        self._observing.observe_elsewhere()
        try:
            hello = self._accept()
            if hello is None:
                return
            submission = RemoteSubmission(self._channel, notebook_memo=self.notebook_memo)
            report = run_group(self.assignment, self.group, submission)
            other_jax = another_jax(hello.get("versions"))
            if other_jax:
                report = dataclasses.replace(report, notice="\n".join(filter(None, (report.notice, other_jax))))
            self._report = report
        except Exception as error:  # noqa: BLE001 - a fault of the judge must not stop nbgrader's batch
            log.exception("autograder: the judge of %s/%s failed", self.assignment, self.group)
            self._why = f"the grader failed: {type(error).__name__}"
        finally:
            if self._channel is not None:
                self._channel.close(say_done=True)
            self._close_listener()

    def _close_listener(self) -> None:
        if self._address.startswith("unix:"):
            with contextlib.suppress(OSError):
                os.unlink(self._address.removeprefix("unix:"))  # whatever is there now: unlink follows no link
        with contextlib.suppress(OSError):
            self._listener.close()

    def _accept(self) -> dict | None:
        """The kernel's hello, once a connection brings this session's token; None if the cell ends first.

        Connections are read side by side, never one after another: where the session listens on
        a port, any process on the machine can find it (``/proc/net/tcp``), and one that connects
        and says nothing must not hold up the kernel behind it. An unfinished hello is dropped after :data:`_HELLO_SECONDS`,
        and at most :data:`_PENDING` wait at once (the oldest goes first)."""
        pending: dict[socket.socket, list] = {}  # connection -> [what it sent so far, its deadline]
        selector = selectors.DefaultSelector()
        try:
            selector.register(self._listener, selectors.EVENT_READ)
            while not self._cell_ended.is_set():
                for key, _ in selector.select(_POLL_SECONDS):
                    if key.fileobj is self._listener:
                        self._take(selector, pending)
                        continue
                    hello = self._read_hello(key.fileobj, selector, pending)
                    if hello is not None:
                        return hello
                now = time.monotonic()
                for connection in [c for c, (_, deadline) in pending.items() if deadline < now]:
                    _drop(connection, selector, pending)
            return None
        except (OSError, ValueError):
            return None  # the listener closed under us (a closed socket's fd is -1): the cell has ended
        finally:
            for connection in list(pending):
                _drop(connection, selector, pending)
            selector.close()

    def _take(self, selector, pending) -> None:
        connection, _ = self._listener.accept()
        connection.setblocking(False)
        if len(pending) >= _PENDING:
            _drop(next(iter(pending)), selector, pending)
        pending[connection] = [b"", time.monotonic() + _HELLO_SECONDS]
        selector.register(connection, selectors.EVENT_READ)

    def _read_hello(self, connection, selector, pending) -> dict | None:
        try:
            data = connection.recv(4096)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            data = b""
        sent = pending[connection][0] + data
        pending[connection][0] = sent
        if not data or (b"\n" not in sent and len(sent) > 4096):
            _drop(connection, selector, pending)
            return None
        if b"\n" not in sent:
            return None
        try:
            hello = wire.loads(sent.split(b"\n", 1)[0])
        except wire.WireError:
            hello = {}
        if not secrets.compare_digest(str(hello.get("token", "")), self._token):
            _drop(connection, selector, pending)
            return None
        selector.unregister(connection)
        del pending[connection]
        connection.setblocking(True)
        connection.settimeout(REPLY_SECONDS)
        self._channel = Channel(connection)
        self._close_listener()  # one kernel per session
        return hello

    def finish(self) -> GroupReport:
        """Once the cell has run: the group's report."""
        self._cell_ended.set()
        self._close_listener()
        if not self._judged.wait(_POLL_SECONDS * 5) and self._channel is not None:
            self._channel.close()  # the cell ended while the judge still waits on the kernel: it never answers now
        self._judged.wait(_FINISH_SECONDS)
        if self._report is not None:
            return self._report
        why = PropertyFailure(
            f"This grade cell's checks did not run ({self._why}): the notebook replaced or bypassed the grading "
            "code, or its kernel stopped before the cell, so it scores zero."
        )
        chosen = properties_of(self.assignment, self.group)
        return GroupReport(self.assignment, self.group, tuple(PropertyResult(p, False, why) for p in chosen))
