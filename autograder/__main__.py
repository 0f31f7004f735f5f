"""Command line of the course tooling: ``python -m autograder demo [--course-dir DIR]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder import cycle


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
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

    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            cycle.demo(args.course_dir, args.assignments)
    except cycle.CycleError as err:
        print(err, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
