"""Does a submitted notebook reach into the grading code? A scan of what the student wrote.

In nbgrader's process, before the notebook runs (:class:`autograder.confinement.preprocessors.ConfinedExecute`
calls :func:`note`). Evidence the kernel reports (what a call raised, JAX's trace and compile
events, staged jaxprs, host reads, how often a thunk was called, the tamper report) cannot be
made unforgeable while the student's code shares the process that reports it: code written
against the serving agent can rewrite its replies. But an honest notebook has no reason to name
the grading package, dig through the interpreter's objects or frames, or build code from strings.
This module says which code cells do, and how; the judge (:func:`autograder.grading.grade.run_group`)
then withholds the points of every property whose verdict rested on such evidence, says so in
the feedback, and leaves the decision to the instructor.

What is scanned: every code cell but the course's own autograder test cells (their source is the
gradebook's, put back by nbgrader). How: the cell's syntax tree (imports, attribute and name
references, calls, the strings it can fold from constants) and, across the cell, every short
string constant joined and normalised (so ``"auto" + "grader"`` built in two variables is seen).
Prose strings (several words) and comments are not read: a sentence about the autograder is not
a reference to it. A cell that cannot be parsed is read as text only.

What it does not see: a reference assembled from data the scan cannot fold (numbers turned into
text without ``chr``, a file's contents, values computed at run time), code in files handed in
beside the notebook (the sandbox drops that folder from ``sys.path``) or in a package the kernel
imports. It is a tripwire for writing against the grader, not a proof of honesty.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from autograder.grading.cells import is_autograder_test, nbgrader_of

#: Where the findings of a notebook live in its :attr:`Submission.notebook_memo` (nbgrader's process).
KEY = "autograder reach"

#: Modules whose import alone is reaching: the grading package, and tools for walking the
#: interpreter's objects or memory.
_MODULES = {
    "autograder": "the grading package",
    "gc": "the garbage collector's object lists",
    "ctypes": "raw memory access",
}
#: Attribute names no honest notebook of this course needs, on whatever object.
_ATTRIBUTES = {
    "_getframe": "frame inspection", "_current_frames": "frame inspection", "f_back": "frame inspection",
    "f_globals": "frame inspection", "f_locals": "frame inspection", "f_code": "frame inspection",
    "tb_frame": "frame inspection", "tb_next": "frame inspection", "gi_frame": "frame inspection",
    "cr_frame": "frame inspection", "ag_frame": "frame inspection", "co_filename": "frame inspection",
    "__traceback__": "frame inspection",
    "get_objects": "the garbage collector's object lists", "get_referrers": "the garbage collector's object lists",
    "get_referents": "the garbage collector's object lists",
    "__globals__": "a function's hidden state", "__closure__": "a function's hidden state",
    "cell_contents": "a function's hidden state",
    "__code__": "a function's hidden state", "__subclasses__": "a walk of every class",
    "__builtins__": "the interpreter's built-ins",
    "settrace": "a tracer on every call", "setprofile": "a tracer on every call",
    "meta_path": "the import system", "path_hooks": "the import system", "import_module": "the import system",
    # the serving side's objects (autograder.grading.serve, wire, judge, integrity)
    "Agent": "the grader's serving objects", "answer": "the grader's serving objects",
    "serve": "the grader's serving objects", "wire": "the grader's serving objects",
    "judge": "the grader's serving objects", "grading": "the grader's serving objects",
    "RemoteSubmission": "the grader's serving objects", "tampered": "the grader's serving objects",
    "integrity": "the grader's serving objects", "observing": "the grader's serving objects",
}
#: Attributes that are reaching only on one module (``jnp.stack`` and ``jitted.trace`` are the lesson's).
_MODULE_ATTRIBUTES = {
    "sys": {"modules": "the interpreter's module table"},
    "inspect": {name: "frame inspection" for name in (
        "stack", "currentframe", "getouterframes", "getinnerframes", "trace", "getframeinfo")}
               | {"getclosurevars": "a function's hidden state"},
    "traceback": {name: "frame inspection" for name in (
        "extract_stack", "walk_stack", "format_stack", "print_stack")},
    "base64": {name: "text decoded at run time" for name in (
        "b64decode", "b32decode", "b16decode", "b85decode", "a85decode", "urlsafe_b64decode", "decodebytes")},
    "codecs": {name: "text decoded at run time" for name in ("decode", "encode", "getdecoder", "lookup")},
    "binascii": {name: "text decoded at run time" for name in ("unhexlify", "a2b_base64", "a2b_hex")},
    "zlib": {"decompress": "text decoded at run time"},
    "bytes": {"fromhex": "text decoded at run time"},
    "importlib": {name: "the import system" for name in ("import_module", "reload", "util", "machinery")},
    "builtins": {name: "code built at run time" for name in ("exec", "eval", "compile", "__import__")},
}
#: Built-ins whose call is reaching: code run from strings, names imported from strings, text from codes.
_CALLS = {
    "exec": "code built at run time", "eval": "code built at run time", "compile": "code built at run time",
    "__import__": "the import system", "chr": "text built from character codes",
    "vars": "a namespace read as a table (a module's, a class's)",
}
#: Strings that name what an honest notebook never names: any string holding these (normalised).
_NAMED = {
    "autograder": "the grading package", "remotesubmission": "the grader's serving objects",
    "getframe": "frame inspection", "currentframes": "frame inspection", "fback": "frame inspection",
    "tbframe": "frame inspection", "fglobals": "frame inspection",
    "getobjects": "the garbage collector's object lists", "getreferrers": "the garbage collector's object lists",
    "importmodule": "the import system", "builtins": "the interpreter's built-ins",
}
#: Strings that are reaching when they are exactly one of these (an attribute or module looked up by name).
_EXACT = {**{name.lower(): why for name, why in _ATTRIBUTES.items()}, **_MODULES,
          "exec": "code built at run time", "eval": "code built at run time", "__import__": "the import system",
          "modules": "the interpreter's module table"}
#: Calls whose string arguments name what they reach (``getattr(obj, "answer")``).
_BY_NAME = {"getattr", "setattr", "delattr", "hasattr", "__import__", "import_module", "vars", "get"}
#: Calls that change an attribute: with a name the scan cannot fold, what they change is hidden.
_SET_BY_NAME = {"setattr", "delattr"}

_PROSE = re.compile(r"\S+\s+\S+\s+\S+")  # three words: a sentence, not a name
_NORMAL = re.compile(r"[^a-z0-9]")


@dataclass(frozen=True)
class Finding:
    """One construct of one cell that reaches into the grader (or the interpreter around it)."""

    cell: int  # the cell's position in the notebook, from 1
    name: str  # the cell's nbgrader id, if it has one
    construct: str  # what the cell wrote, short
    why: str  # what it reaches, in words

    @property
    def where(self) -> str:
        return f"cell {self.cell}" + (f" (`{self.name}`)" if self.name else "")


# ---------------------------------------------------------------- one cell


def scan_source(source: str) -> list[tuple[str, str]]:
    """``(construct, why)`` for every reaching construct of one cell's source, in order, once each."""
    found: dict[str, str] = {}
    try:
        tree = ast.parse(_python(source))
    except (SyntaxError, ValueError):
        tree = None
    if tree is not None:
        _Visitor(found).visit(tree)
        fragments = [s for s in _strings(tree) if not _PROSE.search(s)]
    else:  # not Python: every quoted fragment, as text
        fragments = [m[2] for m in re.finditer(r"""(['"])(.*?)\1""", source) if not _PROSE.search(m[2])]
        for word in re.findall(r"[A-Za-z_][\w.]*", _no_comments(source)):
            _name_text(found, word, word)
    joined = _NORMAL.sub("", "".join(fragments).lower())
    for needle, why in _NAMED.items():
        if needle in joined and not any(needle in _NORMAL.sub("", c.lower()) for c in found):
            found.setdefault(f"strings that spell `{needle}`", why)
    return list(found.items())


