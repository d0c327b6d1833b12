"""HiGHS shares one scheduler per process: the PSL QP and the classifier's LPs must agree on threads."""

import subprocess
import sys
import textwrap


def test_classifier_lp_solves_after_a_psl_qp_in_the_same_process():
    """A MAP QP solved first (as an ESMS page run does) must not break later classifier LPs."""
    code = textwrap.dedent("""
        import numpy as np
        from xcore.logic import parse_rules
        from xcore.psl.model import PSLModel
        from xcore.data.samples import load_sample
        from xcore.methods import run_method
        from xcore.plkb.settings import PLKBSettings
        from xcore.plkb.tables import generated_dataset

        ds = load_sample("lastfm_demo")
        model = PSLModel(parse_rules("1.0: rated(U, I) & sgd_rating(U, I) -> rating(U, I) ^2", dialect="psl"))
        model.ground(ds)
        model.infer(method="qp")
        data = generated_dataset("Synthetic strings", n=200, seed=1)
        run = run_method("plkb", data, PLKBSettings(label="label", kb="direct", explain_rows=2), cache=None)
        print("ok", len(run.predictions))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "ok 60" in out.stdout
