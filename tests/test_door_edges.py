"""Edges of the explain doors found by a bad-input review: each either works or fails with a message naming
what was wrong (sparse rows for part A, empty dask partitions, an uncreatable --cache folder, Explanation
selections that numpy or Python would otherwise refuse in their own words)."""
from __future__ import annotations

import contextlib
import io

import numpy as np
import pandas as pd
import pytest

from xai_geometry.cli import main as cli_main


def _cli(*argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try: status = cli_main(list(argv))
        except SystemExit as e: status = e.code
    return status, err.getvalue()


# ---- 3. --cache on a folder that cannot be made: exit 2, like --out --------------------------------------
@pytest.mark.parametrize("option", ["--out", "--cache"])
@pytest.mark.parametrize("under", [False, True])
def test_uncreatable_folder_is_a_usage_error(tmp_path, option, under):
    blocked = tmp_path / "file"; blocked.write_text("")
    where = blocked / "sub" if under else blocked     # under a regular file: no folder can be made (even as root)
    status, err = _cli("reproduce", "part-c", "--quick", "--no-progress", option, str(where))
    assert status == 2, err
    assert f"{option} {where}: " in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "unexpected error" not in err