def _python(source: str) -> str:
    """The cell as Python, IPython's magics and shell escapes turned into calls, as a kernel runs it."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - IPython missing or confused: the source as it is
        return source


def _no_comments(source: str) -> str:
    return re.sub(r"#[^\n]*", "", source)


def _name_text(found: dict, text: str, construct: str) -> None:
    """A dotted name written as text (an unparsable cell): the grading package or a reaching attribute."""
    parts = text.split(".")
    if parts[0] in _MODULES:
        found.setdefault(f"`{construct}`", _MODULES[parts[0]])
    for part in parts[1:]:
        if part in _ATTRIBUTES:
            found.setdefault(f"`{construct}`", _ATTRIBUTES[part])


def _strings(tree) -> list[str]:
    """Every string the cell holds or folds from constants, in source order."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            out.append(node.value if isinstance(node.value, str) else node.value.decode("latin-1"))
        elif isinstance(node, (ast.BinOp, ast.Call, ast.Subscript, ast.JoinedStr)):
            folded = _fold(node)
            if isinstance(folded, str):
                out.append(folded)
    return out


def _fold(node, depth: int = 0):
    """The constant string an expression of constants makes (``"auto" + "grader"``, ``"".join([...])``,
    ``"".join(map(chr, codes))``, ``chr(65)``, ``"redargotua"[::-1]``, ``"x".replace(...)``), else None."""
    if depth > 20:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = [_fold(v.value if isinstance(v, ast.FormattedValue) else v, depth + 1) for v in node.values]
        return "".join(map(str, parts)) if all(p is not None for p in parts) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
        left, right = _fold(node.left, depth + 1), _fold(node.right, depth + 1)
        if left is None or right is None:
            return None
        try:
            value = left + right if isinstance(node.op, ast.Add) else left * right
        except TypeError:
            return None
        return value if not isinstance(value, str) or len(value) < 10_000 else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        value = _fold(node.value, depth + 1)
        bounds = [None if b is None else _fold(b, depth + 1) for b in (node.slice.lower, node.slice.upper, node.slice.step)]
        if isinstance(value, str) and all(b is None or type(b) is int for b in bounds):
            try:
                return value[slice(*bounds)]
            except ValueError:
                return None
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "chr" and len(node.args) == 1:
        code = _fold(node.args[0], depth + 1)
        return chr(code) if type(code) is int and 0 <= code < 0x110000 else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        owner = _fold(node.func.value, depth + 1)
        args = [_fold(a, depth + 1) for a in node.args]
        if node.func.attr == "join" and isinstance(owner, str) and len(node.args) == 1:
            parts = _parts(node.args[0], depth + 1)
            return owner.join(parts) if parts is not None and all(isinstance(p, str) for p in parts) else None
        if isinstance(owner, str) and all(a is not None for a in args) and node.func.attr in (
                "replace", "lower", "upper", "strip", "lstrip", "rstrip", "title", "capitalize", "swapcase"):
            try:
                return getattr(owner, node.func.attr)(*args)
            except (TypeError, ValueError):
                return None
    return None


