"""The course's own mutation operators: each writes into the reference a mistake this course's
students really make about jit, tracing and JAX's caches (issue 26's list).

A grader that lets one of these through gives full points to a student who has not learned the
lesson. Some need a helper function in the mutated cell; it is added at the cell's top, named
``_mutant_*`` so that it can clash with nothing of the notebook's.
"""

from __future__ import annotations

import ast
import copy

from autograder.tools.mutants.operators import Operator, source_of

# --- recognising jit ----------------------------------------------------------------------------


def is_jit(expr: ast.AST) -> bool:
    """``jax.jit`` or a bare ``jit``."""
    return (isinstance(expr, ast.Attribute) and expr.attr == "jit") or (isinstance(expr, ast.Name) and expr.id == "jit")


def is_partial_jit(expr: ast.AST) -> bool:
    """``functools.partial(jax.jit, ...)`` or ``partial(jit, ...)``."""
    return (isinstance(expr, ast.Call) and getattr(expr.func, "attr", getattr(expr.func, "id", "")) == "partial"
            and bool(expr.args) and is_jit(expr.args[0]))


def jit_options(decorator: ast.AST) -> list[ast.keyword] | None:
    """The keyword options of a jit decorator (``[]`` for a bare ``@jax.jit``), or None if it is none."""
    if is_jit(decorator):
        return []
    if is_partial_jit(decorator):
        return list(decorator.keywords)
    if isinstance(decorator, ast.Call) and is_jit(decorator.func) and not decorator.args:
        return list(decorator.keywords)  # @jax.jit(static_argnames=...) is not JAX's, but read it alike
    return None


def jit_call(node: ast.AST) -> bool:
    """``jax.jit(f, ...)``: a call of jit on a function."""
    return isinstance(node, ast.Call) and is_jit(node.func) and len(node.args) >= 1


def jitted_signatures(modules: list[ast.Module]) -> dict[str, list[str]]:
    """``{name: parameter names}`` of every jitted function the notebook defines: decorated
    ``def``s, and names bound to ``jax.jit(f)`` of a ``def`` of the notebook."""
    defs, jitted = {}, {}
    for module in modules:
        for node in ast.walk(module):
            if isinstance(node, ast.FunctionDef):
                params = [a.arg for a in node.args.posonlyargs + node.args.args]
                defs[node.name] = params
                if any(jit_options(d) is not None for d in node.decorator_list):
                    jitted[node.name] = params
    for module in modules:
        for node in ast.walk(module):
            if isinstance(node, ast.Assign) and jit_call(node.value) and isinstance(node.value.args[0], ast.Name):
                for target in node.targets:
                    if isinstance(target, ast.Name) and node.value.args[0].id in defs:
                        jitted[target.id] = defs[node.value.args[0].id]
    return jitted


def _helper(code: str) -> list[ast.stmt]:
    return ast.parse(code).body


def _static_names(options: list[ast.keyword]) -> set[str]:
    names = set()
    for keyword in options:
        if keyword.arg == "static_argnames":
            value = keyword.value
            elts = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
            names |= {e.value for e in elts if isinstance(e, ast.Constant)}
    return names


def _jit_with(options: list[ast.keyword]) -> ast.expr:
    """A decorator ``lambda f: jax.jit(f, **options)``."""
    return ast.Lambda(
        ast.arguments([], [ast.arg("_mutant_f")], None, [], [], None, []),
        ast.Call(ast.Attribute(ast.Name("jax", ast.Load()), "jit", ast.Load()),
                 [ast.Name("_mutant_f", ast.Load())], copy.deepcopy(options)),
    )


def _with_static(options: list[ast.keyword], name: str) -> list[ast.keyword]:
    names = sorted(_static_names(options) | {name})
    kept = [k for k in options if k.arg != "static_argnames"]
    return kept + [ast.keyword("static_argnames", ast.Tuple([ast.Constant(n) for n in names], ast.Load()))]


class Misconception(Operator):
    family = "misconception"

    def decorated_jit(self, node: ast.FunctionDef) -> tuple[int, list[ast.keyword]] | None:
        """``(index of the jit decorator, its options)``, when it is in the solution region."""
        for i, decorator in enumerate(node.decorator_list):
            options = jit_options(decorator)
            if options is not None and getattr(decorator, "lineno", -1) in self.lines:
                return i, options
        return None

    def offer_def(self, node: ast.FunctionDef, variants):
        """:meth:`offer` for a decorated ``def``, whose decorator may be in the region when the
        ``def`` line is too (the region's first line is then the decorator's)."""
        found = self.decorated_jit(node)
        if found is None:
            return node
        anchor = node.decorator_list[found[0]]
        replaced = self.offer(anchor, variants)
        return node if replaced is anchor else replaced


