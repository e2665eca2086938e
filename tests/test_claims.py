"""The claims of the three papers: the one rule (`experiments.claims.judge`), the committed claims tables
recomputed cell for cell from the committed result tables, and every page that prints a status agreeing with them."""
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from xai_geometry.experiments.claims import (REGISTRY, STATUSES, Claim, Judged, Reading, Tables, claim, claim_line,
                                             claims_table, judge, read_claims, tally, tally_sentence, within)

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "figures"
NBS = ROOT / "nbs"
#: the pages that print statuses, and what each must print
PAGES = {"19_log_odds_experiments": "a", "27_experiments": "b", "27a_use_case_wine": "b", "27b_use_case_dipoles": "b",
         "39_gnb_experiments": "c", "49_results_and_proofs": "abc", "49a_claims": "abc"}


# ---- the rule
@pytest.mark.parametrize("run, paper, want", [
    (True, None, STATUSES[0]), (False, None, STATUSES[2]),
    (True, True, STATUSES[0]), (False, False, STATUSES[2]),
    (False, True, STATUSES[1]), (True, False, STATUSES[1]),   # a setting the paper names lifts and demotes alike
])
def test_the_rule(run, paper, want):
    j = judge(Reading("split 0", run, "x"), paper=None if paper is None else Reading("the paper's setting", paper, "y"))
    assert j.status == want


def test_after_the_fact_and_beside_never_decide():
    "A setting chosen after the fact is named as a candidate, never a status; the pooled reading is shown, never judged."
    no, yes = Reading("split 0", False, "7 of 11"), Reading("LIME, 100 samples, pooled", True, "8 of 11")
    j = judge(no, beside=(Reading("pooled", True, "8 of 11"),), candidates=(yes,))
    assert j.status == STATUSES[2] and "candidates chosen after the fact" in j.evidence and "pooled: 8 of 11" in j.evidence
    assert judge(Reading("split 0", True, "8"), beside=(Reading("pooled", False, "6"),)).status == STATUSES[0]


def test_a_number_within_the_papers_precision_or_two_standard_errors():
    assert within(0.97333, 0.973, decimals=3) and not within(0.9745, 0.973, decimals=3)
    assert within(1.29, 1.4, decimals=1, se=0.06) and not within(1.29, 1.4, decimals=1, se=0.02)
    with pytest.raises(ValueError, match="decimals"): within(1.0, 1.0)


# ---- the layer refuses what it cannot judge
@pytest.mark.parametrize("holds", [float("nan"), "no", "False", 0.4, 1, 0, None])
def test_judge_takes_a_truth_value_only(holds):
    with pytest.raises(TypeError, match="`holds` must be a truth value"): judge(Reading("split 0", holds, "x"))


@pytest.mark.parametrize("kw, match", [(dict(se=float("inf")), "`se`"), (dict(se=float("nan")), "`se`"), (dict(se=-1.0), "`se`"),
                                       (dict(decimals=1.5), "`decimals`"), (dict(decimals=2.0), "`decimals`"),
                                       (dict(decimals="2"), "`decimals`")])
def test_within_refuses_what_would_let_any_number_pass(kw, match):
    with pytest.raises(ValueError, match=match): within(5.0, 1.0, **{"decimals": 1, **kw})


def test_only_judge_makes_a_verdict(tmp_path, monkeypatch):
    with pytest.raises(TypeError, match="made by `judge` only"): Judged("reproduced", "by hand")
    for forged in (lambda t: ("reproduced", "x"), lambda t: object.__new__(Judged)):
        # the forged claim alone in part C's registry: the other claims, whatever is imported, read tables not here
        monkeypatch.setitem(REGISTRY, "c", {"zz_forged": Claim("c", "zz_forged", "§0", "x", (), forged)})
        with pytest.raises(TypeError, match="judge"): claims_table("c", Tables(tmp_path))
    with pytest.raises(ValueError, match="unknown source"): claim("c", "zz_other", "§0", "x", (), source="blog")


@pytest.mark.parametrize("change, match", [
    (lambda C: C.assign(status=C.status.where(C.index > 0, "partly")), r"unknown status \['partly'\]"),
    (lambda C: C.assign(part=C.part.where(C.index > 0, "d")), r"unknown part \['d'\]"),
    (lambda C: C.assign(source=C.source.where(C.index > 0, "blog")), r"unknown source \['blog'\]"),
    (lambda C: C.drop(columns="evidence"), r"no column \['evidence'\]"),
])
def test_tally_refuses_a_table_it_cannot_count(change, match):
    C = read_claims(tables_dir=FIGURES)
    assert int(tally(C).to_numpy().sum()) == int((C.source == "paper").sum())
    with pytest.raises(ValueError, match=match): tally(change(C))


def test_read_claims_refuses_a_missing_file_or_column(tmp_path):
    with pytest.raises(FileNotFoundError, match="part_a_claims.csv"): read_claims("a", tmp_path)
    read_claims("a", FIGURES).drop(columns=["part", "evidence"]).to_csv(tmp_path / "part_a_claims.csv", index=False)
    with pytest.raises(ValueError, match=r"part_a_claims.csv has no column \['evidence'\]"): read_claims("a", tmp_path)
    with pytest.raises(ValueError, match="unknown part"): read_claims("ax", FIGURES)


# ---- the committed tables
def _recompute(part):
    if part == "a":
        from xai_geometry.experiments.part_a import part_a_claims; return part_a_claims(FIGURES)
    if part == "b":
        from xai_geometry.experiments.part_b_claims import part_b_claims; return part_b_claims(FIGURES)
    from xai_geometry.experiments.part_c import part_c_claims; return part_c_claims(FIGURES)


