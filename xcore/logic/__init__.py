"""Rule language (syntax tree, parser) and grounding of rules against relational data."""

from xcore.logic.ast import Atom, Constant, Literal, Rule, Variable

__all__ = ["Atom", "Constant", "Literal", "Rule", "Variable"]