class DropJit(Misconception):
    """``@jax.jit`` left off, or ``jax.jit(f)`` replaced by ``f``: every call runs op by op."""

    name = "drop_jit"

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        found = self.decorated_jit(node)
        if found is None:
            return node

        def make():
            new = copy.deepcopy(node)
            del new.decorator_list[found[0]]
            return new
        return self.offer_def(node, [(f"`{node.name}` is not jitted", make)])

    def visit_Call(self, node):
        self.generic_visit(node)
        if not jit_call(node):
            return node
        return self.offer(node, [(f"`{source_of(node)}` becomes `{source_of(node.args[0])}` (no jit)",
                                  lambda: node.args[0])])


class JitInnerOnly(Misconception):
    """Only an inner operation of a jitted function is jitted; the rest runs op by op."""

    name = "jit_inner_only"

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        found = self.decorated_jit(node)
        inner = next((c for c in ast.walk(node) if isinstance(c, ast.Call) and not jit_call(c)
                      and isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name)
                      and c.func.value.id in ("jnp", "lax")), None)
        if found is None or inner is None:
            return node

        def make():
            new = copy.deepcopy(node)
            del new.decorator_list[found[0]]
            for call in ast.walk(new):
                if isinstance(call, ast.Call) and source_of(call) == source_of(inner):
                    call.func = ast.Call(ast.Attribute(ast.Name("jax", ast.Load()), "jit", ast.Load()),
                                         [call.func], [])
                    break
            return new
        return self.offer_def(node, [(f"`{node.name}` is not jitted; only `{source_of(inner.func)}` inside it is", make)])


_REJIT = '''
def _mutant_rejit(**options):
    import functools
    import jax

    def wrap(fn):
        @functools.wraps(fn)
        def each_call(*args, **kwargs):
            return jax.jit(functools.partial(fn), **options)(*args, **kwargs)
        return each_call
    return wrap
'''


def _rejit(options: list[ast.keyword]) -> ast.expr:
    return ast.Call(ast.Name("_mutant_rejit", ast.Load()), [], copy.deepcopy(options))


class RejitEveryCall(Misconception):
    """A fresh ``jax.jit(functools.partial(f))`` on every call: a new function each time, so every
    call traces and compiles again (a jit of the same long-lived function would hit the cache)."""

    name = "rejit_every_call"
    helpers = _REJIT

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        found = self.decorated_jit(node)
        if found is None:
            return node

        def make():
            new = copy.deepcopy(node)
            new.decorator_list[found[0]] = _rejit(found[1])
            return new
        return self.offer_def(node, [(f"`{node.name}` is jitted afresh on every call", make)])

    def visit_Assign(self, node):
        self.generic_visit(node)
        if not jit_call(node.value):
            return node

        def make():
            new = copy.deepcopy(node)
            new.value = ast.Call(_rejit(node.value.keywords), [copy.deepcopy(node.value.args[0])], [])
            return new
        return self.offer(node, [(f"`{source_of(node.value)}` is jitted afresh on every call", make)])


class MakeStatic(Misconception):
    """One more argument declared static: a new trace for each of its values."""

    name = "make_static"

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        found = self.decorated_jit(node)
        if found is None:
            return node
        index, options = found
        variants = []
        for param in [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]:
            if param in _static_names(options):
                continue

            def make(param=param):
                new = copy.deepcopy(node)
                new.decorator_list[index] = _jit_with(_with_static(options, param))
                return new
            variants.append((f"`{param}` of `{node.name}` is declared static", make))
        return self.offer_def(node, variants)

    def visit_Assign(self, node):
        self.generic_visit(node)
        value = node.value
        if not (jit_call(value) and isinstance(value.args[0], ast.Name)):
            return node
        target = next((t.id for t in node.targets if isinstance(t, ast.Name)), None)
        variants = []
        for param in self.jitted.get(target, []):
            if param in _static_names(value.keywords):
                continue

            def make(param=param):
                new = copy.deepcopy(node)
                new.value.keywords = _with_static(value.keywords, param)
                return new
            variants.append((f"`{param}` of `{target}` is declared static", make))
        return self.offer(node, variants)


