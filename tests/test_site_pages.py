"""The built documentation site as a reader sees it: every page opened in headless Chromium at 1024 and 1400 px.

Two checks on every page and at both widths, after its images have loaded and MathJax has typeset its maths:
every figure is drawn at its own shape (the aspect ratio of the PNG, within 2%), no display equation runs
past its column (wider than its box, which then scrolls sideways, or past the right edge of the article), and no table
(markdown or printed by a code cell) is wider than the article's column (it would scroll sideways inside its output).

Run against a built site: `XAI_GEOMETRY_SITE=_site pytest tests/test_site_pages.py -n 0` (continuous integration
does, after `xai-geometry docs --out _site`). Needs Chromium and its driver (Debian: `apt-get install chromium
chromium-driver`) and selenium (the dev extra); skipped with a reason without a site, a browser or selenium.
"""
import os
import re
import shutil
from pathlib import Path

import pytest

WIDTHS = (1024, 1400)
RATIO_TOL = 0.02   # a figure's drawn aspect ratio within 2% of its PNG's
EDGE_TOL = 1       # px: sub-pixel rounding of the layout
# Tables allowed to be wider than the article's column, by window width: `{width: {(page, section id), ...}}`. None:
# the docs' stylesheet (`docs._CSS`) sets printed dataframes small with headers that wrap, and a cell that prints a
# wider table rounds its numbers or shows fewer columns.
WIDE_TABLES_OK = {1024: set(), 1400: set()}

# One page, measured: every <img> drawn (natural and drawn size) and every display equation (its box, its parent's,
# the article's right edge). Runs once the page's images are decoded and MathJax has typeset (or after 30 s).
_MEASURE = r"""
const done = arguments[arguments.length - 1];
const t0 = Date.now();
function mathReady() {
  const M = window.MathJax;
  if (!document.querySelector('.math, mjx-container')) return Promise.resolve('no maths');
  if (M && M.startup && M.startup.promise) return M.startup.promise.then(() => 'typeset');
  if (Date.now() - t0 > 30000) return Promise.resolve('MathJax did not load');
  return new Promise(r => setTimeout(r, 100)).then(mathReady);
}
Promise.all([mathReady(), document.fonts ? document.fonts.ready : null,
             ...Array.from(document.images, i => i.decode().catch(() => null))]).then(([status]) => {
  const article = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  const imgs = Array.from(document.images).map(i => {
    const r = i.getBoundingClientRect();
    return {src: i.getAttribute('src'), nw: i.naturalWidth, nh: i.naturalHeight, w: r.width, h: r.height,
            visible: i.getClientRects().length > 0};
  });
  const tex = new Map();   // each typeset equation's TeX source, from MathJax's list of the page's maths
  try { for (const m of MathJax.startup.document.math) tex.set(m.typesetRoot, m.math); } catch (e) {}
  const eqs = Array.from(document.querySelectorAll('mjx-container[display="true"]')).map(e => {
    const box = e.parentElement && e.parentElement.classList.contains('math') ? e.parentElement : e;
    const sec = e.closest('section[id]');
    return {tex: (tex.get(e) || '').trim().replace(/\s+/g, ' '), section: sec ? sec.id : '',
            sw: e.scrollWidth, cw: e.clientWidth, psw: box.scrollWidth, pcw: box.clientWidth,
            right: e.getBoundingClientRect().right};
  });
  const cs = getComputedStyle(article), ar = article.getBoundingClientRect();
  const colLeft = ar.left + parseFloat(cs.paddingLeft), colRight = ar.right - parseFloat(cs.paddingRight);
  const tables = Array.from(article.querySelectorAll('table')).filter(t => t.getClientRects().length > 0).map(t => {
    const r = t.getBoundingClientRect(), sec = t.closest('section[id]'), th = t.querySelector('th, td');
    return {section: sec ? sec.id : '', head: th ? th.innerText.trim().slice(0, 40) : '', w: r.width, right: r.right};
  });
  done({status: status, right: ar.right, imgs: imgs, eqs: eqs, col: colRight - colLeft, colRight: colRight, tables: tables});
}).catch(e => done({error: String(e)}));
"""


def _site() -> Path:
    if not os.environ.get("XAI_GEOMETRY_SITE"):
        pytest.skip("XAI_GEOMETRY_SITE is not set: build the site (`xai-geometry docs --out _site`) and set it to check its pages")
    site = Path(os.environ["XAI_GEOMETRY_SITE"])
    if not (site / "index.html").is_file(): pytest.skip(f"no built site at {site} (no index.html)")
    return site


def _driver():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[dev]')")
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    driver = shutil.which("chromedriver")
    if not (browser and driver):
        pytest.skip("no Chromium and chromedriver on PATH (Debian: apt-get install chromium chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
              "--force-device-scale-factor=1", "--allow-file-access-from-files"):
        opts.add_argument(a)
    d = webdriver.Chrome(options=opts, service=Service(driver))
    d.set_script_timeout(60)
    d.set_page_load_timeout(60)
    return d


def measure_site(site: Path, widths=WIDTHS) -> dict:
    "`{(width, page): measurements}` for every top-level page of the site (see `_MEASURE`)."
    pages = sorted(p for p in Path(site).glob("*.html") if p.name not in ("genindex.html", "search.html"))
    d, out = _driver(), {}
    try:
        for w in widths:
            d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                              {"width": w, "height": 900, "deviceScaleFactor": 1, "mobile": False})
            for p in pages:
                d.get(p.resolve().as_uri())
                out[(w, p.name)] = d.execute_async_script(_MEASURE)
    finally:
        d.quit()
    return out