def _parts(node, depth: int) -> list | None:
    """The strings a ``join`` is given: a list or tuple of constants, or ``map(chr, codes)``."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_fold(e, depth) for e in node.elts]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "map"
            and len(node.args) == 2 and isinstance(node.args[0], ast.Name) and node.args[0].id == "chr"
            and isinstance(node.args[1], (ast.List, ast.Tuple))):
        codes = [_fold(e, depth) for e in node.args[1].elts]
        if all(type(c) is int and 0 <= c < 0x110000 for c in codes):
            return [chr(c) for c in codes]
    return None


class _Visitor(ast.NodeVisitor):
    def __init__(self, found: dict):
        self.found = found
        self.modules: dict[str, str] = {}  # local name -> module it stands for

    def add(self, construct: str, why: str) -> None:
        self.found.setdefault(construct, why)

    def visit_Import(self, node):
        for alias in node.names:
            top = alias.name.split(".")[0]
            self.modules[alias.asname or top] = alias.name if alias.asname else top
            if top in _MODULES:
                self.add(f"`import {alias.name}`", _MODULES[top])

    def visit_ImportFrom(self, node):
        module = node.module or ""
        top = module.split(".")[0]
        if top in _MODULES or (node.level and any(a.name in _MODULES for a in node.names)):
            self.add(f"`from {'.' * node.level}{module} import ...`", _MODULES.get(top, "the grading package"))
            return
        reaching = _MODULE_ATTRIBUTES.get(top, {})
        for alias in node.names:
            if alias.name in reaching or alias.name in _ATTRIBUTES:
                self.add(f"`from {module} import {alias.name}`", reaching.get(alias.name) or _ATTRIBUTES[alias.name])
            else:
                self.modules.setdefault(alias.asname or alias.name, f"{module}.{alias.name}")

    def visit_Attribute(self, node):
        owner = node.value
        owner_name = self.modules.get(owner.id, owner.id) if isinstance(owner, ast.Name) else None
        if owner_name is not None and owner_name.split(".")[0] in _MODULES and owner.id not in self.modules:
            self.add(f"`{owner.id}.{node.attr}`", _MODULES[owner_name.split(".")[0]])
        if node.attr in _ATTRIBUTES:
            self.add(f"`.{node.attr}`", _ATTRIBUTES[node.attr])
        elif owner_name is not None:
            why = _MODULE_ATTRIBUTES.get(owner_name.split(".")[-1], {}).get(node.attr) or \
                _MODULE_ATTRIBUTES.get(owner_name.split(".")[0], {}).get(node.attr)
            if why:
                self.add(f"`{owner.id}.{node.attr}`", why)
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in ("__builtins__", "__import__", "RemoteSubmission", "Agent"):
            self.add(f"`{node.id}`", _ATTRIBUTES.get(node.id) or _CALLS.get(node.id, "the import system"))

    def visit_Call(self, node):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if isinstance(func, ast.Name) and func.id in _CALLS:
            self.add(f"`{func.id}(...)`", _CALLS[func.id])
        if name in _BY_NAME:
            for arg in node.args:
                text = _fold(arg)
                if isinstance(text, str):
                    self._named(text, f"`{name}(..., {text!r})`")
        if name in _SET_BY_NAME and len(node.args) >= 2 and not isinstance(_fold(node.args[1]), str):
            self.add(f"`{name}(...)` of a name computed at run time", "an attribute changed by a name it hides")
        self.generic_visit(node)

    def visit_Subscript(self, node):
        text = _fold(node.slice)
        if isinstance(text, str):
            self._named(text, f"`[{text!r}]`")
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str) and not _PROSE.search(node.value):
            self._string(node.value)

    def _string(self, text: str) -> None:
        """A string naming the grading package, or a reaching attribute written out in full."""
        normal = _NORMAL.sub("", text.lower())
        for needle, why in _NAMED.items():
            if needle in normal:
                self.add(f"the string {text[:60]!r}", why)
                return
        for part in re.split(r"[.\s]+", text.strip()):
            if part in ("_getframe", "f_back", "tb_frame", "f_globals", "get_objects", "get_referrers",
                        "__globals__", "__closure__", "__subclasses__", "__builtins__", "__import__"):
                self.add(f"the string {text[:60]!r}", _ATTRIBUTES.get(part, "the import system"))
                return

    def _named(self, text: str, construct: str) -> None:
        why = _EXACT.get(text.strip().lower()) or _EXACT.get(text.strip().split(".")[0].lower())
        if why:
            self.add(construct, why)
        else:
            self._string(text)


# ---------------------------------------------------------------- a notebook


def scan_cells(cells) -> list[Finding]:
    """Every finding of every code cell the student may have written (all but autograder test cells)."""
    findings = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code" or is_autograder_test(cell):
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        name = str(nbgrader_of(cell).get("grade_id") or "")
        findings += [Finding(index + 1, name, construct, why) for construct, why in scan_source(source)]
    return findings


def note(nb, memo: dict) -> list[Finding]:
    """Scan the notebook ``nb`` (nbformat or JSON) and keep the findings in the notebook's ``memo``,
    which every grade cell's judge of this notebook shares. Never raises: a scan that fails is a
    finding, for the instructor to look at."""
    try:
        findings = scan_cells(list(nb.get("cells", [])))
    except Exception as error:  # noqa: BLE001 - a pathological notebook (deep nesting) must still be graded
        findings = [Finding(0, "", f"a notebook the scan could not read ({type(error).__name__})", "unknown")]
    memo[KEY] = tuple(findings)
    return findings


def findings_of(memo) -> tuple[Finding, ...]:
    return tuple(memo.get(KEY, ())) if isinstance(memo, dict) else ()


_SHOWN = 6


def sentence(findings) -> str:
    """The feedback's plain sentence: which constructs, in which cells, and what happens now."""
    by_cell: dict[str, list[str]] = {}
    for f in findings:
        by_cell.setdefault(f.where, []).append(f.construct)
    parts = []
    for where, constructs in list(by_cell.items())[:_SHOWN]:
        shown = ", ".join(constructs[:_SHOWN]) + (f" and {len(constructs) - _SHOWN} more" if len(constructs) > _SHOWN else "")
        parts.append(f"{where}: {shown}")
    more = f"; and {len(by_cell) - _SHOWN} more cells" if len(by_cell) > _SHOWN else ""
    return (f"Reaches into the grader: the notebook refers to the grading code or the interpreter around it "
            f"({'; '.join(parts)}{more}), which no answer needs. The points of checks that rest on what the "
            "notebook's kernel reports are withheld; the instructor may review the notebook and restore them.")
