"""Probabilistic-logic classifier page: a KB of probabilistic clauses, LP inference, decisive features.

A view: the form comes from `PLKBSettings`, the layout from `ui.method_page`, every result from `xcore`."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui.common import guarded, set_dataset
from ui.components import PLOT_CONFIG, derived, explanation_panel, kept_result, progress_bar
from ui.forms import NONE, FormLayout, widget_key
from ui.forms import settings_form as form
from ui.method_page import PageContext, Tab, method_page
from xcore.data import RelationalDataset
from xcore.methods import REGISTRY, Run
from xcore.plkb.experiments import (
    compare_baselines,
    knowledge_curve,
    random_pollution_curve,
    shap_agreement_by_k,
    suggest_kb,
)
from xcore.plkb.explainers import DecisiveExplainer, ShapleyExplainer
from xcore.plkb.scores import DECISIVE, MODEL_SHAP
from xcore.plkb.settings import PLKBSettings
from xcore.plkb.shap_compare import compare_with_shap, shap_for
from xcore.plkb.tables import GENERATED, generated_dataset, identifier_columns
from xcore.viz import ranked_bar_figure
from xcore.viz.plkb_figures import feature_choice_figure, kb_curve_figure, shap_agreement_figure

METHOD = "plkb"


def generator() -> None:
    """Generate the paper's synthetic strings or Titanic-like rows and make them the current dataset."""
    with st.expander("Generate a table (the paper's synthetic strings, or Titanic-like passengers)"):
        kind = st.radio("Generated data", list(GENERATED), horizontal=True, key="plkb_gen_kind")
        c = st.columns(4)
        n = c[0].number_input("Rows", 100, 5000, 1000, step=100, key="plkb_gen_n")
        seed = c[3].number_input("Seed", 0, 10_000, 0, key="plkb_gen_seed")
        length = alphabet = 0
        if kind == GENERATED[0]:
            length = c[1].selectbox("Length L", [8, 10, 12], index=1, key="plkb_gen_len")
            alphabet = c[2].selectbox("Alphabet size A", [3, 4, 8], index=1, key="plkb_gen_alpha")
        if st.button("Generate and load", key="plkb_generate"):
            ds = guarded(generated_dataset, kind, int(length) or 10, int(alphabet) or 4, int(n), int(seed))
            if ds is not None:
                set_dataset(ds, f"generated: {ds.name}")
                st.rerun()


def columns(ds: RelationalDataset) -> list[str]:
    return [str(c) for c in ds.tabular.columns]


def classes(ds: RelationalDataset, label: str) -> list[str]:
    return sorted(ds.tabular[label].dropna().astype(str).unique()) if label in columns(ds) else []


def label_defaults(ds: RelationalDataset, values) -> dict:
    """Defaults that follow the label column: identifier-like columns left out, the KB that suits the table."""
    label = values["label"]
    drop = tuple(identifier_columns(ds.tabular, label))
    choice = suggested_kb(ds.tabular, label, drop)
    return {"drop": list(drop), "kb": choice[0]}


def kb_note(ds: RelationalDataset, values) -> str | None:
    choice = guarded(suggested_kb, ds.tabular, values["label"], tuple(identifier_columns(ds.tabular, values["label"])))
    return None if choice is None else f"Suggested: {choice[1]}."


# Where the classifier's settings go (the fields come from `PLKBSettings`).
LAYOUT = FormLayout(
    rows=(("label", "positive_class", "kb", "n_bins"), ("max_k", "min_support", "n_trees", "all_nodes"),
          ("k_auto", "k", "k_max"), ("drop",), ("knowledge",)),
    advanced=(("test_fraction", "seed", "max_rows", "explain_rows"),),
    widgets={"kb": "radio", "n_bins": "slider", "knowledge": "text_area"},
    steps={"test_fraction": 0.05},
    choices={"label": lambda d, v: columns(d),
             "positive_class": lambda d, v: (classes(d, v["label"]) if len(classes(d, v["label"])) > 2
                                             else [None, *classes(d, v["label"])]),
             "drop": lambda d, v: [c for c in columns(d) if c != v["label"]]},
    labels={"positive_class": lambda v: "(default)" if v == NONE else v},
    follow=label_defaults, follow_on=("label",),
    disable_if={"max_k": lambda v: v["kb"] != "direct", "min_support": lambda v: v["kb"] != "direct",
                "n_trees": lambda v: v["kb"] != "tree", "all_nodes": lambda v: v["kb"] != "tree",
                "k_max": lambda v: not v["k_auto"]},
    notes={"kb": kb_note})


