"""``python -m autograder device-check``: the corpus and the samples graded, and the self-checks run,
on an accelerator and on the same machine's CPU; the differences printed.

Made for a machine with JAX and an accelerator but no nbgrader (numpy, hypothesis and flatbuffers beside
JAX; it stops at once, naming them, without one of the last two): each file is graded in-process as ``tests/test_graders.py`` grades it (the judge's session
against the file's namespace, the kernel's serving code run in place of each grade cell), once in a
child with the accelerator as JAX's platform and once in a child with ``JAX_PLATFORMS=cpu``, the two
at once (the CPU side with ``--jobs`` processes; the accelerator's in one, which holds the chip). Both
compile with the grading kernels' XLA flags. The correct files (the corpus's files that declare no
``FAILS``, and each sample ``correct.ipynb``) also run every part of their assignment's public
self-check, as released (``autograder/public/`` joined as ``python -m autograder selfcheck`` joins it).

It prints one line per file whose points or self-check verdicts differ between the two platforms, or
that does not earn what it declares, then a summary; it exits 1 if any correct file differs (points
or a verdict) or is missing from either side. Each side's results are kept as JSON lines in
``--out`` (default: a new temporary folder), and ``--compare ACCEL.jsonl CPU.jsonl`` prints the table
again from two kept files (two runs split with ``--shard``, say, concatenated first).

A command on the lent machine may run at most 10 minutes: split the corpus with ``--assignment`` or
``--shard K/N``, or grade the correct files alone with ``--correct-only``. docs/accelerators.md.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from autograder.grading import backend
from autograder.tools.repository import REPO_ROOT, as_a_kernel_starts, declared, is_correct

CORPUS = REPO_ROOT / "tests" / "corpus"
SAMPLES = REPO_ROOT / "tests" / "samples"
#: What must never be imported here: the device machine has no nbgrader.
_ABSENT = ("nbgrader", "nbconvert", "nbformat", "jupyter_client", "traitlets")


def files(assignments: list[str] | None = None, correct_only: bool = False, shard: str | None = None) -> list[Path]:
    """The corpus files and sample notebooks to grade, in a fixed order."""
    chosen = sorted(CORPUS.glob("*/*.py")) + sorted(SAMPLES.glob("*/*.ipynb"))
    if assignments:
        chosen = [p for p in chosen if p.parent.name in assignments]
    if correct_only:
        chosen = [p for p in chosen if is_correct(p)]
    if shard:
        index, count = (int(n) for n in shard.split("/"))
        chosen = chosen[index - 1::count]
    return chosen


# ------------------------------------------------------------------------------ one side (a child)


def _load(path: Path):
    """The file's submission, as tests/test_graders.py loads it; a notebook's code cells run in this
    process (IPython's transforms where IPython is installed, else its magic lines left out)."""
    from autograder import from_notebook, from_python

    if path.suffix == ".py":
        return from_python(path)
    try:
        import IPython  # noqa: F401
        return from_notebook(path)
    except ImportError:
        pass
    from autograder.grading import drawn
    from autograder.grading.cells import is_autograder_test
    from autograder.grading.submission import Submission

    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    sources = ["".join(c.get("source", "")) for c in cells if c.get("cell_type") == "code" and not is_autograder_test(c)]
    namespace: dict = {"__name__": "__main__"}
    for index, source in enumerate(sources):
        code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
        try:
            exec(compile(code, f"{path.name}[cell {index}]", "exec"), namespace)  # noqa: S102 - the course's own sample
        except Exception as error:  # noqa: BLE001 - a sample's cell that raises, as a kernel reports it
            print(f"{path.name}: cell {index} raised {type(error).__name__}: {error}", file=sys.stderr)
    submission = Submission(namespace, label=f"`{path.name}`")
    drawn.note(submission.notebook_memo, sources)
    return submission


def _grade(path: Path) -> dict:
    """Points per grade cell and the failed properties, graded as tests/test_graders.py grades."""
    from autograder import group_points
    from autograder.grading import judge

    as_a_kernel_starts()
    submission = _load(path)
    assignment = path.parent.name
    earned, failed = {}, []
    for group in group_points(assignment):
        session = judge.Session(assignment, group, submission.notebook_memo, folder=_sockets())
        exec(session.kernel_code, submission.namespace)  # noqa: S102 - what the kernel runs in place of the cell
        report = session.finish()
        earned[group] = report.earned
        failed += [r.prop.name for r in report.results if not r.passed]
    return {"earned": earned, "points": sum(earned.values()), "failed": sorted(failed)}


_SOCKETS: list[str] = []


def _sockets() -> str:
    """A private folder where the judge listens: a Unix socket, as for a confined kernel (a machine
    with no network, such as the lent TPU's, has no loopback address to listen on)."""
    if not _SOCKETS:
        folder = os.path.join(tempfile.mkdtemp(prefix="device-check-"), "sockets")
        os.mkdir(folder, 0o700)
        _SOCKETS.append(folder)
    return _SOCKETS[0]


_SELF_CHECKS: dict[str, dict] = {}


def _self_check(path: Path) -> dict:
    """Every part of the assignment's released self-check on a fresh load of the file: part -> statuses."""
    from autograder.tools import release_selfcheck

    assignment = path.parent.name
    if assignment not in release_selfcheck.assignments_with_checks():
        return {}
    if assignment not in _SELF_CHECKS:
        module: dict = {"__name__": f"selfcheck_{assignment}"}
        exec(compile(release_selfcheck.render(assignment), f"{assignment}/selfcheck.py", "exec"), module)  # noqa: S102
        _SELF_CHECKS[assignment] = module
    module = _SELF_CHECKS[assignment]
    namespace = _load(path).namespace
    parts = list(dict.fromkeys(check.part for check in module["CHECKS"]))
    verdicts = {}
    for part in parts:
        report = module["run"](part, namespace, assignment)
        verdicts[part] = [f"{r.status}: {r.check.title}" for r in report.results]
    return verdicts


def _one(path_text: str) -> dict:
    path = Path(path_text)
    began = time.monotonic()
    row = {"file": str(path.relative_to(REPO_ROOT)), "correct": is_correct(path),
           "declared_score": declared(path, "SCORE"),
           "declared_fails": sorted(declared(path, "FAILS", set()) or ())}
    try:
        if row["correct"]:
            row["selfcheck"] = _self_check(path)
        row.update(_grade(path))
    except Exception as error:  # noqa: BLE001 - one file's fault is a row, not the end of the run
        row["error"] = f"{type(error).__name__}: {error}\n{traceback.format_exc()[-1500:]}"
    row["seconds"] = round(time.monotonic() - began, 2)
    return row


def _kernels_flags(env: dict) -> dict:
    from autograder.grading import compiler

    return compiler.kernel_environment(env)


def side(paths: list[str], out: Path, jobs: int) -> int:
    """Grade ``paths`` here (a child of :func:`main`, its platform set by JAX_PLATFORMS), a JSON line each."""
    import jax

    from autograder.kit import precision

    device = jax.devices()[0]
    measured = precision.measured()
    header = {"platform": device.platform, "device": getattr(device, "device_kind", str(device)),
              "jax": jax.__version__, "jax_platforms": os.environ.get("JAX_PLATFORMS", ""),
              "xla_flags": os.environ.get("XLA_FLAGS", ""), "precision": repr(measured),
              "excess": measured.excess(), "excess_products": measured.excess(products=True),
              "imported": sorted(m for m in _ABSENT if m in sys.modules)}
    with open(out, "w", encoding="utf-8") as sink:
        sink.write(json.dumps({"header": header}) + "\n")
        sink.flush()
        if jobs <= 1:
            rows = map(_one, paths)
            pool = None
        else:
            # Fresh interpreters (this one's JAX has started): this process's environment, its platform
            # and the kernels' XLA flags included.
            pool = concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"))
            rows = pool.map(_one, paths)
        for row in rows:
            sink.write(json.dumps(row) + "\n")
            sink.flush()
        if pool is not None:
            pool.shutdown()
    return 0


# ------------------------------------------------------------------------------ both sides, compared


def read(path: Path) -> tuple[dict, dict[str, dict]]:
    header, rows = {}, {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if "header" in record:
            header = header or record["header"]
        else:
            rows[record["file"]] = record
    return header, rows


def compare(accelerator: Path, cpu: Path, out=sys.stdout) -> int:
    """The table of differences; 1 if a correct file differs or is missing on a side."""
    (head_a, rows_a), (head_c, rows_c) = read(accelerator), read(cpu)
    for name, head in (("accelerator", head_a), ("cpu", head_c)):
        print(f"{name}: {head.get('platform')} ({head.get('device')}), jax {head.get('jax')}, JAX_PLATFORMS="
              f"{head.get('jax_platforms')!r}, {head.get('precision')}, tolerance excess {head.get('excess', 0):.3g} "
              f"(products {head.get('excess_products', 0):.3g})" + (f"; IMPORTED {head['imported']}" if head.get("imported") else ""),
              file=out)
    lines, bad, same = [], 0, 0
    for file in sorted(set(rows_a) | set(rows_c)):
        a, c = rows_a.get(file), rows_c.get(file)
        correct = (a or c)["correct"]
        if a is None or c is None:
            lines.append(f"{file:60} {'missing on ' + ('the accelerator' if a is None else 'the cpu'):>30}")
            bad += correct
            continue
        score = a.get("declared_score") if a.get("declared_score") is not None else None
        pa, pc = a.get("points", "error"), c.get("points", "error")
        checks_differ = a.get("selfcheck", {}) != c.get("selfcheck", {})
        off = [side for side, row in (("accel", a), ("cpu", c))
               if "error" in row or (score is not None and row.get("points") != score)
               or (correct and any(not v.startswith("pass") for vs in row.get("selfcheck", {}).values() for v in vs))]
        if pa == pc and not checks_differ and not off:
            same += 1
            continue
        if correct and (pa != pc or checks_differ or "error" in a or "error" in c):
            bad += 1
        note = []
        if pa != pc:
            only = sorted(set(a.get("failed", [])) ^ set(c.get("failed", [])))
            note.append(f"failed on one side only: {', '.join(only)}")
        if checks_differ:
            for part in sorted(set(a.get("selfcheck", {})) | set(c.get("selfcheck", {}))):
                va, vc = a.get("selfcheck", {}).get(part), c.get("selfcheck", {}).get(part)
                if va != vc:
                    note.append(f"self-check {part}: accel {_short(va)} / cpu {_short(vc)}")
        if off:
            note.append(f"not as declared on {', '.join(off)}")
        for row, side_name in ((a, "accel"), (c, "cpu")):
            if "error" in row:
                note.append(f"{side_name} error: {row['error'].splitlines()[0]}")
        lines.append(f"{file:60} {'correct' if correct else 'wrong':7} accel {pa!s:>5} cpu {pc!s:>5} "
                     f"declared {score!s:>5}  {'; '.join(note)}")
    print(f"\n{'file':60} {'kind':7} points on each backend", file=out)
    for line in lines:
        print(line, file=out)
    print(f"\n{same} file(s) the same on both backends and as declared; {len(lines)} listed; "
          f"{bad} correct file(s) that differ or are missing.", file=out)
    return 1 if bad else 0


def _short(verdicts) -> str:
    if verdicts is None:
        return "not run"
    return ", ".join(v.split(":", 1)[0] for v in verdicts)


#: What grading needs here beyond JAX and NumPy, as the course's dependencies have it (pyproject.toml):
#: without flatbuffers, jax.export cannot serialize host_sync's substitute step for the kernel, and every
#: trainer property fails alike on both sides ("'Described' object is not callable"), as it did on the
#: lent TPU machine until 2026-12-07.
NEEDS = ("hypothesis", "flatbuffers")


def missing() -> list[str]:
    """The packages of :data:`NEEDS` this Python cannot import."""
    import importlib.util

    return [name for name in NEEDS if importlib.util.find_spec(name) is None]


def main(accelerator: str = "", assignments: list[str] | None = None, correct_only: bool = False,
         shard: str | None = None, jobs: int = 0, out: Path | None = None, compare_files: list[Path] | None = None,
         only: str = "both") -> int:
    if compare_files:
        return compare(*compare_files)
    if missing():
        print(f"device-check: cannot grade here: {', '.join(missing())} not installed (the course's own "
              "dependencies, pure Python: pip install them, or carry their wheels). Without flatbuffers, "
              "host_sync's step cannot travel to the kernel and its trainers lose every point.", file=sys.stderr)
        return 2
    chosen = files(assignments, correct_only, shard)
    if not chosen:
        print("device-check: no file chosen", file=sys.stderr)
        return 2
    out = Path(out or tempfile.mkdtemp(prefix="device-check-"))
    out.mkdir(parents=True, exist_ok=True)
    jobs = jobs or max(1, min(8, (os.cpu_count() or 2) - 2))
    base = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), base.get("PYTHONPATH")]))
    sides = {"accelerator": ({**base, **({"JAX_PLATFORMS": backend.with_host(accelerator)} if accelerator else {})}, 1),
             "cpu": ({**base, "JAX_PLATFORMS": "cpu"}, jobs)}
    if only != "both":
        sides = {only: sides[only]}
    listing = out / "files.json"
    listing.write_text(json.dumps([str(p) for p in chosen]), encoding="utf-8")
    began = time.monotonic()
    print(f"device-check: {len(chosen)} file(s), {sum(map(is_correct, chosen))} correct; results in {out}", flush=True)
    running = {}
    for name, (env, n) in sides.items():
        running[name] = subprocess.Popen(
            [sys.executable, "-m", __name__, "--side", str(out / f"{name}.jsonl"), "--jobs", str(n),
             "--files", str(listing)], env=_kernels_flags(env), cwd=REPO_ROOT, stdin=subprocess.DEVNULL,
            stdout=open(out / f"{name}.log", "w"), stderr=subprocess.STDOUT)
    codes = {name: proc.wait() for name, proc in running.items()}
    print(f"device-check: graded in {time.monotonic() - began:.0f} s (exit codes {codes}; logs in {out})", flush=True)
    if only != "both":
        return codes[only]
    return compare(out / "accelerator.jsonl", out / "cpu.jsonl")


def _side_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.tools.device_check")
    parser.add_argument("--side", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--files", type=Path, required=True)
    args = parser.parse_args(argv)
    return side(json.loads(args.files.read_text(encoding="utf-8")), args.side, args.jobs)


if __name__ == "__main__":
    sys.exit(_side_main(sys.argv[1:]))
