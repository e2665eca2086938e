"""The built documentation site: every internal link reaches its page and its anchor, API links land in the right part.

The site is built by `xai-geometry docs` (continuous integration builds it in an environment with the development
extra only, then runs this file with XAI_GEOMETRY_SITE set to it). Without XAI_GEOMETRY_SITE the checks read the
checkout's `_site/` if it is newer than every notebook, and are skipped with a reason otherwise.
"""
import os
import re
from pathlib import Path

import pytest

from xai_geometry.docs import check_site_links

ROOT = Path(__file__).resolve().parent.parent


def _site():
    site = Path(os.environ.get("XAI_GEOMETRY_SITE") or ROOT / "_site")
    if not (site / "index.html").is_file():
        pytest.skip(f"no built site at {site}: run `xai-geometry docs` first (or set XAI_GEOMETRY_SITE)")
    if not os.environ.get("XAI_GEOMETRY_SITE"):   # the checkout's own _site/: only if no notebook changed since it was built
        newer = [p.name for p in (ROOT / "nbs").glob("*.ipynb") if p.stat().st_mtime > (site / "index.html").stat().st_mtime]
        if newer: pytest.skip(f"_site/ is older than {newer[0]} (and {len(newer) - 1} more): run `xai-geometry docs` again")
    return site


@pytest.fixture(scope="module")
def site():
    return _site()


@pytest.fixture(scope="module")
def links(site):
    return check_site_links(site)


def _hrefs(page: Path) -> dict[str, set[str]]:
    "Link text (inline code stripped of tags) -> the hrefs it points to, on one page."
    out = {}
    for href, text in re.findall(r'<a class="reference internal" href="([^"]+)"[^>]*>(.*?)</a>', page.read_text(encoding="utf-8"), re.S):
        out.setdefault(re.sub(r"<[^>]+>", "", text).strip(), set()).add(href)
    return out


def test_every_internal_link_reaches_its_page_and_anchor(links):
    assert links["links"] > 1000, links["links"]   # the site was read: thousands of links, not a handful
    assert not links["broken"], f"{len(links['broken'])} broken links, e.g.:\n" + "\n".join(
        f"{page} -> {href} ({why})" for page, href, why in links["broken"][:30])


def test_every_notebook_is_a_page(site):
    missing = [p.stem for p in (ROOT / "nbs").glob("*.ipynb") if not (site / f"{p.stem}.html").is_file()]
    assert not missing, missing


def test_no_link_is_a_dead_fragment(site):
    "The automatic API links once rendered as `#41_gnb_shapley.html#explain`: styled as links, going nowhere."
    bad = [(p.name, h) for p in site.glob("*.html") for h in re.findall(r'href="(#[^"]*\.(?:html|ipynb)[^"]*)"', p.read_text(encoding="utf-8"))]
    assert not bad, bad[:20]


@pytest.mark.parametrize("page, name, target", [
    ("45_tutorial_part_a.html", "explain", "12_shapley.html#explain"),                  # imported from part A
    ("45_tutorial_part_a.html", "shapley_values", "12_shapley.html#shapley-values"),
    ("46_tutorial_part_b.html", "NeuralizedSVM", "21_svm.html#neuralizedsvm"),
    ("47_tutorial_part_c.html", "conditional_mutual_information", "30_information.html#conditional-mutual-information"),
    ("48_which_explainer.html", "naive_bayes.explain", "12_shapley.html#explain"),   # the three `explain`, each in its part
    ("48_which_explainer.html", "neuralized.explain", "24a_explain.html#explain"),
    ("48_which_explainer.html", "gnb.explain", "41_gnb_shapley.html#explain"),
    ("47a_tutorial_one_geometry.html", "pairwise_distances", "13_geometry.html#pairwise-distances"),   # the fourth tutorial
    ("47a_tutorial_one_geometry.html", "background_sample", "08_explanation.html#background-sample"),
])
def test_api_links_go_to_their_part(site, page, name, target):
    assert _hrefs(site / page).get(name) == {target}, _hrefs(site / page).get(name)


def test_the_landing_page_opens_the_reading_path(site):
    html = (site / "index.html").read_text(encoding="utf-8")
    wanted = ["45_tutorial_part_a", "46_tutorial_part_b", "47_tutorial_part_c", "47a_tutorial_one_geometry", "48_which_explainer",
              "49_results_and_proofs", "A_naive_bayes", "B_neuralized", "C_gnb", "19_log_odds_experiments", "27_experiments", "39_gnb_experiments"]
    body = html.split('id="main-content"', 1)[-1]   # the page itself, not the sidebar
    missing = [s for s in wanted if f'href="{s}.html"' not in body]
    assert not missing, missing
    captions = re.findall(r'<p aria-level="2" class="caption" role="heading"><span class="caption-text">(.*?)</span>', html)
    assert captions[0] == "Start here" and captions[1].startswith("Part A") and captions[-1] == "For developers", captions
