"""The README's library snippet runs as written, from the folder that holds a clone of the repository.

A folder named `xai_geometry` in the working directory (the clone itself, seen from its parent folder)
must not shadow the installed package.
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _snippet() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    part = text.split("## Use it as a library", 1)[1]
    return re.search(r"```python\n(.*?)```", part, re.S).group(1)


def test_library_snippet_runs_beside_a_folder_named_like_the_package(tmp_path):
    (tmp_path / "xai_geometry").mkdir()  # what a clone looks like from the folder that holds it
    (tmp_path / "xai_geometry" / "README.md").write_text("a clone\n")
    (tmp_path / "snippet.py").write_text(_snippet())
    r = subprocess.run([sys.executable, "snippet.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Explanation(" in r.stdout
