"""The data registry against the data's own description (`xai_geometry/data/SOURCES.md`).

Every file bundled with the package loads, with the rows, feature types, missing cells and class
counts that SOURCES.md states and the digest that SHA256SUMS states; a missing data set names
itself and every place looked; the overrides are searched before the package.
"""
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xai_geometry import datasets as ds
from xai_geometry.datasets import DatasetNotFoundError, list_datasets, load


DATA = ds.PACKAGE_DATA


def test_package_data_is_complete_and_intact():
    assert (DATA / "SOURCES.md").is_file()
    checks = ds.verify_checksums()
    assert len(checks) == len([d for d in ds._REGISTRY if d.file])
    assert all(checks.values()), [f for f, ok in checks.items() if not ok]


def test_every_set_is_found_in_the_package(monkeypatch):
    monkeypatch.delenv(ds.ENV_VAR, raising=False)
    for d in ds._REGISTRY:
        origin, path = ds.locate(d.name)
        assert origin == ("package" if d.file else "scikit-learn"), d.name


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


def test_every_file_is_registered():
    files = {p.name for p in DATA.glob("*.csv.gz")}
    registered = {d.file for d in ds._REGISTRY if d.file}
    assert files == registered, f"unregistered: {files - registered}; registered but absent: {registered - files}"


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
    monkeypatch.setattr(ds, "PACKAGE_DATA", tmp_path / "no_package_data")
    monkeypatch.delenv(ds.ENV_VAR, raising=False)
    for name, shape, n_classes in [("iris", (150, 4), 3), ("wine", (178, 13), 3),
                                   ("breast_cancer", (569, 30), 2), ("digits", (1797, 64), 10)]:
        X, y = load(name, data_home=tmp_path)
        assert X.shape == shape and y.nunique() == n_classes


def test_missing_dataset_names_itself_and_every_place(monkeypatch, tmp_path):
    monkeypatch.setattr(ds, "PACKAGE_DATA", tmp_path / "package")
    monkeypatch.setenv(ds.ENV_VAR, str(tmp_path / "env"))
    with pytest.raises(DatasetNotFoundError) as e:
        load("adult", data_home=tmp_path / "home")
    msg = str(e.value)
    assert "'adult'" in msg and "reinstall" in msg.splitlines()[0]
    for place in ("home", "env", "package"): assert str(tmp_path / place / "adult.csv.gz") in msg


def test_overrides_are_searched_before_the_package(monkeypatch, tmp_path):
    pd.DataFrame({"a": [1.0, np.nan], "b": ["x", "NA"], "class": [0, 1]}).to_csv(tmp_path / "heart.csv.gz", index=False)
    monkeypatch.setenv(ds.ENV_VAR, str(tmp_path))
    X, y = load("heart")
    assert ds.locate("heart") == (ds.ENV_VAR, tmp_path / "heart.csv.gz")
    assert X["a"].isna().sum() == 1
    assert list(X["b"].astype(str)) == ["x", "NA"]  # only the empty cell means missing


def test_bad_names():
    with pytest.raises(ValueError, match="unknown data set"): load("nope")
    with pytest.raises(TypeError, match="name must be a string"): load(3)


def test_list_datasets():
    df = list_datasets()
    assert list(df.columns) == ["name", "part", "rows", "numeric", "categorical", "classes", "source", "licence"]
    assert set(list_datasets("A")["name"]) >= {"adult", "heart", "letter", "mushroom", "shuttle"}
    assert (df.loc[df.name == "concrete", "classes"] == "regression").all()


def test_sources_md_names_the_registry_parts():
    "The summary table of SOURCES.md says which paper part reads each file, as the registry does."
    rows = re.findall(r"^\| (\w+)\.csv\.gz \| ([^|]+) \|", (DATA / "SOURCES.md").read_text(encoding="utf-8"), flags=re.M)
    said = {name: tuple(p.strip() for p in paper.replace("(alt.)", "").split(",")) for name, paper in rows}
    assert said == {d.name: d.parts for d in ds._REGISTRY if d.file}


def test_every_experiment_reads_the_registry_sets_of_its_part():
    "The registry is the one record of which part reads which set: each part's experiments read exactly its sets."
    from xai_geometry.experiments import part_a, part_b_data, part_c
    assert set(part_a.DATASETS) == set(list_datasets("A")["name"])
    assert set(part_c.DATASETS) == set(list_datasets("C")["name"])
    assert set(part_a.QUICK_DATASETS) <= set(part_a.DATASETS) and set(part_c.QUICK_DATASETS) <= set(part_c.DATASETS)
    table2 = {f for _, reg in part_b_data.TABLE2_DATASETS.values() for f in part_b_data._SOURCES.get(reg, (reg,))}
    use_cases = {"wine_quality_white", "qm9_subset"}  # part B's use cases (`part_b_wine`, `part_b_dipoles`)
    alternate = {"breast_cancer_wisconsin_original"}  # shipped for part B as an alternative breast cancer set ("B (alt.)")
    assert set(list_datasets("B")["name"]) == table2 | use_cases | alternate
    assert all(d.part == (", ".join(d.parts) or "-") for d in ds._REGISTRY)


def test_the_datasets_command_lists_every_set_of_part_c(capsys):
    from xai_geometry import cli
    from xai_geometry.experiments.part_c import DATASETS as PART_C
    assert cli.main(["datasets", "--part", "C"]) == 0
    out = capsys.readouterr().out.splitlines()
    listed = [line.split()[0] for line in out[1:] if line.strip()]
    assert len(PART_C) == 12 and sorted(listed) == sorted(PART_C), listed
