"""m-NLIL's explainers, one per module: the lifted rules, the rules of a GCN, and GNNExplainer."""

from xcore.nlil.explainers.gcn_rules import GCN_RULE_SCORE, GCN_RULES, GCNRuleExplainer
from xcore.nlil.explainers.gnnexplainer import EDGE_SCORE, GNNEXPLAINER, GNNExplainerExplainer
from xcore.nlil.explainers.rules import RULES, RuleExplainer

__all__ = ["EDGE_SCORE", "GCN_RULES", "GCN_RULE_SCORE", "GNNEXPLAINER", "RULES", "GCNRuleExplainer",
           "GNNExplainerExplainer", "RuleExplainer"]
