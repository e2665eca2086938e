"""The landing page, the README and the site's table of contents stay in step with the notebooks."""
from pathlib import Path

import pytest

from xai_geometry.docs import readme_from_index, site_sections

ROOT = Path(__file__).resolve().parent.parent


def test_readme_is_generated_from_the_landing_page():
    assert (ROOT / "README.md").read_text(encoding="utf-8") == readme_from_index(ROOT), \
        "README.md is out of date: run `python -c 'from xai_geometry.docs import write_readme; write_readme()'`"


def test_every_notebook_has_a_place_in_the_site():
    stems = [p.stem for p in (ROOT / "nbs").glob("*.ipynb") if p.stem != "index"]
    placed = [s for _, members in site_sections(stems) for s in members]
    assert sorted(placed) == sorted(stems), set(stems) ^ set(placed)


def test_figures_the_landing_page_shows_exist():
    import re
    for ref in re.findall(r"\]\((figures/[^)]+)\)", readme_from_index(ROOT)):
        assert (ROOT / ref).is_file(), ref


def test_the_sidebar_puts_the_parts_first_and_the_infrastructure_last():
    import re
    stems = [p.stem for p in (ROOT / "nbs").glob("*.ipynb") if p.stem != "index"]
    sections = site_sections(stems)
    titles = [t for t, _ in sections]
    assert titles[0] == "Start here" and [t.split(" —")[0] for t in titles[1:4]] == ["Part A", "Part B", "Part C"], titles
    assert titles[-1] == "For developers", titles
    assert dict(sections)["For developers"] == sorted(s for s in stems if re.match(r"0\d", s))
    assert {"45_tutorial_part_a", "46_tutorial_part_b", "47_tutorial_part_c", "47a_tutorial_one_geometry", "48_which_explainer",
            "49_results_and_proofs"} <= set(dict(sections)["Start here"])
    start = dict(sections)["Start here"]
    assert start.index("47_tutorial_part_c") < start.index("47a_tutorial_one_geometry") < start.index("48_which_explainer"), start


def test_the_landing_page_links_the_reading_path():
    readme = readme_from_index(ROOT)
    wanted = ["45_tutorial_part_a", "46_tutorial_part_b", "47_tutorial_part_c", "47a_tutorial_one_geometry", "48_which_explainer",
              "49_results_and_proofs", "A_naive_bayes", "B_neuralized", "C_gnb", "19_log_odds_experiments", "27_experiments", "39_gnb_experiments"]
    missing = [s for s in wanted if f"](nbs/{s}.ipynb)" not in readme]
    assert not missing, missing
    for s in wanted: assert (ROOT / "nbs" / f"{s}.ipynb").is_file(), s
    assert "jupyter lab nbs/" in readme
    assert readme.index("![") < readme.index("| part | paper |"), "a picture before the jargon"


TUTORIALS = ["45_tutorial_part_a", "46_tutorial_part_b", "47_tutorial_part_c", "47a_tutorial_one_geometry"]


@pytest.mark.parametrize("name", TUTORIALS)
def test_a_tutorial_runs_anywhere_writes_nothing_and_folds_its_solutions(name):
    import json, re
    cells = json.loads((ROOT / "nbs" / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    writes = re.findall(r"\.\./|savefig\(|to_csv\(|to_parquet\(|write_text\(|write_bytes\(|open\([^)]*['\"][wax]", code)
    assert not writes, f"{name} writes a file or reads by a relative path: {writes}"
    assert "datasets import load" in code and "load(" in code, "a real data set, through xai_geometry.datasets.load"
    assert "#| eval: false" not in code, "every cell runs (the sliders' cell draws its figure, and its sliders in Jupyter)"
    folded = [c for c in cells if c["cell_type"] == "code" and c["metadata"].get("jupyter", {}).get("source_hidden")]
    solutions = [c for c in folded if c["metadata"]["jupyter"].get("outputs_hidden")]
    assert solutions and all("assert check" in "".join(c["source"]) for c in solutions), \
        "a folded solution, which the checker accepts"
