"""Rule language (syntax tree, parser) and grounding of rules against relational data.

Names load on first use (`xcore.lazy`): parsing rules does not import DuckDB or pandas.
"""

from xcore.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "xcore.logic.ast": ["Atom", "Constant", "Literal", "Rule", "Variable"],
    "xcore.logic.checks": ["check_rule", "rule_variable_types"],
    "xcore.logic.parser": ["parse_rule", "parse_rules", "parse_rules_file"],
    "xcore.logic.tokens": ["detect_dialect"],
    "xcore.logic.atoms": ["AtomStore"],
    "xcore.logic.estimate": ["estimate_groundings"],
    "xcore.logic.grounding": ["GroundProgram", "GroundRules", "ground", "n_ground_rules"],
    "xcore.logic.linear_form": ["linear_form"],
})
