"""Stand in, for nbgrader, for a grading kernel that the fork server made.

The kernel manager (:mod:`autograder.confinement.kernel_manager`) runs, in place
of the jail, ``python -I -S forkclient.py --socket PATH JAIL-ARGUMENTS...``. This
process:

- sends the fork server (:mod:`autograder.confinement.forkserver`) its pid, the
  jail's arguments, its environment and its standard streams (the kernel manager's
  ``/dev/null`` and pipe, never nbgrader's terminal); the server forks a kernel for it,
  confined by that pid's user and cgroup as the jail would;
- passes every signal nbgrader sends it (an interrupt, a termination) on to the
  kernel;
- and exits as the kernel exits, with its exit code or by its signal; or, if
  nbgrader's process goes away, at once, and the server kills the kernel (a
  kernel started afresh exits with its parent too).

So to nbgrader this process is the kernel. Killing it (SIGKILL cannot be passed
on) makes the server kill the kernel, and the leftovers of its pid are killed as
before. Standard library only, nothing of the package, no site packages: it
starts in a few milliseconds. The fork server imports the message format below.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import sys

#: Signals passed on to the kernel; SIGINT is nbgrader's interrupt.
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
#: Exit code when no kernel could be made (the jail's own code for that).
NO_KERNEL = 70
_HEADER = struct.Struct("!I")
_MAX_MESSAGE = 1 << 20


def send(sock: socket.socket, message: dict, fds: list[int] | tuple[int, ...] = ()) -> None:
    """One message: a length, then JSON; ``fds`` travel with its first byte."""
    data = json.dumps(message).encode()
    payload = _HEADER.pack(len(data)) + data
    if fds:
        sent = socket.send_fds(sock, [payload], list(fds))
        payload = payload[sent:]
    sock.sendall(payload)


def receive(sock: socket.socket, max_fds: int = 0) -> tuple[dict | None, list[int]]:
    """The next message and the descriptors sent with it; (None, []) when the peer is gone."""
    data, fds, _, _ = socket.recv_fds(sock, _HEADER.size, max_fds) if max_fds else (sock.recv(_HEADER.size), [], 0, 0)
    data = data + _exactly(sock, _HEADER.size - len(data)) if data else data
    if len(data) < _HEADER.size:
        return None, fds
    (length,) = _HEADER.unpack(data)
    if length > _MAX_MESSAGE:
        raise ValueError(f"a message of {length} bytes is too long")
    body = _exactly(sock, length)
    return (json.loads(body) if len(body) == length else None), fds


def _exactly(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n > 0:
        chunk = sock.recv(n)
        if not chunk:
            break
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


#: The signals whose disposition a kernel started afresh inherits through exec: ignored stays
#: ignored (``nohup nbgrader ...`` ignores SIGHUP), anything else starts at its default.
INHERITED_DISPOSITIONS = (*FORWARDED, signal.SIGCHLD)


def ignored_signals() -> list[int]:
    """The signals this process ignores, which a kernel started afresh from it would ignore too."""
    return [int(s) for s in INHERITED_DISPOSITIONS if signal.getsignal(s) == signal.SIG_IGN]


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] != "--socket":
        print("usage: forkclient.py --socket PATH JAIL-ARGUMENTS...", file=sys.stderr)
        return 2
    path, jail_arguments = argv[1], argv[2:]
    signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)  # until there is a kernel to pass them to
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        send(sock, {"pid": os.getpid(), "argv": jail_arguments, "env": dict(os.environ),
                    "ignored": ignored_signals()}, fds=(0, 1, 2))
        started, _ = receive(sock)
    except (OSError, ValueError) as error:
        print(f"autograder: the fork server made no kernel: {error}", file=sys.stderr)
        return NO_KERNEL
    if not started or "kernel" not in started:
        print(f"autograder: the fork server made no kernel: {(started or {}).get('error', 'it hung up')}",
              file=sys.stderr)
        return NO_KERNEL
    kernel = int(started["kernel"])

    def forward(signum, _frame):
        try:
            os.kill(kernel, signum)
        except OSError:
            pass

    for signum in FORWARDED:
        signal.signal(signum, forward)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)

    parent = os.getppid()
    while not select.select([sock], [], [], 1.0)[0]:
        if os.getppid() != parent:  # nbgrader is gone: hang up, and the server kills the kernel
            return NO_KERNEL
    ended, _ = receive(sock)
    code = (ended or {}).get("exit_code")
    if code is None:
        print("autograder: the fork server went away before the kernel ended", file=sys.stderr)
        return NO_KERNEL
    if code < 0:  # killed by a signal: die by the same one, as nbgrader would have seen it
        if -code not in (signal.SIGKILL, signal.SIGSTOP):  # those two cannot be caught or blocked
            signal.signal(-code, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [-code])
        os.kill(os.getpid(), -code)
        return 128 - code
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
