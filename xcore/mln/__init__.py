"""Markov logic: ground networks with evidence folded in, vectorised Gibbs sampling, exact
enumeration for small networks, and formula-importance explanations (M-Explain)."""

from xcore.mln.exact import ExactResult, exact, log_prob
from xcore.mln.gibbs import GibbsResult, gibbs, naive_gibbs
from xcore.mln.importance import explain_atom, importance, importance_frame, importance_se
from xcore.mln.model import MLNModel
from xcore.mln.network import GroundMLN, build_ground_mln, colour_classes

__all__ = ["ExactResult", "GibbsResult", "GroundMLN", "MLNModel", "build_ground_mln", "colour_classes",
           "exact", "explain_atom", "gibbs", "importance", "importance_frame", "importance_se",
           "log_prob", "naive_gibbs"]
