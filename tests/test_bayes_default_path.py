"""The default path is a tested path: ``fit`` with ``sampler="auto"`` on every kind of table.

Regression guard: the default sampler (nutpie when installed) once crashed on every random
K-fold table with ``KeyError: 'Unknown shared variable: scatter_tau'``, because the other
tests name ``sampler="pymc"`` and none ran the default on K-fold tables. Here both schemes
and every replicate kind are fitted with the default and with PyMC's NUTS, on loss tables of
real CV runs (a ridge regression: random K-fold and leave-one-source-out, unequal block
sizes), and so are :func:`~bayescv.bayes.paired_comparison` and the ``bayescv bayes``
command with their default sampler.

The chains are short (2 x 200 draws after 200 tuning steps): the tests check that a fit runs
and gives the right finite intervals, not that it converges, so :class:`SamplingWarning` is
allowed here (and only it). With bayescv's numba cache warm, a nutpie fit takes well under a
second; PyMC compiles its model once per scheme and K for the module.
"""

import math
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from replicated_tables import cv, data, make_tables, split
from sklearn.linear_model import Ridge

from bayescv import cross_val_losses, to_frame
from bayescv.bayes import SamplingWarning, fit, paired_comparison, posterior_intervals

pytest.importorskip("pymc")

try:
    import nutpie  # noqa: F401

    AUTO = "nutpie"
except ImportError:  # pragma: no cover - nutpie is in the bayes extra
    AUTO = "pymc"

SHORT = {"draws": 200, "tune": 200, "chains": 2}
SCHEMES = ("random", "source")
KINDS = ("none", "repeat", "bootstrap", "independent")
TARGETS = {
    "source": ["bayes_expected_cv", "bayes_ose", "bayes_new_source"],
    "random": ["bayes_expected_cv"],
}


@pytest.fixture(scope="module")
def tables():
    """Loss tables by (scheme, kind), built on first use and shared by the module."""
    cache = {}

    def get(scheme, kind):
        if (scheme, kind) not in cache:
            cache[scheme, kind] = make_tables(scheme, kind)
        return cache[scheme, kind]

    return get


