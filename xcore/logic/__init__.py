"""Rule language (syntax tree, parser) and grounding of rules against relational data."""

from xcore.logic.ast import Atom, Constant, Literal, Rule, Variable
from xcore.logic.checks import check_rule, rule_variable_types
from xcore.logic.parser import detect_dialect, parse_rule, parse_rules, parse_rules_file
from xcore.logic.atoms import AtomStore
from xcore.logic.estimate import estimate_groundings
from xcore.logic.grounding import GroundProgram, GroundRules, ground, linear_form, n_ground_rules

__all__ = [
    "Atom",
    "Constant",
    "Literal",
    "Rule",
    "Variable",
    "check_rule",
    "detect_dialect",
    "parse_rule",
    "parse_rules",
    "parse_rules_file",
    "rule_variable_types",
    "AtomStore",
    "GroundProgram",
    "GroundRules",
    "estimate_groundings",
    "ground",
    "linear_form",
    "n_ground_rules",
]
