"""Probabilistic Soft Logic: hinge-loss MRFs, MAP inference, and (ESMS) explainable learning."""

from xcore.psl.inference import MAPResult, map_inference
from xcore.psl.program import HingeProgram

__all__ = ["HingeProgram", "MAPResult", "map_inference"]