_PYTHON_FORI = '''
def _mutant_python_fori(lower, upper, body, value):
    for i in range(lower, upper):
        value = body(i, value)
    return value


def _mutant_python_fori_below(lower, upper, body, value):
    import jax
    if isinstance(upper, int) and upper < 4:
        for i in range(lower, upper):
            value = body(i, value)
        return value
    return jax.lax.fori_loop(lower, upper, body, value)
'''


def _is_fori(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "fori_loop"


class PythonLoop(Misconception):
    """A structured loop written as a Python loop: fully, or below a few steps (with the step
    count made static so that the Python loop can run)."""

    name = "python_loop"
    helpers = _PYTHON_FORI

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        loops = [c for c in ast.walk(node) if _is_fori(c) and self.in_region(c) and len(c.args) == 4]
        found = self.decorated_jit(node)
        if not loops:
            return node
        loop = loops[0]
        bound = loop.args[1]

        def replace(new, helper):
            for call in ast.walk(new):
                if _is_fori(call) and source_of(call) == source_of(loop):
                    call.func = ast.Name(helper, ast.Load())
                    break
            return new

        variants = [("the `fori_loop` becomes a Python loop",
                     lambda: replace(copy.deepcopy(node), "_mutant_python_fori"))]
        if found is not None and isinstance(bound, ast.Name):
            def below():
                new = replace(copy.deepcopy(node), "_mutant_python_fori_below")
                new.decorator_list[found[0]] = _jit_with(_with_static(found[1], bound.id))
                return new
            variants.append((f"a Python loop below 4 steps, `{bound.id}` made static for it", below))
        anchor = node.decorator_list[found[0]] if found is not None else loop
        replaced = self.offer(anchor, variants)
        return node if replaced is anchor else replaced


class KeywordArgument(Misconception):
    """A jitted function called with its last argument by keyword where the notebook passes it by
    position: a different cache key, so a new trace at a signature already met."""

    name = "keyword_argument"

    def visit_Call(self, node):
        self.generic_visit(node)
        name = getattr(node.func, "id", None)
        params = self.jitted.get(name)
        if not params or not node.args or len(node.args) > len(params) or node.keywords:
            return node
        if any(isinstance(a, ast.Starred) for a in node.args):
            return node
        last = len(node.args) - 1

        def make():
            new = copy.deepcopy(node)
            value = new.args.pop()
            new.keywords.append(ast.keyword(params[last], value))
            return new
        return self.offer(node, [(f"`{name}` gets `{params[last]}` by keyword", make)])


class HostReadInLoop(Misconception):
    """A value read back to the host on every iteration of a loop (a wait for the device each time)."""

    name = "host_read_in_loop"

    def visit_For(self, node):
        self.generic_visit(node)
        assigned = [t.id for stmt in node.body if isinstance(stmt, ast.Assign) for target in stmt.targets
                    for t in ([target] + list(getattr(target, "elts", []))) if isinstance(t, ast.Name)]
        if not assigned:
            return node
        variants = []
        for read in ("float", "__import__('numpy').asarray"):
            def make(read=read):
                new = copy.deepcopy(node)
                new.body.append(ast.Expr(ast.parse(f"{read}({assigned[-1]})", mode="eval").body))
                return new
            variants.append((f"`{read}({assigned[-1]})` on every iteration", make))
        return self.offer(node, variants)


class MapEagerly(Misconception):
    """A jitted function of a pytree applied leaf by leaf: one program per leaf shape, and a
    dispatch per leaf on every call."""

    name = "map_eagerly"

    def visit_Assign(self, node):
        self.generic_visit(node)
        if not (jit_call(node.value) and not node.value.keywords):
            return node
        inner = source_of(node.value.args[0])

        def make():
            new = copy.deepcopy(node)
            new.value = ast.parse(
                f"lambda tree, *rest: jax.tree.map(lambda leaf: jax.jit({inner})(leaf, *rest), tree)", mode="eval"
            ).body
            return new
        return self.offer(node, [(f"`{inner}` is jitted and mapped leaf by leaf", make)])


def _recursive(node: ast.FunctionDef) -> list[ast.Call]:
    return [c for c in ast.walk(node) if isinstance(c, ast.Call) and getattr(c.func, "id", None) == node.name]


class _Renamer(ast.NodeTransformer):
    def __init__(self, old: str, new):
        self.old, self.new = old, new

    def visit_Call(self, node):
        self.generic_visit(node)
        if getattr(node.func, "id", None) == self.old:
            return self.new(node)
        return node


class DropRecursion(Misconception):
    """A recursive walk that goes one level down and stops (or never goes down)."""

    name = "drop_recursion"

    def _bodies(self, node):
        self.generic_visit(node)
        for i, stmt in enumerate(node.body):
            if not (isinstance(stmt, ast.FunctionDef) and _recursive(stmt) and self.in_region(stmt)):
                continue
            name = stmt.name

            def none(i=i, name=name):
                new = copy.deepcopy(node)
                new.body[i] = _Renamer(name, lambda call: ast.Constant(0)).visit(new.body[i])
                return new

            def one_level(i=i, name=name):
                new = copy.deepcopy(node)
                flat = _Renamer(name, lambda call: ast.Constant(0)).visit(copy.deepcopy(new.body[i]))
                flat.name = f"{name}_mutant_one_level"

                def rename(call):
                    call.func = ast.Name(flat.name, ast.Load())
                    return call
                new.body[i] = _Renamer(name, rename).visit(new.body[i])
                new.body.insert(i, flat)
                return new
            replaced = self.offer(stmt, [(f"`{name}` never recurses", none),
                                         (f"`{name}` recurses one level only", one_level)])
            if replaced is not stmt:
                return replaced
        return node

    visit_Module = _bodies
    visit_FunctionDef = _bodies


class DedupeSubJaxprs(Misconception):
    """A recursive count that counts a sub-jaxpr it has already met as nothing (a "seen" set):
    wrong where JAX reuses one sub-jaxpr object for two equations."""

    name = "dedupe_repeats"
    helpers = "_mutant_seen = set()\n"

    def visit_Module(self, node):
        for i, top in enumerate(node.body):
            if not isinstance(top, ast.FunctionDef):
                continue
            for inner in ast.walk(top):
                if not (isinstance(inner, ast.FunctionDef) and inner is not top and _recursive(inner)
                        and self.in_region(inner)):
                    continue

                def make(i=i, name=inner.name):
                    new = copy.deepcopy(node)
                    new_top = new.body[i]

                    def seen_once(call):
                        arg = source_of(call.args[0]) if call.args else "None"
                        return ast.parse(f"(0 if id({arg}) in _mutant_seen else "
                                         f"(_mutant_seen.add(id({arg})) or {source_of(call)}))", mode="eval").body
                    for d in ast.walk(new_top):
                        if isinstance(d, ast.FunctionDef) and d.name == name:
                            _Renamer(name, seen_once).visit(d)
                    docstring = int(bool(ast.get_docstring(new_top)))
                    new_top.body.insert(docstring, ast.parse("_mutant_seen.clear()").body[0])
                    return new
                replaced = self.offer(inner, [(f"`{inner.name}` counts a repeated sub-jaxpr once", make)])
                if replaced is not inner:
                    return replaced
        return node


class PythonBranch(Misconception):
    """A ``lax.cond`` written as a Python ``if`` on its predicate (fails on a traced predicate)."""

    name = "python_branch"

    def visit_Call(self, node):
        self.generic_visit(node)
        if not (getattr(node.func, "attr", getattr(node.func, "id", "")) == "cond" and len(node.args) >= 3):
            return node
        predicate, yes, no, *operands = (source_of(a) for a in node.args)
        call = ", ".join(operands)
        return self.offer(node, [("the `cond` becomes a Python `if` on its predicate", lambda: ast.parse(
            f"({yes})({call}) if {predicate} else ({no})({call})", mode="eval").body)])


class NormaliseInput(Misconception):
    """An input the spec says to refuse is tidied up and accepted (a mode with spaces or capitals)."""

    name = "normalise_input"

    def visit_Compare(self, node):
        self.generic_visit(node)
        if not (len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq) and isinstance(node.left, ast.Name)
                and isinstance(node.comparators[0], ast.Constant) and isinstance(node.comparators[0].value, str)):
            return node

        def make():
            new = copy.deepcopy(node)
            new.left = ast.parse(f"str({node.left.id}).strip().lower()", mode="eval").body
            return new
        return self.offer(node, [(f"`{node.left.id}` is stripped and lower-cased before the comparison", make)])


