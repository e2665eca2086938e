"Cross-check of the MODL partitions against Khiops 11 (skipped when Khiops is not installed)."
from pathlib import Path

import pytest

from xai_geometry.datasets import load
from xai_geometry.khiops import khiops_available, run_khiops
from xai_geometry.experiments.bench_modl import khiops_agreement

OK, WHY = khiops_available()
CACHE = Path(__file__).resolve().parents[1] / ".cache" / "khiops"


@pytest.mark.skipif(not OK, reason=f"Khiops 11 is not available: {WHY}")
@pytest.mark.parametrize("name", ["adult", "mushroom", "sickeuthyroid", "letter", "shuttle"])
def test_partitions_agree_with_khiops(name):
    X, y = load(name)
    ref = run_khiops(X, y, shapley=False, cache_dir=CACHE)
    df = khiops_agreement(X, y, ref)
    assert (df.parts == df.khiops_parts).all(), df[df.parts != df.khiops_parts]
    assert df.counts_agree.all(), df[~df.counts_agree]
    assert df.informative_agree.all(), df[~df.informative_agree]
    # our partition never costs more than Khiops' own partition under the same criterion
    assert df.cost_ok.all(), df[~df.cost_ok]
    assert df.default_group_agree.all(), df[~df.default_group_agree]
    # and levels agree with Khiops' report
    assert (df.level - df.khiops_level).abs().max() < 1e-6
