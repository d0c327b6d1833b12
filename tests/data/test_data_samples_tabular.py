"""The bundled tabular samples for the classifier page: Nursery, HIV-1 (746) and Titanic-like."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xcore.data import load
from xcore.data.generators.titanic import TITANIC_COLUMNS, make_titanic_like
from xcore.data.samples import list_samples, load_sample, sample_info

SHARED = Path("/work/shared/data")
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="shared benchmark data not present")

NURSERY_COLUMNS = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health",
                   "classification"]
NEW = ("nursery", "hiv1", "titanic_like")


def test_registry_appends_the_three_tabular_samples():
    names = [s.name for s in list_samples()]
    assert set(NEW) <= set(names)
    assert names[-3:] == list(NEW)
    for old in ("friends_smokers", "trains_michalski10", "family", "mushroom"):
        assert names.index(old) < names.index("nursery")
    assert names.index("friends_smokers") < names.index("trains_michalski10") < names.index("family") \
        < names.index("mushroom")
    for name, label in zip(NEW, ("classification", "cleaved", "Survived")):
        info = sample_info(name)
        assert info.format == "tabular" and info.options == {"label": label}
        assert info.title and info.description and info.citation and info.licence
        readme = (info.path / "README.md").read_text(encoding="utf-8")
        assert "**Licence**" in readme and "**Citation**" in readme
        assert "**Changes**" in readme or "**How it was made**" in readme
    assert sample_info("nursery").licence == sample_info("hiv1").licence == "CC BY 4.0"
    assert "CC BY 4.0" in (sample_info("nursery").path / "README.md").read_text(encoding="utf-8")
    assert "CC BY 4.0" in (sample_info("hiv1").path / "README.md").read_text(encoding="utf-8")
    assert "not Kaggle" in (sample_info("titanic_like").path / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name,rows,label,classes", [
    ("nursery", 4000, "classification",
     {"not_recom": 1255, "priority": 1240, "spec_prior": 1175, "very_recom": 328, "recommend": 2}),
    ("hiv1", 746, "cleaved", {"yes": 402, "no": 344}),
    ("titanic_like", 891, "survived", {0: 497, 1: 394}),
])
def test_sample_loads_as_labelled_table(name, rows, label, classes):
    ds = load_sample(name)
    assert ds.name == name
    assert ds.label == label
    assert ds.tabular is not None and len(ds.tabular) == rows
    assert ds.tabular[label].value_counts().to_dict() == classes
    # relational view: one target atom with truth 1 per labelled row, features as observations
    assert len(ds.table(label, "targets")) == rows
    assert (ds.table(label, "truth")["value"] == 1.0).all()
    feature = next(c for c in ds.tabular.columns if c != label)
    assert len(ds.table(feature, "obs")) == ds.tabular[feature].notna().sum()
    # the plain loader on the folder gives the same table
    again = load(sample_info(name).path, label=sample_info(name).options["label"])
    assert again.label == label
    pd.testing.assert_frame_equal(again.tabular, ds.tabular)


def test_nursery_columns_and_file_format():
    ds = load_sample("nursery")
    assert list(ds.tabular.columns) == NURSERY_COLUMNS
    assert ds.tabular.notna().all().all()
    assert set(ds.tabular["children"].astype(str)) == {"1", "2", "3", "more"}
    text = (sample_info("nursery").path / "nursery.csv").read_text(encoding="ascii")
    assert text.endswith("\n") and "\n\n" not in text and "\r" not in text


@pytest.mark.slow
@needs_shared
def test_nursery_is_stratified_subset_of_uci_rows_in_order():
    full = pd.read_csv(SHARED / "nursery" / "nursery.data", dtype=str, keep_default_na=False)
    sub = pd.read_csv(sample_info("nursery").path / "nursery.csv", dtype=str, keep_default_na=False)
    assert list(sub.columns) == list(full.columns) == NURSERY_COLUMNS
    key = full.apply(",".join, axis=1)
    assert not key.duplicated().any()
    position = pd.Series(np.arange(len(full)), index=key)
    pos = position.loc[sub.apply(",".join, axis=1)].to_numpy()  # KeyError if a row is not UCI's
    assert (np.diff(pos) > 0).all()  # distinct rows, original order
    for rare in ("recommend", "very_recom"):
        assert (sub["classification"] == rare).sum() == (full["classification"] == rare).sum()
    # the common classes are sampled in proportion to their full counts (within one row)
    common = ["not_recom", "priority", "spec_prior"]
    share = full["classification"].value_counts()[common]
    expected = share / share.sum() * sub["classification"].isin(common).sum()
    got = sub["classification"].value_counts()[common]
    assert (abs(got - expected) < 1).all()


def test_hiv1_columns_and_residues():
    ds = load_sample("hiv1")
    assert list(ds.tabular.columns) == [f"p{i}" for i in range(1, 9)] + ["cleaved"]
    residues = set("ACDEFGHIKLMNPQRSTVWY")
    for c in ds.tabular.columns[:-1]:
        assert set(ds.tabular[c]) <= residues


@needs_shared
def test_hiv1_matches_uci_746_file():
    lines = (SHARED / "hiv1" / "746Data.txt").read_text(encoding="ascii").splitlines()[9:]
    src = pd.DataFrame([line.split(",") for line in lines if line.strip()], columns=["octamer", "label"])
    tab = load_sample("hiv1").tabular
    octamers = tab[[f"p{i}" for i in range(1, 9)]].astype(str).agg("".join, axis=1)
    assert octamers.tolist() == src["octamer"].str.strip().tolist()
    assert tab["cleaved"].tolist() == src["label"].str.strip().map({"1": "yes", "-1": "no"}).tolist()


def test_titanic_like_is_the_seeded_generator_output():
    path = sample_info("titanic_like").path / "titanic_like.csv"
    shipped = pd.read_csv(path)
    assert list(shipped.columns) == TITANIC_COLUMNS
    generated = make_titanic_like(891, 0).reset_index(drop=True)
    pd.testing.assert_frame_equal(shipped, generated, check_dtype=False)
    ds = load_sample("titanic_like")
    assert list(ds.tabular.columns) == [c.lower() for c in TITANIC_COLUMNS]
    assert ds.tabular["name"].str.contains(",").all()  # quoted names with commas survive loading
    assert ds.tabular[["age", "cabin", "embarked"]].isna().sum().tolist() == [171, 733, 1]
    assert ds.tabular["survived"].isin([0, 1]).all() and ds.tabular["pclass"].isin([1, 2, 3]).all()