_BAKED = '''
def _mutant_baked(name, **options):
    import functools
    import inspect
    import jax

    def wrap(fn):
        signature, held = inspect.signature(fn), {}

        @functools.wraps(fn)
        def reads_the_holder(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.arguments[name] = held["value"]  # a module-level value, read while tracing
            return fn(*bound.args, **bound.kwargs)

        jitted = jax.jit(reads_the_holder, **options)

        @functools.wraps(fn)
        def call(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            held["value"] = bound.arguments[name]
            return jitted(*args, **kwargs)
        return call
    return wrap
'''


_FIRST_SEEN = '''
def _mutant_first_seen(name, value):
    """Under a trace, the first value this parameter had at this shape and dtype, every time
    after: what a value read from a global while tracing gives."""
    import jax
    import numpy as np

    if not isinstance(value, jax.core.Tracer):
        return value  # run eagerly, the global is read afresh each time
    held = _mutant_first_seen.__dict__.setdefault("held", {})
    key = (name, value.shape, str(value.dtype))
    return jax.pure_callback(lambda v: held.setdefault(key, np.asarray(v)),
                             jax.ShapeDtypeStruct(value.shape, value.dtype), value, vmap_method="sequential")
'''


#: Transformations that keep a function's parameters, so that ``jax.jit(jax.grad(f))`` traces f's.
_KEEPS_PARAMETERS = {"grad", "value_and_grad"}