@pytest.mark.parametrize("part, least", [("a", 19), ("c", 7)])
def test_the_committed_claims_tables(part, least):
    "figures/part_<part>_claims.csv is what `reproduce` writes from the committed tables, cell for cell (part B: test_part_b_reading)."
    rec = pd.read_csv(FIGURES / f"part_{part}_claims.csv")
    pd.testing.assert_frame_equal(rec.fillna(""), _recompute(part).fillna(""))
    assert len(rec) >= least and rec.key.is_unique and set(rec.status) <= set(STATUSES) and set(rec.key) == set(REGISTRY[part])
    assert all((FIGURES / t).is_file() for ts in rec.tables.fillna("") for t in ts.split())


def test_the_claims_the_issue_names():
    C = read_claims(tables_dir=FIGURES).set_index("key")
    assert {"a_best_average", "a_fig1_ranks", "a_no_pair_1pct", "a_locagree_shap_highest", "a_table3_best_margin"} <= set(C.index)
    assert {"c_kde_tuning_fit", "c_iris_readme"} <= set(C.index) and (C.part == "b").sum() >= 38
    assert C.status["svm_top2"] != STATUSES[1] and C.status["wine_sugar_lowers"] == C.status["wine_parabola"] == STATUSES[0]
    assert "runtime_two_orders" in C.index and not {"runtime_sampling_images", "runtime_sampling_tabular"} & set(C.index)
    assert "the γ Table 2 prints" in C.evidence["fig3_propagation"]


def test_the_sentences_each_part_must_hold():
    "At least 19, 49 and 6 sentences of the papers; the ones each part must judge among them; no status it cannot defend."
    C = read_claims(tables_dir=FIGURES)
    paper = C[C.source == "paper"].groupby("part").size()
    assert paper["a"] >= 19 and paper["b"] >= 49 and paper["c"] >= 6, paper.to_dict()
    S = C.set_index("key")
    assert {"a_table3_values", "a_table1_datasets", "a_bound_10", "a_bound_4", "a_table2_means"} <= set(S.index)
    assert {"runtime_more_efficient", "runtime_linear_cost", "kappa_best", "dipole_oxygen_bob", "wine_counts",
            "wine_sugar_strengthens_acidity"} <= set(S.index)
    assert {"c_copula_only", "c_greedy_optimal", "c_no_guarantee_k3", "c_gnb_ge_nb"} <= set(S.index)
    assert S.source["c_iris_readme"] == "authors" and S.status["heuristics_robust"] != STATUSES[0]
    assert not S.evidence.str.contains("supplement, not its text|permutations and machine are in its supplement").any()
    assert all("below the paper's budget" in S.evidence[k].lower() for k in ("lrp_images", "runtime_knn_30s", "runtime_more_efficient"))
    assert not S.evidence.str.contains(r"\d\.\de-1[3-9]").any(), "round-off printed as digits"


# ---- the pages
def _cells(stem):
    return json.loads((NBS / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]


def _outputs(cell):
    for o in cell.get("outputs", []):
        for k, v in o.get("data", {}).items():
            if k.startswith("text/"): yield "".join(v) if isinstance(v, list) else v
        if "text" in o: yield "".join(o["text"])


def test_no_page_writes_a_status_by_hand():
    "The markdown and the code of the pages name no status: a status reaches a page only from the claims tables."
    for stem in PAGES:
        for c in _cells(stem):
            src = "".join(c["source"])
            hits = [m.group(0) for m in re.finditer(r"not reproduced, (?:un)?explained|— \*reproduced\*|\*(?:not )?reproduced\*[:,]", src)]
            assert not hits, (stem, c.get("id"), hits)


def test_every_page_prints_the_statuses_of_the_tables():
    "Each page prints statuses through `show_claims`, `tally` or `claims_html`, and every status in its saved outputs is the table's."
    C = read_claims(tables_dir=FIGURES).set_index("key")
    line = re.compile(r"- \*\*`(\w+)`\*\* \(.*?\) .*? — \*(" + "|".join(map(re.escape, STATUSES)) + r")\*\.")
    row = re.compile(r'data-key="(\w+)" data-part="(\w)" data-status="([^"]+)"')
    for stem, parts in PAGES.items():
        cells = _cells(stem)
        assert any(re.search(r"show_claims\(|tally\(|claims_html\(", "".join(c["source"])) for c in cells if c["cell_type"] == "code"), stem
        seen = 0
        for c in cells:
            for text in _outputs(c):
                for key, status in line.findall(text): assert C.status[key] == status, (stem, key); seen += 1
                for key, _, status in row.findall(text): assert C.status[key] == status, (stem, key); seen += 1
        if stem not in ("49_results_and_proofs",): assert seen, f"{stem} prints no claim's status in its saved outputs"


def test_claim_lines_read_back():
    r = read_claims(tables_dir=FIGURES).iloc[0]
    assert claim_line(r).startswith(f"- **`{r.key}`** ({r.section})") and f"*{r.status}*" in claim_line(r)


def test_the_landing_page_and_the_readme_tally():
    "The tally on the landing page (and so in the README) is the tables' tally, and the README promises the rule's statuses."
    sentence = tally_sentence(read_claims(tables_dir=FIGURES))
    index = "".join("".join(c["source"]) for c in _cells("index"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert sentence in index and sentence in readme
    assert "partly" not in readme.split("\n\n")[1] and all(s in readme for s in STATUSES)