def settings_form(ds: RelationalDataset) -> PLKBSettings | None:
    settings = form(REGISTRY[METHOD], ds, LAYOUT)
    label = st.session_state.get(widget_key(METHOD, "label"))
    if settings is not None and settings.positive_class is None and len(classes(ds, settings.label)) > 2:
        st.info(f"Label **{label}** has {len(classes(ds, settings.label))} classes. The classifier explains one "
                "class against the rest: choose which class to explain above (nothing is picked for you).")
        return None
    return settings


def show_row(run: Run, target: str) -> None:
    """The selected test row: its decisive features (computed on demand for rows beyond the first ones)."""
    exps = run.explanations[DECISIVE]
    if target in exps:
        exp = exps[target]
    else:
        found = derived(run, "decisive", (target,), lambda: DecisiveExplainer().explain(run.model, targets=[target]),
                        "Explaining the row")
        if found is None:
            return
        exp = found[target]
    explanation_panel(exp, key="plkb_exp", graph=False, title="Decisive features")
    yours = run.explanations.get(MODEL_SHAP)
    if yours is not None and target in yours:  # an uploaded ONNX model: its own Shapley values beside the KB's
        explanation_panel(yours[target], key="plkb_your_shap", graph=False, title="Shapley values of your model")
    elif yours is not None:
        st.caption(f"Shapley values of your model are computed for the first {len(yours)} test rows.")
    x = guarded(run.model.row, target)
    if x is None:
        return
    with st.expander("The LP behind it: clauses in this row's query and their values on the optimal face"):
        clauses = guarded(run.model.classifier_.driving_clauses, x)
        if clauses is not None:
            st.dataframe(clauses, hide_index=True, width="stretch", height=260)
    if st.button("Shapley values (exact up to 12 features)", key="plkb_shap_btn"):
        sh = derived(run, "shapley", (target,), lambda: ShapleyExplainer().explain(run.model, targets=[target]),
                     "Shapley values")
        if sh is not None:
            explanation_panel(sh[target], key="plkb_shapley", graph=False, title="Shapley values")
            compare = derived(run, "shap_compare", (target,), lambda: _shap_compare(run, x),
                              "The comparison with SHAP")
            if compare is not None:
                frame, summary = compare
                st.caption(f"Top-{run.settings.k} agreement with SHAP on gradient boosting: {summary['agreement']:.2f}")
                st.dataframe(frame, hide_index=True, width="stretch")


def what_if(run: Run, target: str | None) -> None:
    """Edit a row's feature values and see ω(POS), its interval and the decisive features update live."""
    est = run.model
    base = est.row(target).iloc[0].to_dict() if target is not None and target in set(run.predictions["target"]) else {}
    st.caption(f"Starting from **{target or 'an empty row'}** (select another row in the predictions tab). Each "
               "change re-runs the LP (milliseconds). '(unknown)' leaves the feature out of the query.")
    values: dict[str, object] = {}
    options = est.feature_options()
    cols = st.columns(4)
    for i, (name, seen) in enumerate(options.items()):
        col = cols[i % 4]
        current = base.get(name)
        numeric = pd.api.types.is_numeric_dtype(est.X_train_[name]) and len(seen) > 12
        if numeric:
            v = col.number_input(name, value=None if current is None or pd.isna(current) else float(current),
                                 key=f"plkb_wi_{target}_{name}", placeholder="(unknown)")
        else:
            choices = ["(unknown)", *seen]
            index = choices.index(current) if current in choices else 0
            v = col.selectbox(name, choices, index=index, key=f"plkb_wi_{target}_{name}")
            v = None if v == "(unknown)" else v
        values[name] = v
    exp = guarded(est.what_if, values)
    if exp is None:
        return
    c = st.columns(3)
    c[0].metric("ω(POS) midpoint", f"{exp.prediction:.3f}")
    c[1].metric("interval", f"[{exp.meta['omega_lo']:.3f}, {exp.meta['omega_hi']:.3f}]",
                help="The LP's lowest and highest probability of POS consistent with the KB and the known features.")
    c[2].metric("prediction", str(est.classifier_.classes_[1] if exp.prediction > 0.5 else est.classifier_.classes_[0]))
    explanation_panel(exp, key="plkb_whatif", graph=False, title="Decisive features of the edited row")


def _shap_compare(run: Run, x: pd.DataFrame):
    m = run.model
    return compare_with_shap(m.classifier_, shap_for(m.classifier_, m.X_train_, m.y_train_), x, k=run.settings.k)