def _fit(*args, **kwargs):
    """``fit`` with SamplingWarning allowed (short chains); any other warning is an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplingWarning)
        return fit(*args, **kwargs)


def _check_intervals(idata, scheme):
    ci = posterior_intervals(idata)
    assert ci["method_name"].values.tolist() == TARGETS[scheme]
    assert ci["target"].values.tolist() == [m.removeprefix("bayes_") for m in TARGETS[scheme]]
    lower, estimate, upper = (ci[v].values for v in ("lower", "estimate", "upper"))
    assert np.isfinite(lower).all()
    assert np.isfinite(upper).all()
    assert (lower < estimate).all()
    assert (estimate < upper).all()
    return ci


@pytest.mark.parametrize("sampler", ["auto", "pymc"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_fit_runs_on_every_table_with_every_sampler(tables, scheme, kind, sampler):
    observed, boot = tables(scheme, kind)
    idata = _fit(observed, bootstrap=boot, sampler=sampler, random_state=3, **SHORT)
    attrs = idata.sample_stats.attrs
    assert attrs["sampler"] == (AUTO if sampler == "auto" else "pymc")
    assert attrs["sampler_requested"] == sampler
    assert attrs["scheme"] == scheme
    assert attrs["replicate_kind"] == ("single" if kind == "none" else kind)
    assert math.isfinite(attrs["compile_seconds"])
    assert attrs["compile_seconds"] >= 0
    assert idata.posterior.sizes["chain"] == SHORT["chains"]
    assert idata.posterior.sizes["draw"] == SHORT["draws"]
    ci = _check_intervals(idata, scheme)
    assert ci.attrs["sampler"] == attrs["sampler"]
    # The fixed-source target is centred on the pooled CV estimate whatever the sampler
    # (E[expected_cv] = μ̂ exactly; 6 posterior sds is far beyond Monte Carlo error).
    mu_hat = float(observed["loss"].mean())
    se = float(ci["se"].sel(method_name="bayes_expected_cv"))
    assert abs(float(ci["estimate"].sel(method_name="bayes_expected_cv")) - mu_hat) < 6 * se


def test_auto_fit_is_reproducible(tables):
    observed, boot = tables("random", "bootstrap")
    a, b = (_fit(observed, bootstrap=boot, random_state=11, **SHORT) for _ in range(2))
    np.testing.assert_array_equal(
        a.posterior["expected_cv"].values, b.posterior["expected_cv"].values
    )
    np.testing.assert_array_equal(a.posterior["rho"].values, b.posterior["rho"].values)


def _pair(scheme):
    """Paired loss tables of two learners on the same folds."""
    X, y, groups = data(5, scheme)
    split_kw = split(scheme, groups)
    a, b = (
        cross_val_losses(Ridge(alpha=alpha), X, y, random_state=0, **split_kw)
        for alpha in (0.1, 60.0)
    )
    return a, b


@pytest.mark.parametrize("scheme", SCHEMES)
def test_paired_comparison_with_the_default_sampler(scheme):
    a, b = _pair(scheme)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplingWarning)
        idata, summary = paired_comparison(a, b, rope=0.01, random_state=0, **SHORT)
    assert idata.sample_stats.attrs["sampler"] == AUTO
    assert idata.sample_stats.attrs["sampler_requested"] == "auto"
    blocks = [str(x) for x in np.unique(a["block"].values)]
    extra = ["ose", "new_source"] if scheme == "source" else []
    assert summary["target"].values.tolist() == [*blocks, "expected_cv", *extra]
    probs = summary[["p_better", "p_equivalent", "p_worse"]].to_array().sum("variable")
    np.testing.assert_allclose(probs, 1.0)
    for name in ("mean", "lower", "upper"):
        assert np.isfinite(summary[name].values).all()
    assert (summary["lower"] < summary["mean"]).all()
    assert (summary["mean"] < summary["upper"]).all()
    _check_intervals(idata, scheme)


@pytest.fixture(scope="module")
def cli_runs(tmp_path_factory):
    """`bayescv bayes FILE.csv` with default options on a K-fold and a source CSV.

    As a user types it: no --sampler, no --scheme (CVS from the source column, else CVR);
    only short chains, to keep the test fast. The two commands run at once.
    """
    folder = tmp_path_factory.mktemp("default_path")
    code = "from bayescv.cli import main; raise SystemExit(main())"
    procs = {}
    for scheme in SCHEMES:
        table = cv(Ridge(), 0, scheme)
        columns = ["loss", "block", "source"] if scheme == "source" else ["loss", "block"]
        path = folder / f"{scheme}.csv"
        to_frame(table)[columns].to_csv(path, index=False)
        argv = ["bayes", str(path), "--draws", "200", "--tune", "200"]
        if scheme == "source":
            argv += ["--source-col", "source"]
        procs[scheme] = subprocess.Popen(
            [sys.executable, "-c", code, *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    out = {}
    for scheme, proc in procs.items():
        try:
            stdout, stderr = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        out[scheme] = (proc.returncode, stdout, stderr)
    return out


@pytest.mark.parametrize("scheme", SCHEMES)
def test_cli_with_default_options(cli_runs, scheme):
    code, out, err = cli_runs[scheme]
    assert code == 0, err
    assert "Traceback" not in err, err
    assert "Exception ignored" not in err, err
    assert f"scheme {scheme!r}; gaussian likelihood; sampler {AUTO}" in out
    for method in TARGETS[scheme]:
        assert method in out
    if scheme == "random":
        assert "bayes_ose" not in out
        assert "bayes_new_source" not in out


def test_repeated_kfold_of_a_classifier_without_errors():
    """The default fit of repeated K-fold 0-1 losses with no error: the binomial model.

    Regression guard: such a table (``n_repeats`` of a classifier that separates the classes)
    went to the Gaussian model, which refused it ("all losses are equal within every
    block"). Setosa against versicolor is linearly separable: no fold model errs.
    """
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    X, y = load_iris(return_X_y=True)
    keep = y < 2
    table = cross_val_losses(
        LogisticRegression(), X[keep], y[keep], loss="zero_one", cv=5, n_repeats=3,
        random_state=0,
    )  # fmt: skip
    assert table["loss"].sum() == 0
    idata = _fit(table, random_state=0)
    assert idata.sample_stats.attrs["likelihood"] == "binomial"
    assert idata.sample_stats.attrs["sampler"] == AUTO
    ci = posterior_intervals(idata)
    upper = float(ci["upper"].sel(method_name="bayes_expected_cv"))
    n = int(keep.sum())  # points per run: the repeats add no new points
    # Of the order of the rule of three, 3 / N, as for one run (test_bayes_binomial).
    assert 3.0 / n < upper < 10 * 3.0 / n
    assert float(ci["lower"].sel(method_name="bayes_expected_cv")) >= 0


_FIRST_FIT_OF_THE_DAY = """
import warnings
warnings.simplefilter("error")  # as pytest's filterwarnings = error, and as -W error
import numpy as np
from bayescv.losses import from_arrays
from bayescv.bayes import SamplingWarning, fit, posterior_intervals
from bayescv.tails import tail_shape
block = np.repeat(np.arange(8), 50)
zero_one = from_arrays((np.arange(400) % 40 == 0).astype(float), block, loss_name="zero_one")
squared = from_arrays(np.random.default_rng(0).exponential(1.0, 400), block)
for table in (zero_one, squared):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplingWarning)  # short chains
        idata = fit(table, draws=200, tune=200, chains=2, random_state=0)
    posterior_intervals(idata, kind="hdi")
assert np.isfinite(tail_shape(squared)["khat_pooled"].item())
print("ok")
"""


def test_first_fit_of_the_day_prints_no_arviz_notice(tmp_path):
    """ArviZ warns (FutureWarning) on its first import of each day, from whichever module
    imports it: nutpie, on a user's first default fit. bayescv imports it quietly.

    A fresh process with an empty user cache (no ArviZ day stamp) and every warning an error
    runs the default fit on a 0-1 and a squared-loss table, an HDI and a k̂; bayescv's numba
    cache stays where it is. The control shows the premise: a plain ``import arviz`` in the
    same setting does warn.
    """
    from bayescv.bayes import cache_dir

    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "user_cache"),
        "BAYESCV_CACHE_DIR": str(cache_dir()),
    }
    control = subprocess.run(
        [sys.executable, "-W", "error::FutureWarning", "-c", "import arviz"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if control.returncode == 0:  # pragma: no cover - ArviZ without the daily notice
        pytest.skip("this ArviZ prints no import-time notice here")
    assert "FutureWarning" in control.stderr
    # ArviZ writes its day stamp after warning; an error raised by the warning stops it.
    assert not list((tmp_path / "user_cache").rglob("daily_warning"))
    run = subprocess.run(
        [sys.executable, "-c", _FIRST_FIT_OF_THE_DAY],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"
    assert "ArviZ is undergoing" not in run.stderr