def misshapen_images(m: dict) -> list[tuple]:
    "`(width, page, src, natural w×h, drawn w×h, drawn/natural ratio)` of the figures drawn at another shape."
    bad = []
    for (w, page), r in m.items():
        for i in r.get("imgs", []):
            if not (i["visible"] and i["nw"] and i["nh"] and i["w"] >= 2 and i["h"] >= 2): continue
            q = (i["w"] / i["h"]) / (i["nw"] / i["nh"])
            if abs(q - 1) > RATIO_TOL:
                bad.append((w, page, i["src"], f"{i['nw']}x{i['nh']}", f"{i['w']:.0f}x{i['h']:.0f}", round(q, 3)))
    return bad


def overflowing_equations(m: dict) -> list[tuple]:
    """`(width, page, section, the equation's TeX, its width, its column's width, px past the article's edge)` of the
    display equations wider than their column (they scroll sideways) or reaching past the article's right edge."""
    bad = []
    for (w, page), r in m.items():
        for e in r.get("eqs", []):
            past = e["right"] - r["right"]
            if e["sw"] > e["cw"] + EDGE_TOL or e["psw"] > e["pcw"] + EDGE_TOL or past > EDGE_TOL:
                bad.append((w, page, e["section"], e["tex"][:70], max(e["sw"], e["psw"]), min(e["cw"], e["pcw"]),
                            round(max(past, 0))))
    return bad


def wide_tables(m: dict) -> list[tuple]:
    """`(width, page, section, its first header, the table's width, the column's width)` of the tables wider than the
    article's column or reaching past its right edge (`WIDE_TABLES_OK` left out)."""
    bad = []
    for (w, page), r in m.items():
        for t in r.get("tables", []):
            if (page, t["section"]) in WIDE_TABLES_OK.get(w, ()): continue
            if t["w"] > r["col"] + EDGE_TOL or t["right"] > r["colRight"] + EDGE_TOL:
                bad.append((w, page, t["section"], t["head"], round(t["w"]), round(r["col"])))
    return bad


def _by_page(bad: list[tuple]) -> str:
    "A failure's list, page by page: how many at each width, then each one."
    pages = {}
    for b in bad: pages.setdefault(b[1], []).append(b)
    lines = []
    for page, l in pages.items():
        lines.append(f"{page}: " + ", ".join(f"{sum(x[0] == w for x in l)} at {w} px" for w in WIDTHS))
        lines += [f"    {x[0]} px: " + " | ".join(map(str, x[2:])) for x in l]
    return "\n".join(lines)


class _Measured(dict):
    def __repr__(self): return f"<{len(self)} pages measured>"   # not the whole measurement in a failure's traceback


@pytest.fixture(scope="module")
def measured():
    return _Measured(measure_site(_site()))


def test_every_page_was_read(measured):
    errors = [(k, r["error"]) for k, r in measured.items() if "error" in r]
    assert not errors, errors[:10]
    assert len(measured) >= 2 * 60, len(measured)   # every page at both widths
    late = [k for k, r in measured.items() if r.get("status") == "MathJax did not load"]
    assert not late, f"MathJax did not typeset {len(late)} pages, e.g. {late[:5]}"
    assert sum(len(r["imgs"]) for r in measured.values()) > 2 * 60, "the pages' figures were not found"


def test_figures_are_drawn_at_their_own_shape(measured):
    bad = misshapen_images(measured)
    if bad: pytest.fail(f"{len(bad)} figures drawn at another aspect ratio than their PNG's "
                        "(src | natural size | drawn size | drawn/natural ratio):\n" + _by_page(bad), pytrace=False)


def test_display_equations_fit_their_column(measured):
    bad = overflowing_equations(measured)
    if bad: pytest.fail(f"{len(bad)} display equations wider than their column (section | TeX | its width | the column's "
                        "width | px past the article's edge):\n" + _by_page(bad), pytrace=False)


def test_tables_fit_the_column(measured):
    assert sum(len(r.get("tables", [])) for r in measured.values()) > 2 * 20, "the pages' tables were not found"
    bad = wide_tables(measured)
    if bad: pytest.fail(f"{len(bad)} tables wider than the article's column (section | first header | the table's width | "
                        "the column's width):\n" + _by_page(bad), pytrace=False)


def test_the_course_pages_print_no_answer_key():
    """Every graded unit of the course is on the site as the student sees it: no solution, no hidden test, no model
    answer, and a note on where the teacher's version is (`xai-geometry course`)."""
    from xai_geometry.course import GRADED_UNITS, TEACHER_NOTE
    site = _site()
    markers = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "BEGIN MARK SCHEME", "Model answer")
    bad = {}
    note = re.sub(r"[*`]", "", TEACHER_NOTE)                                        # the note as the page prints it
    for stem in GRADED_UNITS:
        html = (site / f"{stem}.html").read_text(encoding="utf-8")
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).replace("\u2019", "'")  # the page's text, quotes straight
        found = [m for m in markers if m in text]
        if found or note not in text: bad[stem] = found or ["no note on the teacher's version"]
    assert not bad, bad
