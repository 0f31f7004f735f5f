"""Which JAX graded, said beside every grading run: the behaviours the course teaches (a cache-miss
explanation's words, an event's name), and so its grades, can change with the version. Imports
nothing heavy: the parallel command's coordinator says it too."""

from __future__ import annotations


def graded_with() -> str:
    """Which JAX the judge graded with, against the one the course pins: the behaviours the course
    teaches (a cache-miss explanation's words, an event's name), and so grades, can change with it."""
    from importlib.metadata import PackageNotFoundError, requires, version

    try:
        pins = dict(r.split("==", 1) for r in requires("jax-tracing-course") or () if r.startswith("jax") and "==" in r)
    except PackageNotFoundError:  # run from a checkout that was not installed
        pins = {}
    found, differs = [], []
    for package in ("jax", "jaxlib"):
        try:
            have = version(package)
        except PackageNotFoundError:
            have = None
        found.append(f"{package} {have or '(missing)'}")
        if package in pins and have != pins[package]:
            differs.append(f"{package} {pins[package]}")
    line = "Graded with " + ", ".join(found)
    if differs:
        return (line + f": NOT the version the course is verified on ({', '.join(differs)}); a behaviour the "
                "notebooks teach, and so a grade, may differ")
    return line + (": the version the course is verified on" if pins else "")
