"""The public names are a contract: examples, docs and outside checks import them."""
import importlib
import subprocess
import sys

import pytest

CONTRACT = {
    "xai_geometry": ["Explanation"],
    "xai_geometry.datasets": ["load", "list_datasets"],
    "xai_geometry.naive_bayes.modl": ["discretization_cost", "grouping_cost", "MODLDiscretizer", "MODLGrouper", "MODLEncoder"],
    "xai_geometry.naive_bayes.classifier": ["WeightedNaiveBayes"],
    "xai_geometry.naive_bayes.shapley": ["shapley_values", "exact_shapley_values"],
    "xai_geometry.naive_bayes.geometry": ["embedding", "pairwise_distances"],
    "xai_geometry.naive_bayes.neighbors": ["SupervisedKNeighborsClassifier", "local_agreement", "local_delta", "local_margin"],
    "xai_geometry.naive_bayes": ["explain", "WeightedNaiveBayes", "shapley_values", "SupervisedKNeighborsClassifier"],
    "xai_geometry.neuralized": ["NeuralizedSVM", "NeuralizedKNN", "NeuralizedKernelRegression", "NeuralizedMulticlassSVM", "explain"],
    "xai_geometry.neuralized.flipping": ["flipping_curve", "aufc"],
    "xai_geometry.gnb": ["GeneralizedNaiveBayes", "explain"],
    "xai_geometry.stats": ["friedman_nemenyi", "corrected_ttest", "holm"],
    "xai_geometry.explainers": ["Method", "register", "table", "labels", "colours", "for_model", "resolve", "classes"],
    "xai_geometry.door": ["explain", "Explainer", "evaluate"],
}
SUBPACKAGES = ["xai_geometry", "xai_geometry.naive_bayes", "xai_geometry.neuralized", "xai_geometry.gnb", "xai_geometry.methods"]


@pytest.mark.parametrize("module,names", sorted(CONTRACT.items()))
def test_contract_names_import(module, names):
    mod = importlib.import_module(module)
    for n in names: assert callable(getattr(mod, n)), f"{module}.{n}"


@pytest.mark.parametrize("pkg", SUBPACKAGES)
def test_packages_list_their_names_in_a_real_all(pkg):
    "Every name of `__all__` exists (so IDEs, type checkers and `import *` see them), and `import *` gives them."
    mod = importlib.import_module(pkg)
    assert mod.__all__, f"{pkg}.__all__ is empty"
    for n in mod.__all__: assert hasattr(mod, n), f"{pkg}.{n} listed in __all__ but missing"
    ns = {}
    exec(f"from {pkg} import *", ns)
    assert set(mod.__all__) <= set(ns)
    with pytest.raises(AttributeError): getattr(mod, "no_such_name")


def test_library_does_not_import_dev_tools():
    code = ("import sys, xai_geometry, xai_geometry.cli, xai_geometry.datasets, xai_geometry.runner\n"
            "for p in ['naive_bayes', 'neuralized', 'gnb']:\n"
            "    m = __import__('xai_geometry.' + p, fromlist=['__all__'])\n"
            "    [getattr(m, n) for n in m.__all__]\n"
            "bad = sorted(k for k in sys.modules if k.split('.')[0] in ('nbdev', 'fastcore', 'execnb'))\n"
            "assert not bad, bad\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]


def test_the_registry_reads_as_a_mapping_of_method_classes():
    "xg.explainers[name] is a Method class; labels and colours of part B's figures are unchanged; ExplainerSpec warns."
    import xai_geometry as xg
    import xai_geometry.methods  # noqa: F401
    from xai_geometry.explainers import ExplainerSpec, Method
    assert issubclass(xg.explainers["lrp"], Method) and "kernel_shap" in xg.explainers
    assert list(xg.explainers) == [c.name for c in xg.explainers.classes()]
    old = {"shapley": ("Shapley", "tab:red"), "lrp": ("LRP", "black"), "gradient_x_input": ("GI", "grey"),
           "sensitivity": ("(∇f)²", "tab:pink"), "integrated_gradients": ("IG", "tab:olive"), "occlusion": ("Occlusion", "tab:purple"),
           "shapley_sampling": ("SHAP", "tab:brown"), "kernel_shap": ("Kernel SHAP", "tab:orange"), "lime": ("LIME", "tab:green"),
           "shap_kernel": ("Kernel SHAP (shap)", "tab:orange"), "lime_tabular": ("LIME (lime)", "tab:green")}
    L, C = xg.explainers.labels(), xg.explainers.colours()
    assert {k: (L[k], C[k]) for k in old} == old
    with pytest.warns(FutureWarning, match="ExplainerSpec is deprecated"):
        ExplainerSpec("x", "m:f", "any", "any", "X", "k", "c", "r")
