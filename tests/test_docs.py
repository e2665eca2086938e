"""The landing page, the README and the site's table of contents stay in step with the notebooks."""
from pathlib import Path

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