def _handed_def(node: ast.Call) -> ast.AST:
    """What a ``jax.jit(...)`` call compiles: its first argument, seen through ``jax.grad`` and
    ``jax.value_and_grad`` (``jax.jit(jax.value_and_grad(masked_loss))`` traces ``masked_loss``)."""
    handed = node.args[0]
    while (isinstance(handed, ast.Call) and handed.args
           and getattr(handed.func, "attr", getattr(handed.func, "id", None)) in _KEEPS_PARAMETERS):
        handed = handed.args[0]
    return handed


def wrapped_defs(modules: list[ast.Module]) -> dict[str, list[str]]:
    """``{name: parameter names}`` of the notebook's plain ``def``s that some line hands to
    ``jax.jit`` (``masked_score = jax.jit(masked_objective)``, or through a gradient:
    ``jax.jit(jax.value_and_grad(masked_loss))``)."""
    defs, wrapped = {}, {}
    for module in modules:
        for node in ast.walk(module):
            if isinstance(node, ast.FunctionDef):
                defs[node.name] = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
    for module in modules:
        for node in ast.walk(module):
            if jit_call(node) and isinstance(handed := _handed_def(node), ast.Name) and handed.id in defs:
                wrapped[handed.id] = _dynamic(defs[handed.id], node.keywords)
    return wrapped


def _baked(name: str, options: list[ast.keyword]) -> ast.expr:
    return ast.Call(ast.Name("_mutant_baked", ast.Load()), [ast.Constant(name)], copy.deepcopy(options))


def _dynamic(params: list[str], options: list[ast.keyword]) -> list[str]:
    """The parameters a jit with these options traces: all but its static ones (by name or number)."""
    numbers = set()
    for keyword in options:
        if keyword.arg == "static_argnums":
            value = keyword.value
            elts = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
            numbers |= {e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, int)}
    return [p for i, p in enumerate(params) if p not in _static_names(options) and i not in numbers]


