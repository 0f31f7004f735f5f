"""Timing a command and the memory of its whole process tree (nbgrader, workers, kernels)."""

from __future__ import annotations

import json

import os
import platform
import resource
import subprocess
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from autograder.tools.repository import REPO_ROOT

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True)
class Measured:
    seconds: float
    returncode: int
    cpu_seconds: float  # user + system time of the command and every descendant it waited for
    others_cpu_seconds: float | None  # CPU time other programs used on this machine meanwhile
    peak_tree_mb: float | None  # most memory the command and all its descendants held at once
    peak_process_mb: float | None  # the largest single process (usually a kernel)

    def as_dict(self) -> dict:
        return asdict(self)


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: fields start after the last ")"
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    return children


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE / 2**20
    except (OSError, IndexError, ValueError):
        return 0.0


def tree_rss(root: int) -> tuple[float, float]:
    """(total, largest) resident memory in MB of ``root`` and its descendants, from /proc."""
    children = _children_map()
    stack, sizes = [root], []
    while stack:
        pid = stack.pop()
        sizes.append(_rss_mb(pid))
        stack.extend(children.get(pid, ()))
    return sum(sizes), max(sizes, default=0.0)


class _Sampler(threading.Thread):
    def __init__(self, pid: int, interval: float):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_tree = self.peak_process = 0.0
        self.done = threading.Event()

    def run(self):
        while not self.done.wait(self.interval):
            total, largest = tree_rss(self.pid)
            self.peak_tree = max(self.peak_tree, total)
            self.peak_process = max(self.peak_process, largest)


def run_measured(cmd: list[str], cwd: Path, env: dict, log: Path, interval: float = 0.25) -> Measured:
    """Run ``cmd``, its output appended to ``log``; wall time and peak memory (sampled on Linux)."""
    can_sample = Path("/proc/self/statm").exists()
    with open(log, "a") as out:
        out.write(f"$ (cd {cwd} && {' '.join(cmd)})\n")
        out.flush()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        busy_before = busy_cpu_seconds()
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        sampler = _Sampler(proc.pid, interval) if can_sample else None
        if sampler:
            sampler.start()
        returncode = proc.wait()
        seconds = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        busy_after = busy_cpu_seconds()
        if sampler:
            sampler.done.set()
            sampler.join()
        out.write(f"# exit {returncode}, {seconds:.2f} s\n\n")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    others = None if busy_before is None or busy_after is None else max(busy_after - busy_before - cpu, 0.0)
    return Measured(
        seconds,
        returncode,
        cpu,
        others,
        round(sampler.peak_tree, 1) if sampler else None,
        round(sampler.peak_process, 1) if sampler else None,
    )


def busy_cpu_seconds() -> float | None:
    """CPU seconds every program on this machine has used since boot (Linux /proc/stat), else None."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = (int(x) for x in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def machine() -> dict:
    """What the figures were measured on."""
    info = {
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["memory_gb"] = round(int(line.split()[1]) / 2**20, 1)
                break
    except OSError:
        pass
    info["commit"] = _commit()
    from importlib.metadata import PackageNotFoundError, version

    for package in ("jax", "nbgrader", "hypothesis"):
        try:
            info[package] = version(package)
        except PackageNotFoundError:
            info[package] = None
    return info


def _commit() -> str | None:
    """The checkout's commit, marked when files differ from it (the figures belong to that code)."""
    root = REPO_ROOT
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True)
    except OSError:
        return None
    if head.returncode:
        return None
    return head.stdout.strip() + (" + uncommitted changes" if dirty.stdout.strip() else "")


def publish(figures: dict, text: str, json_path: Path | None, say) -> dict:
    """Print a benchmark's report, and write its figures as JSON where asked; the figures."""
    say("")
    say(text)
    if json_path:
        Path(json_path).write_text(json.dumps(figures, indent=2) + "\n")
        say(f"\nfigures written to {json_path}")
    return figures
