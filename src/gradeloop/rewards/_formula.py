"""A ``multi`` grader's ``calculate_output`` read as weights, when it is a weighted sum.

OpenAI's formula is an arithmetic expression over the graders' names. gradeloop's
overall score is a weighted mean of its keys, so a formula translates when it is a
linear combination of the names with non-negative coefficients and no constant term
(``(a + b) / 2``, ``0.3 * a + 0.7 * b``, ``a + 2 * b``): the coefficients are the
weights. Anything else (``min``, ``max``, a product of two graders, a constant added,
a negative weight) has no weighted-mean equivalent and is refused with the reason. The
formula is parsed, never evaluated.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

__all__ = ["FormulaError", "weights"]

Linear = tuple[dict[str, float], float]  # coefficient per name, constant term


class FormulaError(ValueError):
    """A formula with no weighted-sum reading; the message says why."""


def weights(formula: str, names: Iterable[str]) -> dict[str, float]:
    """The coefficient of each name in ``formula`` (0.0 for a name it leaves out)."""
    known = list(names)
    try:
        tree = ast.parse(formula.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        raise FormulaError(f"calculate_output {formula!r} is not an expression") from None
    try:
        coefficients, constant = _linear(tree.body, set(known))
    except RecursionError:
        raise FormulaError(f"calculate_output {formula!r} is nested too deeply") from None
    if constant != 0:
        raise FormulaError(
            f"calculate_output {formula!r} adds a constant ({constant:g}); a weighted mean has none"
        )
    negative = [n for n, c in coefficients.items() if c < 0]
    if negative:
        raise FormulaError(
            f"calculate_output {formula!r} gives {negative[0]!r} a negative weight; "
            "gradeloop's weights are >= 0"
        )
    if not any(c > 0 for c in coefficients.values()):
        raise FormulaError(f"calculate_output {formula!r} weighs no grader")
    return {n: coefficients.get(n, 0.0) for n in known}


def _linear(node: ast.expr, names: set[str]) -> Linear:
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise FormulaError(
                f"calculate_output names {node.id!r}, which is not one of the graders"
            )
        return {node.id: 1.0}, 0.0
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {}, float(value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        sign = -1.0 if isinstance(node.op, ast.USub) else 1.0
        return _scaled(_linear(node.operand, names), sign)
    if isinstance(node, ast.BinOp):
        return _binary(node, names)
    what = ast.unparse(node)
    raise FormulaError(f"calculate_output uses {what!r}, which is not a weighted sum")


def _binary(node: ast.BinOp, names: set[str]) -> Linear:
    left, right = _linear(node.left, names), _linear(node.right, names)
    if isinstance(node.op, ast.Add | ast.Sub):
        sign = 1.0 if isinstance(node.op, ast.Add) else -1.0
        merged = dict(left[0])
        for name, c in right[0].items():
            merged[name] = merged.get(name, 0.0) + sign * c
        return merged, left[1] + sign * right[1]
    if isinstance(node.op, ast.Mult):
        if not left[0]:
            return _scaled(right, left[1])
        if not right[0]:
            return _scaled(left, right[1])
        raise FormulaError(
            f"calculate_output multiplies graders ({ast.unparse(node)}), not a weighted sum"
        )
    if isinstance(node.op, ast.Div) and not right[0]:
        if right[1] == 0:
            raise FormulaError(f"calculate_output divides by zero ({ast.unparse(node)})")
        return _scaled(left, 1 / right[1])
    raise FormulaError(f"calculate_output uses {ast.unparse(node)!r}, which is not a weighted sum")


def _scaled(linear: Linear, factor: float) -> Linear:
    return {n: c * factor for n, c in linear[0].items()}, linear[1] * factor
