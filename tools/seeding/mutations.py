"""Defect mechanisms, each a small libcst rewrite of one node inside one function.

A mutation names a function by its qualified name (`plan_seats`, `Pacer.take`, `outer.inner`) and
which of the mechanism's candidate nodes inside it to change (`occurrence`, 0-based, in source
order), so a recorded mutation gives the same code every time. libcst keeps the formatting and
comments of everything it does not change. A target that is not there is refused, never guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, cast

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from benchwarmers.errors import InvalidRequest

_EMPTY = cst.Module(body=[])


def code_of(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


@dataclass(frozen=True)
class Mutation:
    """One recorded change: which function of which module, how, and where inside it."""

    module: str  # dotted, e.g. benchwarmers.bench.panels.seating
    function: str  # qualified within the module, e.g. plan_seats or Pacer.take
    mechanism: str  # a key of MECHANISMS
    occurrence: int = 0
    options: Mapping[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "module": self.module,
            "function": self.function,
            "mechanism": self.mechanism,
            "occurrence": self.occurrence,
        }
        if self.options:
            data["options"] = dict(self.options)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any], origin: str = "seed") -> Mutation:
        for name in ("module", "function", "mechanism"):
            if not isinstance(data.get(name), str) or not data[name]:
                raise InvalidRequest(f"{origin}: {name!r} is missing or not a string")
        occurrence = data.get("occurrence", 0)
        if not isinstance(occurrence, int) or occurrence < 0:
            raise InvalidRequest(f"{origin}: occurrence must be a whole number from 0")
        options = data.get("options") or {}
        if not isinstance(options, dict):
            raise InvalidRequest(f"{origin}: options must be an object")
        if data["mechanism"] not in MECHANISMS:
            known = ", ".join(MECHANISMS)
            raise InvalidRequest(f"{origin}: mechanism must be one of {known} (got {data['mechanism']!r})")
        return cls(data["module"], data["function"], data["mechanism"], occurrence, options)


# -- the mechanisms ------------------------------------------------------------------------------

_FLIP: dict[type[cst.BaseCompOp], type[cst.BaseCompOp]] = {
    cst.Equal: cst.NotEqual,
    cst.NotEqual: cst.Equal,
    cst.LessThan: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.LessThan,
    cst.GreaterThan: cst.LessThanEqual,
    cst.LessThanEqual: cst.GreaterThan,
    cst.In: cst.NotIn,
    cst.NotIn: cst.In,
    cst.Is: cst.IsNot,
    cst.IsNot: cst.Is,
}
_CONDITIONS = (cst.If, cst.While, cst.IfExp, cst.CompIf)
_BOUNDARY: dict[type[cst.BaseCompOp], type[cst.BaseCompOp]] = {
    cst.LessThan: cst.LessThanEqual,
    cst.LessThanEqual: cst.LessThan,
    cst.GreaterThan: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.GreaterThan,
}


def _swap_op(op: cst.BaseCompOp, table: Mapping[type[cst.BaseCompOp], type[cst.BaseCompOp]]) -> cst.BaseCompOp:
    new = table[type(op)]
    before = getattr(op, "whitespace_before", cst.SimpleWhitespace(" "))
    after = getattr(op, "whitespace_after", cst.SimpleWhitespace(" "))
    if new in (cst.NotIn, cst.IsNot):
        between = cst.SimpleWhitespace(" ")
        return new(whitespace_before=before, whitespace_between=between, whitespace_after=after)
    return new(whitespace_before=before, whitespace_after=after)  # type: ignore[call-arg]


def _negated(test: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and not test.lpar:
        target = test.comparisons[0]
        return test.with_changes(comparisons=[target.with_changes(operator=_swap_op(target.operator, _FLIP))])
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return test.expression
    atomic = isinstance(test, cst.Name | cst.Attribute | cst.Call | cst.Subscript) or bool(test.lpar)
    inner = test if atomic else test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.UnaryOperation(operator=cst.Not(), expression=inner)


def _guard_body_ends(node: cst.If) -> bool:
    body = node.body.body
    if not body:
        return False
    last = body[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, cst.Raise | cst.Return | cst.Continue | cst.Break) for s in last.body)
    return False


def _operands(node: cst.BooleanOperation) -> tuple[list[cst.BaseExpression], list[cst.BaseBooleanOp]]:
    """A chain `a and b and c` (libcst nests it to the left) as its operands and operators."""
    kind = type(node.operator)
    left: cst.BaseExpression = node
    operands: list[cst.BaseExpression] = []
    operators: list[cst.BaseBooleanOp] = []
    while isinstance(left, cst.BooleanOperation) and type(left.operator) is kind and (left is node or not left.lpar):
        operands.insert(0, left.right)
        operators.insert(0, left.operator)
        left = left.left
    operands.insert(0, left)
    return operands, operators


def _drop_operand(node: cst.BooleanOperation, options: Mapping[str, Any]) -> cst.BaseExpression:
    operands, operators = _operands(node)
    drop = options.get("operand", len(operands) - 1)
    if not isinstance(drop, int) or not 0 <= drop < len(operands):
        raise InvalidRequest(f"options.operand must be 0..{len(operands) - 1}: the condition has {len(operands)} parts")
    del operands[drop]
    del operators[max(0, drop - 1)]
    result = operands[0]
    for op, right in zip(operators, operands[1:], strict=True):
        result = cst.BooleanOperation(left=result, operator=op, right=right)
    if node.lpar and (len(operands) > 1 or not operands[0].lpar):
        result = result.with_changes(lpar=node.lpar, rpar=node.rpar)
    return result


def _swap_args(node: cst.Call, options: Mapping[str, Any]) -> cst.Call:
    first, second = options.get("swap", [0, 1])
    args = list(node.args)
    if max(first, second) >= len(args):
        raise InvalidRequest(f"options.swap {[first, second]} is out of range: the call has {len(args)} arguments")
    a, b = args[first], args[second]
    args[first], args[second] = a.with_changes(value=b.value), b.with_changes(value=a.value)
    return node.with_changes(args=args)


def _pass_body(node: cst.ExceptHandler) -> cst.ExceptHandler:
    body = node.body
    if isinstance(body, cst.IndentedBlock):
        return node.with_changes(body=body.with_changes(body=[cst.SimpleStatementLine(body=[cst.Pass()])]))
    return node.with_changes(body=cst.SimpleStatementSuite(body=[cst.Pass()]))


def _default(node: cst.Param, options: Mapping[str, Any]) -> cst.Param:
    if node.default is None:
        raise InvalidRequest(f"parameter {node.name.value!r} has no default to change")
    return node.with_changes(default=cst.parse_expression(str(options["value"])))


def _form(options: Mapping[str, Any], default: str, *forms: str) -> str:
    form = str(options.get("form", default))
    if form not in (default, *forms):
        raise InvalidRequest(f"options.form must be one of {', '.join((default, *forms))} (got {form!r})")
    return form


def _plus_minus_one(node: cst.CSTNode) -> bool:
    return (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Add | cst.Subtract)
        and isinstance(node.right, cst.Integer)
        and node.right.value == "1"
    )


def _off_by_one_candidate(node: cst.CSTNode, options: Mapping[str, Any], _skip: AbstractSet[int]) -> bool:
    if _form(options, "comparison", "arithmetic") == "arithmetic":
        return _plus_minus_one(node)
    return isinstance(node, cst.ComparisonTarget) and type(node.operator) in _BOUNDARY


def _off_by_one(node: Any, _options: Mapping[str, Any]) -> cst.CSTNode:
    if isinstance(node, cst.BinaryOperation):
        return node.left.with_changes(lpar=node.lpar, rpar=node.rpar) if node.lpar else node.left
    return cast(cst.CSTNode, node.with_changes(operator=_swap_op(node.operator, _BOUNDARY)))


def _inverted_candidate(node: cst.CSTNode, options: Mapping[str, Any], _skip: AbstractSet[int]) -> bool:
    if _form(options, "test", "comparison") == "comparison":
        return isinstance(node, cst.ComparisonTarget)
    return isinstance(node, _CONDITIONS)


def _inverted(node: Any, _options: Mapping[str, Any]) -> cst.CSTNode:
    if isinstance(node, cst.ComparisonTarget):
        return node.with_changes(operator=_swap_op(node.operator, _FLIP))
    return cast(cst.CSTNode, node.with_changes(test=_negated(node.test)))


@dataclass(frozen=True)
class Mechanism:
    """Which nodes are candidates (`select`, in source order) and what one becomes (`rewrite`)."""

    name: str
    summary: str
    select: Callable[[cst.CSTNode, Mapping[str, Any], AbstractSet[int]], bool]
    rewrite: Callable[[Any, Mapping[str, Any]], cst.CSTNode | cst.RemovalSentinel]
    needs: tuple[str, ...] = ()  # required options


def _is(*kinds: type) -> Callable[[cst.CSTNode, Mapping[str, Any], AbstractSet[int]], bool]:
    return lambda node, _options, _skip: isinstance(node, kinds)


MECHANISMS: dict[str, Mechanism] = {
    m.name: m
    for m in (
        Mechanism(
            "off-by-one",
            "a boundary moved by one: < and <=, > and >= traded (form comparison), or the `± 1` of "
            "`x - 1` / `x + 1` dropped (form arithmetic)",
            _off_by_one_candidate,
            _off_by_one,
        ),
        Mechanism(
            "inverted-condition",
            "the test of an if, elif, while, conditional expression or comprehension filter negated "
            "(form test), or one comparison's operator turned to its opposite (form comparison)",
            _inverted_candidate,
            _inverted,
        ),
        Mechanism(
            "wrong-variable",
            "one use of a variable replaced by another variable in scope",
            lambda node, o, skip: isinstance(node, cst.Name) and node.value == o["name"] and id(node) not in skip,
            lambda node, o: node.with_changes(value=str(o["replacement"])),
            needs=("name", "replacement"),
        ),
        Mechanism(
            "dropped-await",
            "an awaited call left unawaited",
            _is(cst.Await),
            lambda node, _o: (
                node.expression.with_changes(lpar=node.lpar, rpar=node.rpar) if node.lpar else node.expression
            ),
        ),
        Mechanism(
            "swapped-arguments",
            "two arguments of a call traded places",
            lambda node, o, _s: isinstance(node, cst.Call) and ("call" not in o or code_of(node.func) == o["call"]),
            _swap_args,
        ),
        Mechanism(
            "removed-guard",
            "an if statement that raises, returns, continues or breaks removed",
            lambda node, _o, skip: (
                isinstance(node, cst.If) and id(node) not in skip and node.orelse is None and _guard_body_ends(node)
            ),
            lambda _node, _o: cst.RemoveFromParent(),
        ),
        Mechanism(
            "wrong-default",
            "a parameter's default value changed",
            lambda node, o, _s: isinstance(node, cst.Param) and node.name.value == o["parameter"],
            _default,
            needs=("parameter", "value"),
        ),
        Mechanism(
            "swallowed-exception",
            "an except clause's body replaced by `pass`",
            _is(cst.ExceptHandler),
            lambda node, _o: _pass_body(node),
        ),
        Mechanism(
            "dropped-condition",
            "one part of an `and`/`or` condition dropped",
            lambda node, _o, skip: isinstance(node, cst.BooleanOperation) and id(node) not in skip,
            _drop_operand,
        ),
    )
}


# -- finding the function and the node -----------------------------------------------------------


class _Finder(cst.CSTVisitor):
    """Candidate nodes of one mechanism inside one qualified function, in source order."""

    def __init__(self, function: str, mechanism: Mechanism, options: Mapping[str, Any]) -> None:
        self.function = function
        self.mechanism = mechanism
        self.options = options
        self.scope: list[str] = []
        self.inside = 0  # depth inside the target function
        self.found_function = False
        self.skip: set[int] = set()  # names that are not variables, elifs, inner parts of a chain
        self.candidates: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.FunctionDef | cst.ClassDef):
            self.scope.append(node.name.value)
            if ".".join(self.scope) == self.function:
                self.found_function = True
                self.inside += 1
            elif self.inside:
                self.inside += 1
            self.skip.add(id(node.name))
        if not self.inside:
            return True
        if isinstance(node, cst.Attribute):
            self.skip.add(id(node.attr))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            self.skip.add(id(node.keyword))
        elif isinstance(node, cst.Param):
            self.skip.add(id(node.name))
        elif isinstance(node, cst.If) and isinstance(node.orelse, cst.If):
            self.skip.add(id(node.orelse))
        elif isinstance(node, cst.BooleanOperation):
            inner = node.left
            while isinstance(inner, cst.BooleanOperation) and type(inner.operator) is type(node.operator):
                if inner.lpar:
                    break
                self.skip.add(id(inner))
                inner = inner.left
        if self.mechanism.select(node, self.options, self.skip):
            self.candidates.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, cst.FunctionDef | cst.ClassDef):
            if self.inside:
                self.inside -= 1
            self.scope.pop()


class _Replace(cst.CSTTransformer):
    def __init__(
        self, target: cst.CSTNode, rewrite: Callable[[cst.CSTNode], cst.CSTNode | cst.RemovalSentinel]
    ) -> None:
        self.target = target
        self.rewrite = rewrite

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        if original_node is self.target:
            return self.rewrite(updated_node)
        return updated_node


def places(source: str, mutation: Mutation) -> list[str]:
    """The code of each candidate node for `mutation`'s mechanism in its function, by occurrence:
    what to look at when choosing the occurrence of a new seed."""
    mechanism = MECHANISMS[mutation.mechanism]
    finder = _Finder(mutation.function, mechanism, mutation.options)
    cst.parse_module(source).visit(finder)
    return [" ".join(code_of(node).split()) for node in finder.candidates]


def apply_mutation(source: str, mutation: Mutation, origin: str = "") -> str:
    """`source` with `mutation` applied, or InvalidRequest saying what is not there."""
    where = origin or mutation.module
    mechanism = MECHANISMS.get(mutation.mechanism)
    if mechanism is None:
        raise InvalidRequest(f"unknown mechanism {mutation.mechanism!r}; mechanisms are: {', '.join(MECHANISMS)}")
    missing = [name for name in mechanism.needs if name not in mutation.options]
    if missing:
        raise InvalidRequest(f"{mutation.mechanism} needs options {', '.join(missing)}")
    module = cst.parse_module(source)
    finder = _Finder(mutation.function, mechanism, mutation.options)
    module.visit(finder)
    if not finder.found_function:
        raise InvalidRequest(f"{where} has no function {mutation.function!r} (qualified, e.g. Class.method)")
    count = len(finder.candidates)
    if mutation.occurrence >= count:
        raise InvalidRequest(
            f"{where}:{mutation.function} has {count} place(s) for {mutation.mechanism} "
            f"({mechanism.summary}); occurrence {mutation.occurrence} is not one of them"
        )
    target = finder.candidates[mutation.occurrence]
    mutated = module.visit(_Replace(target, lambda node: mechanism.rewrite(node, mutation.options))).code
    if mutated == source:
        raise InvalidRequest(f"{where}:{mutation.function}: {mutation.mechanism} changed nothing")
    try:
        compile(mutated, where, "exec")
    except SyntaxError as exc:
        what = f"{where}:{mutation.function}: {mutation.mechanism}"
        raise InvalidRequest(f"{what} leaves invalid code ({exc.msg})") from None
    return mutated


def function_span(source: str, function: str) -> tuple[int, int]:
    """First and last line (1-based, decorators included) of a qualified function in `source`."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    positions = wrapper.resolve(PositionProvider)
    found: list[tuple[int, int]] = []

    class Spans(cst.CSTVisitor):
        def __init__(self) -> None:
            self.scope: list[str] = []

        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, cst.FunctionDef | cst.ClassDef):
                self.scope.append(node.name.value)
                if ".".join(self.scope) == function and isinstance(node, cst.FunctionDef):
                    span = positions[node]
                    first = min([positions[d].start.line for d in node.decorators] + [span.start.line])
                    found.append((first, span.end.line))
            return True

        def on_leave(self, original_node: cst.CSTNode) -> None:
            if isinstance(original_node, cst.FunctionDef | cst.ClassDef):
                self.scope.pop()

    wrapper.visit(Spans())
    if not found:
        raise InvalidRequest(f"no function {function!r} in the module")
    return found[0]
