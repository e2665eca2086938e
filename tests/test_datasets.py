"""The data registry against the data sources' own description (shared/datasets/SOURCES.md).

Every file of the data directory loads, with the rows, feature types, missing cells and class
counts that SOURCES.md states; a missing data set names itself and every place looked.
"""
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xai_geometry import datasets as ds
from xai_geometry.datasets import DatasetNotFoundError, list_datasets, load


def _data_dir():
    for d in ds.data_locations():
        if (d / "SOURCES.md").is_file(): return d
    return None


DATA = _data_dir()
needs_data = pytest.mark.skipif(DATA is None, reason="the shared data directory (../shared/datasets or XAI_GEOMETRY_DATA) is absent")


def _sources():
    "Per file: rows, numeric and categorical features, missing cells, class counts (None for regression)."
    text = (DATA / "SOURCES.md").read_text(encoding="utf-8")
    out = {}
    for block in re.split(r"^### ", text, flags=re.M)[1:]:
        name = block.split(".csv.gz")[0].strip()
        m = re.search(r"Shape: ([\d,]+) rows x (\d+) features \((\d+) numeric, (\d+) categorical/string\) \+ `class`; ([\d,]+) missing", block)
        rows, nfeat, num, cat, miss = (int(g.replace(",", "")) for g in m.groups())
        c = re.search(r"- Classes \(\d+\): (.*)", block)
        classes = None
        if c:
            classes = {k.strip(): int(v.replace(",", "")) for k, v in re.findall(r"([^:,][^:]*?): ([\d,]+)(?:,|$)", c.group(1))}
        out[name] = dict(rows=rows, features=nfeat, numeric=num, categorical=cat, missing=miss, classes=classes)
    return out


@needs_data
def test_every_file_is_registered():
    files = {p.name for p in DATA.glob("*.csv.gz")}
    registered = {d.file for d in ds._REGISTRY if d.file}
    assert files == registered, f"unregistered: {files - registered}; registered but absent: {registered - files}"


@needs_data
@pytest.mark.parametrize("name", sorted(d.name for d in ds._REGISTRY if d.file))
def test_load_matches_sources(name):
    facts = _sources()[name]
    X, y = load(name)
    info = ds.DATASETS[name]
    assert len(X) == len(y) == facts["rows"] == info.rows
    assert X.shape[1] == facts["features"]
    num = sum(pd.api.types.is_numeric_dtype(X[c]) for c in X.columns)
    assert (num, X.shape[1] - num) == (facts["numeric"], facts["categorical"]) == (info.numeric, info.categorical)
    assert int(X.isna().sum().sum()) + int(y.isna().sum()) == facts["missing"]
    for c in X.columns:
        if not pd.api.types.is_numeric_dtype(X[c]): assert isinstance(X[c].dtype, pd.CategoricalDtype), c
    if facts["classes"] is None:
        assert info.classes == "regression" and pd.api.types.is_numeric_dtype(y)
    else:
        counts = {str(k): int(v) for k, v in y.value_counts().items()}
        assert counts == facts["classes"]
        assert info.classes == len(facts["classes"])


def test_sklearn_sets_need_no_files(monkeypatch, tmp_path):
    monkeypatch.setattr(ds, "_checkout_locations", lambda: [])
    monkeypatch.delenv(ds.ENV_VAR, raising=False)
    for name, shape, n_classes in [("iris", (150, 4), 3), ("wine", (178, 13), 3),
                                   ("breast_cancer", (569, 30), 2), ("digits", (1797, 64), 10)]:
        X, y = load(name, data_home=tmp_path)
        assert X.shape == shape and y.nunique() == n_classes


def test_missing_dataset_names_itself_and_every_place(monkeypatch, tmp_path):
    monkeypatch.setattr(ds, "_checkout_locations", lambda: [tmp_path / "checkout"])
    monkeypatch.setenv(ds.ENV_VAR, str(tmp_path / "env"))
    with pytest.raises(DatasetNotFoundError) as e:
        load("adult", data_home=tmp_path / "home")
    msg = str(e.value)
    assert "'adult'" in msg
    for place in ("home", "env", "checkout"): assert str(tmp_path / place / "adult.csv.gz") in msg


def test_environment_variable_is_searched(monkeypatch, tmp_path):
    monkeypatch.setattr(ds, "_checkout_locations", lambda: [])
    pd.DataFrame({"a": [1.0, np.nan], "b": ["x", "NA"], "class": [0, 1]}).to_csv(tmp_path / "heart.csv.gz", index=False)
    monkeypatch.setenv(ds.ENV_VAR, str(tmp_path))
    X, y = load("heart")
    assert X["a"].isna().sum() == 1
    assert list(X["b"].astype(str)) == ["x", "NA"]  # only the empty cell means missing


def test_bad_names():
    with pytest.raises(ValueError, match="unknown data set"): load("nope")
    with pytest.raises(TypeError, match="name must be a string"): load(3)


def test_list_datasets():
    df = list_datasets()
    assert list(df.columns) == ["name", "part", "rows", "numeric", "categorical", "classes", "source"]
    assert set(list_datasets("A")["name"]) >= {"adult", "heart", "letter", "mushroom", "shuttle"}
    assert (df.loc[df.name == "concrete", "classes"] == "regression").all()