def show_experiments(run: Run) -> None:
    m = run.model
    if st.button("Compare with CART, random forest, SVM and MLP", key="plkb_baselines"):
        derived(run, "baselines", (), lambda: compare_baselines(m.classifier_, m.X_train_, m.y_train_, m.X_test_, m.y_test_),
                "The baseline comparison")
    frame = kept_result(run, "baselines", ())
    if frame is not None:
        st.dataframe(frame, hide_index=True, width="stretch", key="plkb_baselines_table")

    st.subheader("Agreement with SHAP (paper Fig. 3)")
    st.caption("For k = 1..5: the share of test rows whose k decisive features share at least j features with "
               "SHAP's top k on gradient boosting, and how often each feature is chosen by each method.")
    rows = st.number_input("Test rows to compare", 10, 500, 60, step=10, key="plkb_agree_rows")
    if st.button("Compare with SHAP", key="plkb_agree_btn"):
        report = progress_bar("explaining rows by both methods")
        derived(run, "agreement", (int(rows),), lambda: shap_agreement_by_k(
            m.classifier_, m.X_train_, m.y_train_, m.X_test_.head(int(rows)), progress=report), "The SHAP comparison")
    found = kept_result(run, "agreement", (int(rows),))
    if found is not None:
        agreement, frequency = found
        left, right = st.columns(2)
        left.plotly_chart(shap_agreement_figure(agreement), width="stretch", key="plkb_agree_fig",
                          config=PLOT_CONFIG)
        k = right.slider("k for the feature counts", 1, int(frequency["k"].max()), 2, key="plkb_agree_k")
        right.plotly_chart(feature_choice_figure(frequency, k), width="stretch", key="plkb_choice_fig",
                           config=PLOT_CONFIG)

    st.subheader("Knowledge and pollution (paper Fig. 4)")
    st.caption("F1 on the test rows as the clauses written under *Domain knowledge* are added one by one, and as "
               "random clauses (probability uniform in [0, 1]) pollute the KB; the KB is restored afterwards.")
    if st.button("Draw the curves", key="plkb_curves_btn"):
        report = progress_bar("adding clauses")

        def curves() -> dict:
            out = {"random clauses": random_pollution_curve(m.classifier_, m.X_test_, m.y_test_, seed=run.settings.seed,
                                                            progress=report)}
            if run.settings.knowledge.strip():
                n = len([x for x in run.settings.knowledge.splitlines() if x.strip()])
                out["domain knowledge"] = knowledge_curve(m.classifier_, m.X_test_, m.y_test_, clauses=run.settings.knowledge,
                                                          counts=tuple(range(n + 1)))
            return out

        derived(run, "curves", (), curves, "The knowledge and pollution curves")
    found = kept_result(run, "curves", ())
    if found is not None:
        st.plotly_chart(kb_curve_figure(found), width="stretch", key="plkb_curves_fig", config=PLOT_CONFIG)
        st.dataframe(pd.concat(found, names=["curve"]).reset_index(level=0), hide_index=True, width="stretch",
                     key="plkb_curves_table")


@st.cache_data(show_spinner="Checking which knowledge base suits this table…", max_entries=16)
def suggested_kb(table: pd.DataFrame, label: str, drop: tuple[str, ...]) -> tuple[str, str]:
    """The KB that fits this table better on a quick balanced split (xcore's `suggest_kb`)."""
    return suggest_kb(table.drop(columns=list(drop), errors="ignore"), label)


def kb_tab(ctx: PageContext) -> None:
    clf = ctx.run.model.classifier_
    kb = clf.kb_summary()
    st.caption(f"{kb.get('clauses', len(ctx.run.summary.items)):,} clauses; positive class {clf.positive_class_!r}.")
    st.dataframe(clf.kb_.to_frame(), hide_index=True, width="stretch", height=400)
    if ctx.run.summary is not None and ctx.run.summary.items:
        st.plotly_chart(ranked_bar_figure(ctx.run.summary, k=15, title="Clauses by probability"), width="stretch")


def kb_download(ctx: PageContext) -> None:
    st.download_button("Knowledge base (text)", ctx.run.model.classifier_.kb_text(), "plkb_kb.txt", key="plkb_dl_kb",
                       on_click="ignore")


method_page(
    REGISTRY[METHOD],
    [Tab("What-if", lambda ctx: what_if(ctx.run, ctx.target)), Tab("Knowledge base", kb_tab),
     Tab("Experiments", lambda ctx: show_experiments(ctx.run))],
    title="Probabilistic-logic classifier",
    intro="Fan, Liu & Henderson, *Explainable AI for Classification using Probabilistic Logic Inference*: a KB of "
          "probabilistic clauses, inference by linear programming, the k most decisive features.",
    form=settings_form, run_label="Train", button_key="plkb_train",
    explain=lambda ctx, target: show_row(ctx.run, target),
    metrics=["accuracy", "f1", "precision", "recall", "roc_auc"], data_tools=generator,
    data_caption=lambda ds: f"Data: **{ds.name}** ({len(ds.tabular):,} rows)", downloads=kb_download,
    quality_positive=lambda run: str(run.model.classifier_.classes_[1]))
