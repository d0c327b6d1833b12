"""xcore — the compute package behind the relational explanation inspector.

Everything the Streamlit pages show can be computed from here without Streamlit:
`xcore.data` (relational datasets and loaders), `xcore.logic` (rule language and
grounding), `xcore.explain` (the shared explanation type) and `xcore.viz` (plotly figures).
"""

__version__ = "0.1.0"
