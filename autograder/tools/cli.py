"""Command line of the course tooling.

    python -m autograder demo [--course-dir DIR]
    python -m autograder autograde ASSIGNMENT [--workers N | --scheduler tls://HOST:PORT --cluster-keys DIR]
                                                       (in the course folder)
    python -m autograder cluster-keys DIR              (the TLS keys of a grading Dask cluster)
    python -m autograder bench [--students N] [--workers N] [--class] [--json PATH]
    python -m autograder bench --distributed [--students N] [--cluster-workers 1,2,4] [--db-url URL]
    python -m autograder check [--repo DIR] [--quick]
    python -m autograder report ASSIGNMENT | --all [--course-dir DIR]   (in the course folder)
    python -m autograder mutants ASSIGNMENT... | --all [--workers N] [--operator NAME]
    python -m autograder selfcheck                     (writes source/<a>/selfcheck.py from autograder/public/)
    python -m autograder upgrade-check --jax VERSION [--python PYTHON] [--assignment NAME] [--work-dir DIR]
    python -m autograder device-check [--accelerator tpu] [--assignment NAME] [--correct-only] [--shard K/N]
                                                       (the corpus on an accelerator and on the CPU, compared)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from autograder.tools.errors import ToolError
from autograder.tools.repository import REPO_ROOT

# Each command imports what it needs when it runs (nbgrader, JAX, matplotlib take seconds to import).


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m autograder", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser(
        "demo",
        help="grade the bundled sample submissions through a full nbgrader cycle",
        description="Release the course in a scratch folder, submit the samples in tests/samples "
        "as students sample-correct, sample-partial and sample-empty, autograde, "
        "and print their grades and the feedback folder.",
    )
    demo.add_argument("--course-dir", type=Path, help="new or empty folder for the scratch course "
                      "(outside the repository; default: a new temporary folder, kept afterwards)")
    demo.add_argument("--assignment", action="append", dest="assignments", metavar="NAME",
                      help="grade only this assignment (repeatable; default: all in source/)")
    demo.add_argument("--workers", type=int, default=None, metavar="N",
                      help="students autograded at once (default: one per core)")
    demo.add_argument("--db-url", metavar="URL", help="the gradebook, as an SQLAlchemy URL "
                      "(postgresql+psycopg2://USER:PASSWORD@HOST:PORT/DB); default: gradebook.db in the course")

    grade = commands.add_parser(
        "autograde",
        help="autograde an assignment's students in parallel with nbgrader's own machinery",
        description="Run in the course folder, like nbgrader autograde. Grades several students at once, "
        "into the same autograded/ folder and gradebook, with the grades a serial nbgrader autograde gives. "
        "Students already fully graded are skipped, so after Ctrl-C or a crash the same command resumes.",
    )
    grade.add_argument("assignment", metavar="ASSIGNMENT")
    grade.add_argument("--workers", type=int, default=None, metavar="N",
                       help="students graded at once (default: one per core)")
    grade.add_argument("--student", action="append", dest="students", metavar="ID",
                       help="grade only this student (repeatable; default: every submission)")
    grade.add_argument("--force", action="store_true", help="grade students already graded again")
    grade.add_argument("--course-dir", type=Path, default=Path("."),
                       help="the course folder, holding nbgrader_config.py (default: the working folder)")
    grade.add_argument("--log", type=Path, metavar="FILE", help="append nbgrader's full output for each student here")
    grade.add_argument("--db-url", metavar="URL", help="the gradebook, as an SQLAlchemy URL, instead of the one "
                       "nbgrader_config.py names (its default: gradebook.db in the course folder)")
    grade.add_argument("--json", type=Path, metavar="PATH",
                       help="also write each student's outcome and the timings as JSON")
    grade.add_argument("--scheduler", metavar="ADDRESS",
                       help="grade on the Dask cluster of this scheduler (tls://HOST:8786) instead of here: "
                       "one task per student on the cluster's workers, which must mount the course folder at "
                       "the same path (see docs/cluster.md)")
    grade.add_argument("--cluster-keys", type=Path, metavar="DIR",
                       help="with --scheduler: the folder of the cluster's TLS keys, made by "
                       "`python -m autograder cluster-keys DIR` (default: those Dask's configuration names, "
                       "distributed.comm.tls.*)")

    keys = commands.add_parser(
        "cluster-keys",
        help="make the TLS keys of a grading Dask cluster (docs/cluster.md)",
        description="Write a new certificate authority's certificate (ca.pem) and the cluster's certificate and "
        "key (cluster.pem, cluster-key.pem) into DIR, a folder of yours alone (made, mode 0700; files 0600). "
        "The scheduler, the workers and the driver all use them; a Dask peer without them cannot connect. "
        "Prints the commands that start the scheduler and the workers with them.",
    )
    keys.add_argument("folder", type=Path, metavar="DIR")

    bench = commands.add_parser(
        "bench",
        help="measure what the graders add to plain nbgrader, and the parallel speed-up",
        description="Build scratch courses with N synthetic students per assignment and autograde the same "
        "submissions three ways, side by side: (a) nbgrader with the hidden grader calls removed, "
        "(b) nbgrader with the real graders, (c) python -m autograder autograde with the real graders. "
        "Prints seconds per notebook, b/a, the speed-up of c over b, JAX compiles and hypothesis examples "
        "per property and peak memory.",
    )
    bench.add_argument("--students", type=int, default=4, metavar="N",
                       help="synthetic students per assignment (default 4)")
    bench.add_argument("--workers", type=int, default=2, metavar="W", help="workers of the parallel run (default 2)")
    bench.add_argument("--assignment", action="append", dest="assignments", metavar="NAME",
                       help="only this assignment (repeatable; default: all in source/)")
    bench.add_argument("--class", dest="mix", action="store_const", const="class", default="copies",
                       help="hand in a class: the independent students' answers from tests/corpus (correct ones "
                       "in their own styles, mistakes, a partial notebook) instead of the samples' copies")
    bench.add_argument("--json", type=Path, metavar="PATH", help="write the figures here as JSON")
    bench.add_argument("--work-dir", type=Path, metavar="DIR",
                       help="new or empty folder for the scratch courses (default: a new temporary folder, kept)")
    bench.add_argument("--distributed", action="store_true",
                       help="instead: notebooks per second on a real Dask cluster on this machine, for each "
                       "--cluster-workers count, beside the local parallel command with --workers W")
    bench.add_argument("--cluster-workers", default="1,2,4", metavar="N,N,...",
                       help="with --distributed: the clusters' worker counts (default 1,2,4)")
    bench.add_argument("--db-url", metavar="URL", help="with --distributed: the course's gradebook, as an "
                       "SQLAlchemy URL of an empty database (default: gradebook.db in the scratch course)")

    device = commands.add_parser(
        "device-check",
        help="grade the corpus and samples, and run the self-checks, on an accelerator and on the CPU; print the "
        "differences",
        description="Grade every corpus file and sample in-process (as tests/test_graders.py does), once in a child "
        "on the accelerator and once in a child with JAX_PLATFORMS=cpu, run the public self-check on the correct "
        "ones, and print the files whose points or verdicts differ. Exits 1 if a correct file differs. Needs JAX, "
        "NumPy and hypothesis, not nbgrader (docs/accelerators.md).",
    )
    device.add_argument("--accelerator", default="", metavar="PLATFORM",
                        help="JAX_PLATFORMS of the accelerator's side (default: unset, JAX's own choice)")
    device.add_argument("--assignment", action="append", dest="assignments", metavar="NAME",
                        help="only this assignment (repeatable; default: all)")
    device.add_argument("--correct-only", action="store_true", help="only the files that should earn every point")
    device.add_argument("--shard", metavar="K/N", help="only every N-th file, from the K-th (1-based)")
    device.add_argument("--jobs", type=int, default=0, metavar="N",
                        help="processes of the CPU side (default: cores - 2, at most 8)")
    device.add_argument("--out", type=Path, metavar="DIR", help="where each side's JSON lines and log go "
                        "(default: a new temporary folder)")
    device.add_argument("--only", choices=("both", "accelerator", "cpu"), default="both",
                        help="grade one side only (compare later with --compare)")
    device.add_argument("--compare", nargs=2, type=Path, metavar=("ACCEL.jsonl", "CPU.jsonl"),
                        help="print the table from two kept result files instead of grading")

    lint = commands.add_parser(
        "check",
        help="the course's linter: grade cells against property modules, release/ in sync, samples and corpus",
        description="Check that every grade cell calls an existing group with that group's points, that every "
        "group has one grade cell, that release/ is what nbgrader makes of source/ and hides what it must, that "
        "property modules import only autograder.kit, that every assignment has samples and a corpus, and that "
        "its mutants were graded since it last changed with no survivor left undeclared. "
        "Prints one line per problem, naming the notebook, the cell and the fix; exits 1 if there is any.",
    )
    lint.add_argument("--repo", type=Path, default=REPO_ROOT, metavar="DIR",
                      help="the course repository (default: the one this package is in)")
    lint.add_argument("--quick", action="store_true", help="skip regenerating release/ with nbgrader")

    rep = commands.add_parser(
        "report",
        help="the class report of an autograded assignment: scores, pass rates, common failures, students to look at",
        description="Run in the course folder after autograding. Reads the gradebook and the feedback in "
        "autograded/<student>/<assignment>/, writes reports/<assignment>.html (self-contained: charts inline) "
        "and prints the number of students, the mean score and the three hardest properties.",
    )
    rep.add_argument("assignments", nargs="*", metavar="ASSIGNMENT")
    rep.add_argument("--all", action="store_true", dest="every",
                     help="every assignment the gradebook or autograded/ has")
    rep.add_argument("--course-dir", type=Path, default=Path("."),
                     help="the course folder, holding nbgrader_config.py (default: the working folder)")

    mut = commands.add_parser(
        "mutants",
        help="grade mutants of the reference solutions: every realistic mistake should lose points",
        description="Write one mistake at a time into the source notebook's solution cells (generic operators: "
        "comparisons, arithmetic, constants, slices, axes, dtypes, returns, refusals; and the course's own: drop a "
        "jit, jit an inner function only, jit afresh on every call, make an argument static, a Python loop for a "
        "structured one, a keyword for a position, a host read in a loop, a jit mapped leaf by leaf, a recursion "
        "cut short, repeated sub-jaxprs counted once, an input tidied up instead of refused, an argument read from a "
        "holder while tracing and so baked in), grade each in a fresh "
        "process with the property module, and report per operator how many lose points, with the diff of each "
        "survivor. Records the run beside the property module for `check`; exits 1 if a survivor is not declared "
        "equivalent in autograder/properties/<assignment>.equivalent.toml.",
    )
    mut.add_argument("assignments", nargs="*", metavar="ASSIGNMENT")
    mut.add_argument("--all", action="store_true", dest="every", help="every assignment of the course")
    mut.add_argument("--workers", type=int, default=None, metavar="N", help="mutants graded at once (default: one per core)")
    mut.add_argument("--operator", action="append", dest="operators", metavar="NAME",
                     help="only this operator (repeatable; the record is then not written)")
    mut.add_argument("--repo", type=Path, default=REPO_ROOT, metavar="DIR", help="the course repository")

    commands.add_parser(
        "selfcheck",
        help="write each assignment's source/<a>/selfcheck.py from autograder/public/",
        description="Join the self-check runner and each assignment's public checks into the selfcheck.py "
        "beside its source notebook (then regenerate release/ with nbgrader generate_assignment).",
    )
    up = commands.add_parser(
        "upgrade-check",
        help="what another JAX would change: claims, corpus grades and XLA flags, in a throwaway environment",
        description="Build a virtual environment with jax and jaxlib at VERSION (the course's other pins kept), "
        "run the notebooks' claims test there and grade every corpus file as the grading kernels compile, and "
        "report per claim, per corpus file and per property what no longer holds, and which XLA flags that XLA "
        "does not know. Exits 1 if anything the course holds on its pin does not hold there (docs/upgrading.md).",
    )
    up.add_argument("--jax", required=True, metavar="VERSION", help="the jax and jaxlib version to check, e.g. 0.12.0.1")
    up.add_argument("--python", default=sys.executable, metavar="PYTHON",
                    help="the interpreter of the new environment (default: this one; JAX 0.11 and later need 3.12+)")
    up.add_argument("--assignment", action="append", dest="assignments", metavar="NAME",
                    help="only this assignment's claims and corpus (repeatable; default: all)")
    up.add_argument("--work-dir", type=Path, metavar="DIR",
                    help="where the environment is built, and reused by a later check of the same versions "
                    "(default: a new temporary folder, kept)")
    up.add_argument("--workers", type=int, default=2, metavar="N", help="corpus files graded at once (default 2)")
    up.add_argument("--json", type=Path, metavar="PATH", help="write what the probe found here as JSON")

    args = parser.parse_args(argv)
    try:
        if args.command == "upgrade-check":
            from autograder.tools import upgrade

            return upgrade.run(args.jax, args.python, args.work_dir, args.assignments, args.workers, args.json)
        if args.command == "device-check":
            from autograder.tools import device_check

            return device_check.main(args.accelerator, args.assignments, args.correct_only, args.shard, args.jobs,
                                     args.out, args.compare, args.only)
        if args.command == "selfcheck":
            from autograder.tools import release_selfcheck as selfcheck
            return selfcheck.main()
        if args.command == "check":
            from autograder.tools import check

            return check.main(args.repo, regenerate=not args.quick)
        if args.command == "mutants":
            from autograder.grading.registry import assignments
            from autograder.tools.mutants import run as mutants

            if args.every == bool(args.assignments):
                parser.error("mutants: give assignments or --all (one of the two)")
            chosen = list(assignments()) if args.every else args.assignments
            return mutants.run(chosen, args.repo.resolve(), args.workers, set(args.operators or ()) or None)
        if args.command == "report":
            if args.every and args.assignments:
                parser.error("report: give assignments or --all, not both")
            from autograder.tools import report

            return report.main(args.assignments, args.course_dir, every=args.every)
        if args.command == "cluster-keys":
            from autograder.tools.parallel import clusterkeys

            print(clusterkeys.recipe(clusterkeys.make_keys(args.folder)))
            return 0
        if args.command == "demo":
            from autograder.tools.demo import demo as run_demo

            run_demo(args.course_dir, args.assignments, args.workers, args.db_url)
        elif args.command == "autograde":
            if args.scheduler:
                from autograder.tools.parallel import cluster

                if args.workers is not None:
                    raise ToolError("autograde: --workers and --scheduler do not go together: "
                                    "the cluster's workers grade (dask worker --nworkers N)")
                result = cluster.autograde(
                    args.assignment, args.scheduler, args.course_dir, args.students, args.force, log=args.log,
                    db_url=args.db_url, keys=args.cluster_keys,
                )
            else:
                if args.cluster_keys is not None:
                    raise ToolError("autograde: --cluster-keys goes with --scheduler")
                from autograder.tools.parallel import run as parallel

                result = parallel.autograde(
                    args.assignment, args.course_dir, args.workers, args.students, args.force, log=args.log,
                    db_url=args.db_url,
                )
            if args.json:
                args.json.write_text(json.dumps(result.as_json(), indent=2) + "\n")
            return result.exit_code
        elif args.command == "bench":
            from autograder.tools.bench.run import run_bench

            if args.distributed:
                from autograder.tools.bench.distributed import run_distributed

                if args.mix != "copies":
                    raise ToolError("bench: --class goes with the plain bench, not with --distributed")
                try:
                    counts = tuple(int(n) for n in args.cluster_workers.split(","))
                except ValueError:
                    raise ToolError(f"bench: --cluster-workers wants counts like 1,2,4, not {args.cluster_workers!r}")
                run_distributed(args.students, counts, args.workers, args.assignments, args.json, args.work_dir,
                                args.db_url)
            elif args.db_url or args.cluster_workers != "1,2,4":
                raise ToolError("bench: --db-url and --cluster-workers go with --distributed")
            else:
                run_bench(args.students, args.workers, args.assignments, args.json, args.work_dir, mix=args.mix)
    except ToolError as err:
        print(err, file=sys.stderr)
        return 1
    return 0
