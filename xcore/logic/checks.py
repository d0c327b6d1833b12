"""Checks that a parsed rule fits a dataset's schema: known predicates, arities, variable types."""

from __future__ import annotations

import difflib

from xcore.data.schema import Predicate, Schema
from xcore.errors import SchemaError
from xcore.logic.ast import Atom, Rule, Variable


def _rule_label(rule: Rule) -> str:
    """How a rule is named in messages: its name when set, else its canonical text."""
    try:
        text = rule.text()
    except Exception:  # a malformed hand-built rule must still give a readable message
        text = repr(rule)
    return f"rule {rule.name!r} (`{text}`)" if rule.name else f"rule `{text}`"


def _predicate_of(atom: Atom, rule: Rule, schema: Schema) -> Predicate:
    """The schema predicate of `atom`, checking that it exists and has the atom's arity."""
    pred = schema.predicates.get(atom.predicate)
    if pred is None:
        close = difflib.get_close_matches(atom.predicate, schema.names, n=3, cutoff=0.6)
        if close:
            hint = "did you mean " + " or ".join(repr(c) for c in close) + "?"
        elif schema.names:
            names = schema.names
            shown = ", ".join(names[:20]) + (f", ... ({len(names)} in all)" if len(names) > 20 else "")
            hint = f"known predicates: {shown}"
        else:
            hint = "the schema declares no predicates"
        raise SchemaError(f"unknown predicate {atom.predicate!r} in {_rule_label(rule)}; {hint}")
    if len(atom.args) != pred.arity:
        raise SchemaError(
            f"predicate {pred.name!r} takes {pred.arity} argument{'s' if pred.arity != 1 else ''} "
            f"but `{atom.text(rule.dialect)}` has {len(atom.args)}, in {_rule_label(rule)}"
        )
    return pred


def check_rule(rule: Rule, schema: Schema, check_types: bool = True) -> None:
    """Raise SchemaError unless every literal of `rule` names a declared predicate with its arity.

    Also rejects a rule with no literals and, when `check_types`, a variable used with two
    different argument types (see `rule_variable_types`).
    """
    if not rule.literals:
        raise SchemaError("rule has no literals: it needs at least one atom in its body or head")
    for lit in rule.literals:
        _predicate_of(lit.atom, rule, schema)
    if check_types:
        rule_variable_types(rule, schema)


def rule_variable_types(rule: Rule, schema: Schema) -> dict[Variable, str]:
    """Argument type of each variable of `rule` (in order of first appearance), from the schema.

    Raises SchemaError for unknown predicates, wrong arities, or a variable used at argument
    positions of two different types.
    """
    types: dict[Variable, str] = {}
    first_use: dict[Variable, str] = {}
    for lit in rule.literals:
        pred = _predicate_of(lit.atom, rule, schema)
        for i, arg in enumerate(lit.atom.args):
            if not isinstance(arg, Variable):
                continue
            where = f"argument {i + 1} of `{lit.atom.text(rule.dialect)}`"
            known = types.get(arg)
            if known is None:
                types[arg] = pred.types[i]
                first_use[arg] = where
            elif known != pred.types[i]:
                raise SchemaError(
                    f"variable {arg.name} has type {known!r} as {first_use[arg]} but type "
                    f"{pred.types[i]!r} as {where}, in {_rule_label(rule)}"
                )
    return types