class BakedArgument(Misconception):
    """A dynamic argument read from outside the function while tracing (a global, a dict, a
    closure, an attribute the caller sets before each call): JAX bakes the value it sees into the
    program as a constant, so every later call at the same shapes reuses the first value. A
    property that calls with one value per shape cannot tell; one that calls with two can."""

    name = "baked_argument"
    helpers = _BAKED + _FIRST_SEEN  # each mutant takes the one it needs

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        found = self.decorated_jit(node)
        if found is None:
            return self._body_only(node)
        index, options = found
        params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
        variants = []
        for param in _dynamic(params, options):
            def make(param=param):
                self.helpers = _BAKED
                new = copy.deepcopy(node)
                new.decorator_list[index] = _baked(param, options)
                return new
            variants.append((f"`{param}` of `{node.name}` is read from a module-level holder while tracing, "
                             "so its first value at each shape is baked in", make))
        return self.offer_def(node, variants)

    def _body_only(self, node: ast.FunctionDef):
        """A ``def`` whose body alone is the student's, handed to ``jax.jit`` elsewhere: the
        parameter is replaced, at the body's first line, by what a global read would give."""
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and len(node.body) > 1:
            first = node.body[1]  # after the docstring
        if node.name not in self.wrapped or not self.in_region(first):
            return node
        variants = []
        for param in self.wrapped[node.name]:
            def make(param=param):
                self.helpers = _FIRST_SEEN  # this mutant needs only the one helper
                new = copy.deepcopy(node)
                at = new.body.index(next(s for s in new.body if s.lineno == first.lineno))
                new.body.insert(at, ast.parse(f"{param} = _mutant_first_seen({param!r}, {param})").body[0])
                return new
            variants.append((f"`{param}` of `{node.name}` is read from a global while tracing, so its first "
                             "value at each shape is baked in", make))
        replaced = self.offer(first, variants)
        return node if replaced is first else replaced

    def visit_Assign(self, node):
        self.generic_visit(node)
        value = node.value
        if not (jit_call(value) and isinstance(value.args[0], ast.Name)):
            return node
        target = next((t.id for t in node.targets if isinstance(t, ast.Name)), None)
        variants = []
        for param in _dynamic(self.jitted.get(target, []), value.keywords):
            def make(param=param):
                self.helpers = _BAKED
                new = copy.deepcopy(node)
                new.value = ast.Call(_baked(param, value.keywords), [copy.deepcopy(value.args[0])], [])
                return new
            variants.append((f"`{param}` of `{target}` is read from a module-level holder while tracing, "
                             "so its first value at each shape is baked in", make))
        return self.offer(node, variants)


# --- signatures: what JAX keys its cache on, each part of a leaf and a dict's keys ------------------

_SIZE = '''
def _mutant_size(shape):
    """A shape read as its number of elements: (4,) and (2, 2) alike."""
    size = 1
    for length in shape:
        size *= length
    return size
'''


