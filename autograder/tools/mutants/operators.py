"""Mutation operators: each finds the places in a reference cell it can change, and makes one change.

An operator is an :class:`ast.NodeTransformer` run with a ``target``: it counts the changes it
could make, in the order it meets them, and makes only the target-th. Running it with targets
0, 1, 2, ... until it makes none enumerates its mutants; each is a whole cell, so a mutant is
graded exactly as a student's notebook with that cell would be.

Only nodes on the lines of the cell's solution region are changed (the given code around an
answer is not the student's to get wrong). Two families:

- ``generic``: what mutation testing has always done (comparisons, arithmetic, constants,
  slice bounds, axes, dtypes, return values, boolean operators, refusals);
- ``misconception`` (:mod:`autograder.tools.mutants.misconceptions`): what this course's
  students get wrong about jit, tracing and caches.

Why not a mutation-testing library: mutmut, cosmic-ray and mutatest mutate the files of a package
and run a test command once per mutant; what is mutated here is a notebook cell's solution region,
graded by a property module in a fresh process, and half the operators are the course's own, which
need the same walk over the tree as the generic ones. Their generic operators are the classic set
below (Offutt's), written in a few lines each on :mod:`ast`.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass


@dataclass(frozen=True)
class Change:
    """One change an operator made: what it was, on which line of the cell."""

    operator: str
    family: str
    line: int
    what: str


class Operator(ast.NodeTransformer):
    """Base: subclasses call :meth:`offer` at each node they could change."""

    name = ""
    family = "generic"
    #: Statements the mutant needs at the cell's top (a helper), when the change is made.
    helpers = ""
    #: ``{name: parameter names}`` of the notebook's jitted functions (set by the engine).
    jitted: dict[str, list[str]] = {}
    #: ``{name: dynamic parameter names}`` of the notebook's plain ``def``s handed to ``jax.jit``.
    wrapped: dict[str, list[str]] = {}

    def __init__(self, target: int, lines: range, module: ast.Module):
        self.target = target
        self.lines = lines
        self.module = module  # the whole cell, for operators that add a helper at its top
        self.count = 0
        self.change: Change | None = None

    def in_region(self, node: ast.AST) -> bool:
        return getattr(node, "lineno", -1) in self.lines

    def offer(self, node: ast.AST, variants: list[tuple[str, object]]):
        """``variants``: ``(what, make)``, ``make()`` returning the node's replacement. Returns the
        replacement when the target falls among them, else ``node``."""
        if not self.in_region(node):
            return node
        for what, make in variants:
            if self.count == self.target and self.change is None:
                self.count += 1
                self.change = Change(self.name, self.family, node.lineno, what)
                return make()
            self.count += 1
        return node


def source_of(node: ast.AST) -> str:
    return ast.unparse(node)


# --- generic operators -------------------------------------------------------------------------

_COMPARE_SWAPS = {
    ast.Lt: (ast.LtE, ast.Gt), ast.LtE: (ast.Lt,), ast.Gt: (ast.GtE, ast.Lt), ast.GtE: (ast.Gt,),
    ast.Eq: (ast.NotEq,), ast.NotEq: (ast.Eq,), ast.In: (ast.NotIn,), ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,), ast.IsNot: (ast.Is,),
}
_SYMBOL = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.In: "in",
    ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not", ast.Add: "+", ast.Sub: "-", ast.Mult: "*",
    ast.Div: "/", ast.Pow: "**", ast.FloorDiv: "//", ast.MatMult: "@", ast.Mod: "%", ast.And: "and", ast.Or: "or",
}


class Compare(Operator):
    name = "compare"

    def visit_Compare(self, node: ast.Compare):
        self.generic_visit(node)
        variants = []
        for i, op in enumerate(node.ops):
            for swap in _COMPARE_SWAPS.get(type(op), ()):
                def make(i=i, swap=swap):
                    new = copy.deepcopy(node)
                    new.ops[i] = swap()
                    return new
                variants.append((f"`{_SYMBOL[type(op)]}` becomes `{_SYMBOL[swap]}`", make))
        return self.offer(node, variants)


_ARITH_SWAPS = {
    ast.Add: (ast.Sub,), ast.Sub: (ast.Add,), ast.Mult: (ast.Div,), ast.Div: (ast.Mult,),
    ast.Pow: (ast.Mult,), ast.FloorDiv: (ast.Div,), ast.MatMult: (ast.Mult,), ast.Mod: (ast.FloorDiv,),
}


class Arithmetic(Operator):
    name = "arithmetic"

    def _variants(self, node, op_field: str):
        op = getattr(node, op_field)
        variants = []
        for swap in _ARITH_SWAPS.get(type(op), ()):
            def make(swap=swap):
                new = copy.deepcopy(node)
                setattr(new, op_field, swap())
                return new
            variants.append((f"`{_SYMBOL[type(op)]}` becomes `{_SYMBOL[swap]}`", make))
        return variants

    def visit_BinOp(self, node: ast.BinOp):
        self.generic_visit(node)
        return self.offer(node, self._variants(node, "op"))

    def visit_AugAssign(self, node: ast.AugAssign):
        self.generic_visit(node)
        return self.offer(node, self._variants(node, "op"))


class Constant(Operator):
    """Numbers one up and one down; a string result emptied (never a message or a docstring)."""

    name = "constant"

    def visit_Raise(self, node):  # a message's words are no answer
        return node

    def visit_Expr(self, node):  # docstrings
        if isinstance(node.value, ast.Constant):
            return node
        return self.generic_visit(node)

    def visit_JoinedStr(self, node):
        return node

    def visit_Constant(self, node: ast.Constant):
        value = node.value
        if isinstance(value, bool) or value is None:
            return self.offer(node, [] if value is None else
                              [(f"`{value}` becomes `{not value}`", lambda: ast.Constant(not value))])
        if isinstance(value, (int, float)):
            return self.offer(node, [
                (f"`{value!r}` becomes `{value + 1!r}`", lambda: ast.Constant(value + 1)),
                (f"`{value!r}` becomes `{value - 1!r}`", lambda: ast.Constant(value - 1)),
            ])
        if isinstance(value, str) and value:
            return self.offer(node, [(f"the string `{value!r}` becomes `''`", lambda: ast.Constant(""))])
        return node


class SliceBound(Operator):
    name = "slice_bound"

    def visit_Slice(self, node: ast.Slice):
        self.generic_visit(node)
        variants = []
        for field in ("lower", "upper"):
            bound = getattr(node, field)
            if bound is None:
                continue
            for delta, sign in ((1, ast.Add), (1, ast.Sub)):
                def make(field=field, sign=sign, bound=bound):
                    new = copy.deepcopy(node)
                    setattr(new, field, ast.BinOp(copy.deepcopy(bound), sign(), ast.Constant(delta)))
                    return new
                variants.append((f"slice {field} bound `{source_of(bound)}` becomes "
                                 f"`{source_of(bound)} {_SYMBOL[sign]} 1`", make))
        return self.offer(node, variants)


_REDUCTIONS = {"sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin", "stack", "concatenate"}


class Axis(Operator):
    """An ``axis=`` moved by one, or added to a reduction that had none."""

    name = "axis"

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        variants = []
        axis = next((k for k in node.keywords if k.arg == "axis"), None)
        if axis is not None and isinstance(axis.value, ast.Constant) and isinstance(axis.value.value, int):
            for moved in (axis.value.value + 1, axis.value.value - 1):
                def make(moved=moved):
                    new = copy.deepcopy(node)
                    next(k for k in new.keywords if k.arg == "axis").value = ast.Constant(moved)
                    return new
                variants.append((f"`axis={axis.value.value}` becomes `axis={moved}`", make))
        elif axis is None and isinstance(node.func, ast.Attribute) and node.func.attr in _REDUCTIONS:
            def make():
                new = copy.deepcopy(node)
                new.keywords.append(ast.keyword("axis", ast.Constant(-1)))
                return new
            variants.append((f"`{source_of(node.func)}` gets `axis=-1`", make))
        return self.offer(node, variants)


_DTYPES = {"float32": "float16", "float16": "float32", "float64": "float16", "int32": "float32",
           "bool_": "int32", "int64": "int32"}


class Dtype(Operator):
    name = "dtype"

    def visit_Attribute(self, node: ast.Attribute):
        self.generic_visit(node)
        if node.attr not in _DTYPES or not isinstance(node.value, ast.Name) or node.value.id not in ("jnp", "np"):
            return node
        other = _DTYPES[node.attr]
        return self.offer(node, [(f"`{node.value.id}.{node.attr}` becomes `{node.value.id}.{other}`",
                                  lambda: ast.Attribute(ast.Name(node.value.id, ast.Load()), other, ast.Load()))])


class ReturnValue(Operator):
    """A return of ``None``; a returned pair swapped."""

    name = "return_value"

    def visit_Return(self, node: ast.Return):
        self.generic_visit(node)
        if node.value is None:
            return node
        variants = [("returns None", lambda: ast.Return(ast.Constant(None)))]
        if isinstance(node.value, ast.Tuple) and len(node.value.elts) == 2:
            def swapped():
                new = copy.deepcopy(node)
                new.value.elts.reverse()
                return new
            variants.append(("the returned pair is swapped", swapped))
        return self.offer(node, variants)


class Boolean(Operator):
    name = "boolean"

    def visit_BoolOp(self, node: ast.BoolOp):
        self.generic_visit(node)
        other = ast.Or if isinstance(node.op, ast.And) else ast.And

        def make():
            new = copy.deepcopy(node)
            new.op = other()
            return new
        return self.offer(node, [(f"`{_SYMBOL[type(node.op)]}` becomes `{_SYMBOL[other]}`", make)])

    def visit_UnaryOp(self, node: ast.UnaryOp):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        return self.offer(node, [("a `not` is dropped", lambda: node.operand)])


class Refusal(Operator):
    """A ``raise`` the spec asks for is skipped."""

    name = "refusal"

    def visit_Raise(self, node: ast.Raise):
        return self.offer(node, [("the `raise` is dropped (the input is accepted)", lambda: ast.Pass())])


GENERIC = (Compare, Arithmetic, Constant, SliceBound, Axis, Dtype, ReturnValue, Boolean, Refusal)
