"""ESMS (Embar, Srinivasan & Getoor, UAI 2022): explainable PSL models learned by a meta-template search.

The method package (registry key ``esms``) on top of the PSL engine `xcore.psl`. Names load on first
use (`xcore.lazy`), so ``import xcore.esms`` imports no numerical library.
"""

from xcore.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "xcore.esms.rule_preparation": ["SearchCache"],
    "xcore.esms.search": ["DEFAULT_GAMMA_GRID", "ESMSSearch", "gamma_sweep"],
    "xcore.esms.stability": ["StabilityReport", "relational_stability", "stability_table"],
    "xcore.esms.validation_split": ["split_targets", "three_way_split"],
    "xcore.esms.templates": ["DEFAULT_TEMPLATES", "CandidateRules", "MetaTemplate", "fill_templates",
                             "prior_rules", "sample_rules"],
})