def _leaf_part(node: ast.expr) -> str | None:
    """Which part of a leaf's type a signature's element is: ``t.shape``, ``t.dtype`` (or
    ``str(t.dtype)``), ``t.weak_type``; None for anything else."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "str" and len(node.args) == 1:
        node = node.args[0]
    if isinstance(node, ast.Attribute) and node.attr in ("shape", "dtype", "weak_type"):
        return node.attr
    return None


class ForgetLeafPart(Misconception):
    """A signature that describes a leaf without one part of its type: its shape read as its number
    of elements (as if a program were sized by how much data it gets), its dtype left out, or its
    weak type left out. Only a tuple built of such parts counts as a signature here."""

    name = "forget_leaf_part"
    helpers = _SIZE

    def visit_Tuple(self, node):
        self.generic_visit(node)
        parts = [_leaf_part(element) for element in node.elts]
        if sum(part is not None for part in parts) < 2:
            return node
        variants = []
        for i, part in enumerate(parts):
            if part == "shape":
                def make(i=i):
                    new = copy.deepcopy(node)
                    new.elts[i] = ast.Call(ast.Name("_mutant_size", ast.Load()), [new.elts[i]], [])
                    return new
                variants.append((f"`{source_of(node.elts[i])}` becomes its number of elements (the shape is "
                                 "forgotten, the size kept)", make))
            elif part is not None:
                def make(i=i):
                    new = copy.deepcopy(node)
                    del new.elts[i]
                    return new
                variants.append((f"`{source_of(node.elts[i])}` is left out of the signature", make))
        return self.offer(node, variants)


_KEYLESS = '''
def _mutant_keyless(tree):
    """The tree with every dict replaced by its values in sorted key order, without the keys: a dict
    then differs from another only by its values, and keys written in another order change nothing."""
    import jax

    class _MutantKeylessDict(tuple):
        pass

    if not getattr(_mutant_keyless, "registered", False):
        jax.tree_util.register_pytree_node(_MutantKeylessDict, lambda d: (tuple(d), None),
                                           lambda _, children: _MutantKeylessDict(children))
        _mutant_keyless.registered = _MutantKeylessDict
    keyless = _mutant_keyless.registered

    def strip(node):
        if isinstance(node, dict):
            return keyless(strip(node[key]) for key in sorted(node))
        if isinstance(node, (tuple, list)) and not hasattr(node, "_fields"):
            return type(node)(strip(item) for item in node)
        return node
    return strip(tree)
'''

_FLATTENERS = {"flatten", "tree_flatten", "structure", "tree_structure"}


class ForgetDictKeys(Misconception):
    """A signature whose tree structure forgets the dicts' keys: ``jax.tree.flatten(tree)`` of the
    tree with each dict turned into its values in sorted key order. Another order of the same keys
    still gives the same signature; other keys with the same values do too, where JAX traces again."""

    name = "forget_dict_keys"
    helpers = _KEYLESS

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr in _FLATTENERS and len(node.args) == 1):
            return node

        def make():
            new = copy.deepcopy(node)
            new.args[0] = ast.Call(ast.Name("_mutant_keyless", ast.Load()), [new.args[0]], [])
            return new
        return self.offer(node, [(f"`{source_of(node)}` forgets the keys of every dict in the tree", make)])


_HOST_DECISION = '''
def _mutant_host_decision(jitted):
    import functools

    import jax.numpy as jnp
    import numpy as np

    @functools.wraps(jitted)
    def decide_on_host(*args, **kwargs):
        condition, chosen, other = jitted(*args, **kwargs)
        condition = np.asarray(condition)  # waits for the device, then decides in Python
        if condition.ndim == 0:
            return chosen if bool(condition) else other
        return jnp.asarray(np.where(condition, chosen, other))
    return decide_on_host
'''


def _is_decision(expr: ast.AST) -> bool:
    """``jnp.where(c, a, b)`` or ``lax.cond(p, f, g, *operands)``: a choice the program makes on data."""
    name = getattr(getattr(expr, "func", None), "attr", getattr(getattr(expr, "func", None), "id", ""))
    return isinstance(expr, ast.Call) and ((name == "where" and len(expr.args) == 3)
                                           or (name == "cond" and len(expr.args) >= 3))


def _candidates(decision: ast.Call) -> ast.Tuple:
    """``(condition, chosen, other)``: both candidates computed in the program, the choice left out."""
    condition, yes, no, *operands = (copy.deepcopy(a) for a in decision.args)
    if getattr(decision.func, "attr", getattr(decision.func, "id", "")) == "cond":
        yes, no = (ast.Call(branch, copy.deepcopy(operands), []) for branch in (yes, no))
    return ast.Tuple([condition, yes, no], ast.Load())


class HostDecision(Misconception):
    """A decision on data moved out of the jit into a host ``if``: the jitted function returns the
    condition and both candidates, and a Python wrapper reads the condition back and picks. The
    values are right and nothing traces again, but every call waits for the device, and the whole
    function no longer stages (``jax.make_jaxpr`` raises)."""

    name = "host_decision"
    helpers = _HOST_DECISION

    def visit_Module(self, node):
        for i, top in enumerate(node.body):
            last = top.body[-1] if isinstance(top, ast.FunctionDef) and top.body else None
            if not (isinstance(last, ast.Return) and _is_decision(last.value) and self.in_region(last)):
                continue
            found = self.decorated_jit(top)
            binding = next((j for j, s in enumerate(node.body) if isinstance(s, ast.Assign) and jit_call(s.value)
                            and isinstance(s.value.args[0], ast.Name) and s.value.args[0].id == top.name
                            and self.in_region(s)), None)
            if found is None and binding is None:
                continue

            def make(i=i, binding=binding, decorated=found is not None):
                new = copy.deepcopy(node)
                new.body[i].body[-1].value = _candidates(new.body[i].body[-1].value)
                wrap = ast.Name("_mutant_host_decision", ast.Load())
                if decorated:
                    new.body[i].decorator_list.insert(0, wrap)
                else:
                    new.body[binding].value = ast.Call(wrap, [new.body[binding].value], [])
                return new
            replaced = self.offer(last, [(f"the `{source_of(last.value.func)}` of `{top.name}` is taken on the host: "
                                          "the jit returns the condition and both candidates, a Python `if` picks",
                                          make)])
            if replaced is not last:
                return replaced
        return node


MISCONCEPTIONS = (DropJit, JitInnerOnly, RejitEveryCall, MakeStatic, PythonLoop, KeywordArgument,
                  HostReadInLoop, MapEagerly, DropRecursion, DedupeSubJaxprs, PythonBranch, NormaliseInput,
                  BakedArgument, ForgetLeafPart, ForgetDictKeys, HostDecision)
