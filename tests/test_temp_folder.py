"""A test run leaves the system's temporary folder as it found it (see tests/conftest.py).

scikit-learn's estimator checks make `sklearn_testing_*` folders and remove them only at interpreter exit, which
pytest-xdist's workers do not reach: one run once left 39 of them behind. Here a small pytest run with this
suite's conftest and two workers makes such folders (and uses `tmp_path`), under a fresh temporary folder that must be
empty again when it ends.
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

_LEAVES = '''
import tempfile, pytest

@pytest.mark.parametrize("i", range(4))
def test_leaves_a_folder(i, tmp_path):
    (tmp_path / "x.txt").write_text("x")
    tempfile.mkdtemp(prefix="sklearn_testing_")   # what scikit-learn's checks do, removed only at exit
    tempfile.NamedTemporaryFile(delete=False).close()
'''


def test_this_process_writes_to_its_own_temporary_folder():
    own = tempfile.gettempdir()
    assert Path(own).name.startswith("xai_geometry_tests_"), own
    assert os.environ["TMPDIR"] == own


@pytest.mark.heavy   # a pytest run of its own, with two workers (continuous integration also checks its own runs)
@pytest.mark.parametrize("workers", ["2"])
def test_a_run_leaves_the_temporary_folder_as_it_found_it(tmp_path, workers):
    work, tmp = tmp_path / "suite", tmp_path / "tmp"
    work.mkdir(); tmp.mkdir()
    shutil.copy(HERE / "conftest.py", work / "conftest.py")
    (work / "test_leaves.py").write_text(_LEAVES)
    (work / "pytest.ini").write_text("[pytest]\n")
    env = {**os.environ, "TMPDIR": str(tmp)}
    env.pop("PYTEST_XDIST_WORKER", None); env.pop("PYTEST_XDIST_WORKER_COUNT", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", workers, str(work)],
                       cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "4 passed" in r.stdout, r.stdout[-2000:]
    assert not list(tmp.iterdir()), sorted(p.name for p in tmp.iterdir())
