"""The comparison of two learners over several data sets (:mod:`bayescv.bayes.datasets`).

The process-level test runs fresh interpreters with ``BAYESCV_CACHE_DIR`` pointing at a
temporary directory, so it never touches the user's cache.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import integrate, special, stats

from bayescv.bayes import SamplingWarning, compare_datasets
from bayescv.bayes import _datasets_density as density
from bayescv.bayes.datasets_model import (
    build_datasets_model,
    conditional_delta,
    datasets_data,
    datasets_stats,
    loglik_marginal,
    loglik_sufficient,
)

FAST = {"draws": 300, "tune": 300, "chains": 2, "ess_min": 0.0, "rhat_max": math.inf}
VECTORS = ("lambda_w", "sigma_interval__")


def _simulate(rng, q=6, runs=2, folds=5, delta0=0.0, std0=0.3, sigma=1.0):
    """q data sets of runs × folds compound-symmetric measurements, ρ = 1/folds."""
    rho = 1.0 / folds
    j = runs * folds
    delta = rng.normal(delta0, std0, q)
    shared = rng.normal(size=(q, 1))
    noise = np.sqrt(1 - rho) * rng.standard_normal((q, j)) + np.sqrt(rho) * shared
    return delta[:, None] + sigma * noise


def _fit(diff, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplingWarning)
        return compare_datasets(diff, **{**FAST, **kwargs})


def _point(x, slices):
    return {n: (x[s] if n in VECTORS else x[s][0]) for n, s in slices.items()}


def _direct_logp(x: np.ndarray, rows: list, data: dict) -> float:
    """The model's log-density with scipy's distributions and the full J × J covariance."""
    p = _point(x, density.coordinate_slices(len(rows)))

    def interval(y, lo, hi):
        s = special.expit(y)
        # U(lo, hi) density and the Jacobian (hi − lo) s (1 − s) of the interval transform.
        return lo + (hi - lo) * s, np.sum(np.log(s * (1 - s)))

    d0, out = interval(p["delta0_interval__"], data["delta_lo"], data["delta_hi"])
    s0, lp = interval(p["std0_interval__"], 0.0, data["std0_hi"])
    al, lp2 = interval(p["gamma_alpha_interval__"], 1.0, 2.0)
    be, lp3 = interval(p["gamma_beta_interval__"], 0.01, 0.1)
    out += lp + lp2 + lp3
    m = np.exp(p["nu_minus_one_log__"])
    out += stats.gamma.logpdf(m, al, scale=1 / be) + np.log(m)
    k = (1 + m) / 2
    # w = sqrt(k) log λ, λ ~ Gamma(k, rate k): the density of λ and the Jacobian dλ/dw.
    lam = np.exp(p["lambda_w"] / np.sqrt(k))
    out += np.sum(stats.gamma.logpdf(lam, k, scale=1 / k) + np.log(lam / np.sqrt(k)))
    sigma, lp = interval(p["sigma_interval__"], 0.0, data["sigma_hi"])
    out += lp
    for i, row in enumerate(rows):
        j = row.size
        rho = data["rho"][i]
        # δ_i ~ N(δ0, std0² / λ_i) integrated out: its variance joins every entry.
        cov = sigma[i] ** 2 * ((1 - rho) * np.eye(j) + rho) + s0**2 / lam[i]
        out += stats.multivariate_normal(np.full(j, d0), cov).logpdf(row)
    return float(out)


def _three(seed):
    """Three data sets of unequal lengths (10, 15 and 6 measurements), and the model data."""
    rng = np.random.default_rng(seed)
    rows = [rng.normal(0.2, 1.0, 10), rng.normal(-0.3, 0.7, 15), rng.normal(0.5, 1.5, 6)]
    st_ = datasets_stats(rows)
    return [row / st_.scale for row in rows], datasets_data(st_), rng


def test_sufficient_statistic_likelihoods_equal_the_full_mvn():
    rng = np.random.default_rng(2)
    for j, rho in ((2, 0.5), (5, 0.2), (12, 0.1)):
        x = rng.normal(size=j)
        ss = np.sum((x - x.mean()) ** 2)
        for delta, sigma, tau2 in ((0.3, 0.8, 0.5), (-1.0, 2.5, 0.01)):
            cs = (1 - rho) * np.eye(j) + rho * np.ones((j, j))
            ref = stats.multivariate_normal(np.full(j, delta), sigma**2 * cs).logpdf(x)
            ours = loglik_sufficient(x.mean(), ss, j, rho, delta, sigma)
            assert ours == pytest.approx(ref, rel=1e-12)
            ref = stats.multivariate_normal(np.full(j, delta), sigma**2 * cs + tau2).logpdf(x)
            ours = loglik_marginal(x.mean(), ss, j, rho, delta, tau2, sigma)
            assert ours == pytest.approx(ref, rel=1e-12)


def test_scale_mixture_and_conditional_law_of_delta():
    # ∫ N(δ; δ0, s² / λ) Gamma(λ; ν/2, rate ν/2) dλ = StudentT(δ; ν, δ0, s).
    for nu, d0, s0, d in ((1.5, 0.2, 0.7, 2.0), (30.0, -1.0, 0.3, -0.8)):
        k = nu / 2

        def integrand(lam, k=k, d0=d0, s0=s0, d=d):
            return stats.norm.pdf(d, d0, s0 / np.sqrt(lam)) * stats.gamma.pdf(lam, k, scale=1 / k)

        mix, _ = integrate.quad(integrand, 0, np.inf)
        assert mix == pytest.approx(stats.t.pdf(d, nu, d0, s0), rel=1e-7)
    # δ_i given its data and the parameters: the normalised product of prior and likelihood.
    mean, n, rho, d0, tau2, sigma = 0.4, 20, 0.1, -0.2, 0.3, 1.1
    loc, var = conditional_delta(mean, n, rho, d0, tau2, sigma)
    grid = np.linspace(-3, 3, 20001)
    se2 = sigma**2 * (1 + (n - 1) * rho) / n
    dens = stats.norm.pdf(grid, d0, np.sqrt(tau2)) * stats.norm.pdf(mean, grid, np.sqrt(se2))
    dens /= dens.sum()
    assert loc == pytest.approx(np.sum(grid * dens), rel=1e-6)
    assert var == pytest.approx(np.sum((grid - loc) ** 2 * dens), rel=1e-5)


def test_digamma_matches_scipy():
    x = np.array([0.05, 0.5, 1.0, 1.7, 5.9, 6.0, 8.0, 30.0, 1e4])
    ours = np.array([density.digamma(v) for v in x])
    assert np.allclose(ours, special.digamma(x), rtol=1e-13, atol=1e-13)


def test_density_equals_direct_computation():
    rows, data, rng = _three(4)
    scal = np.array([float(data[n]) for n in density.SCALARS])
    for _ in range(4):
        x = rng.normal(scale=0.8, size=11)
        x[density.coordinate_slices(3)["sigma_interval__"]] -= 6.0
        value, _ = density.logp_and_grad(x, density.rows(data), scal)
        assert value == pytest.approx(_direct_logp(x, rows, data), rel=1e-10)


def test_density_and_gradient_equal_pymc():
    _, data, rng = _three(5)
    scal = np.array([float(data[n]) for n in density.SCALARS])
    model = build_datasets_model(data)
    logp, dlogp = model.compile_logp(), model.compile_dlogp()
    order = [v.name for v in model.value_vars]
    slices = density.coordinate_slices(3)
    assert sorted(order) == sorted(slices)
    for scale in (0.3, 1.0, 2.0):
        x = rng.normal(scale=scale, size=11)
        x[slices["sigma_interval__"]] -= 6.0
        value, grad = density.logp_and_grad(x, density.rows(data), scal)
        point = _point(x, slices)
        assert value == pytest.approx(float(logp(point)), rel=1e-9, abs=1e-8)
        flat = np.concatenate([np.atleast_1d(grad[slices[n]]) for n in order])
        assert np.allclose(dlogp(point), flat, rtol=1e-8, atol=1e-10)


def test_recovers_a_large_difference_and_is_symmetric():
    rng = np.random.default_rng(7)
    diff = _simulate(rng, q=8, runs=2, folds=5, delta0=-1.5, std0=0.2)
    s = _fit(diff, rope=0.1, runs=2, random_state=3)
    assert float(s["new_dataset_p_better"]) > 0.95
    assert float(s["delta0_upper"]) < 0
    assert (s["p_better"] > 0.95).all()
    assert s.attrs["sampler"] == "nutpie"
    flipped = _fit(-diff, rope=0.1, runs=2, random_state=3)
    for a, b in (("p_better", "p_worse"), ("p_worse", "p_better")):
        assert np.allclose(s[a], flipped[b], atol=0.05)
        assert float(s[f"new_dataset_{a}"]) == pytest.approx(
            float(flipped[f"new_dataset_{b}"]), abs=0.05
        )
    assert float(s["delta0_mean"]) == pytest.approx(-float(flipped["delta0_mean"]), abs=0.1)


def test_results_are_reproducible_and_well_formed():
    rng = np.random.default_rng(8)
    diff = _simulate(rng, q=4, delta0=0.2)
    names = ["iris", "wine", "adult", "spam"]
    a = _fit(diff, rope=0.05, runs=2, random_state=11, names=names)
    b = _fit(diff, rope=0.05, runs=2, random_state=11, names=names)
    c = _fit(diff, rope=0.05, runs=2, random_state=12, names=names)
    for name in a.data_vars:
        np.testing.assert_array_equal(a[name].values, b[name].values)
    assert not np.array_equal(a["delta_mean"].values, c["delta_mean"].values)
    assert list(a["dataset"].values) == names
    total = a["p_better"] + a["p_equivalent"] + a["p_worse"]
    assert np.allclose(total, 1.0)
    new = sum(float(a[f"new_dataset_p_{k}"]) for k in ("better", "equivalent", "worse"))
    assert new == pytest.approx(1.0)
    assert (a["delta_lower"] <= a["delta_mean"]).all()
    assert (a["delta_mean"] <= a["delta_upper"]).all()
    assert a.attrs["rope"] == 0.05
    assert a.attrs["runs"] == 2
    assert a.attrs["target"].startswith("difference of expected losses A − B")
    assert a.attrs["zero_variance_datasets"] == []
    for key in ("seconds", "divergences", "sampler", "compile_seconds"):
        assert key in a.attrs
    # A second fit in this process loads nothing: the callbacks are already there.
    assert b.attrs["compile_seconds"] < 0.05


def test_units_are_restored_and_idata_is_returned():
    rng = np.random.default_rng(9)
    diff = _simulate(rng, q=5, delta0=0.5, std0=0.2)
    s1, idata = _fit(diff, random_state=1, runs=2, return_inferencedata=True)
    # A power of 2 scales every float exactly: the scaled data, so the draws, are identical.
    s2 = _fit(64.0 * diff, random_state=1, runs=2, rope=64 * 0.1)
    assert np.allclose(64.0 * s1["delta_mean"], s2["delta_mean"], rtol=1e-12)
    assert float(64.0 * s1["delta0_upper"]) == pytest.approx(float(s2["delta0_upper"]))
    s3 = _fit(diff, random_state=1, runs=2, rope=0.1)
    np.testing.assert_array_equal(s3["p_better"].values, s2["p_better"].values)
    post = idata.posterior
    assert post["delta"].dims == ("chain", "draw", "dataset")
    # delta_mean averages δ's conditional means; the draws scatter around them.
    draws = post["delta"].mean(("chain", "draw"))
    assert np.allclose(draws, s1["delta_mean"], atol=0.05)
    assert (post["nu"] >= 1).all()


def test_unequal_lengths_are_supported():
    rng = np.random.default_rng(10)
    rows = [rng.normal(-1.0, 1.0, j) for j in (10, 20, 5, 15)]
    s = _fit(rows, runs=1, random_state=0)
    assert list(s["n"].values) == [10, 20, 5, 15]
    assert np.allclose(datasets_stats(rows).rho, [1 / 10, 1 / 20, 1 / 5, 1 / 15])
    kept = [rows[0], rows[1], rows[3]]
    assert np.allclose(datasets_stats(kept, runs=5).rho, [1 / 2, 1 / 4, 1 / 3])
    with pytest.raises(ValueError, match="fewer than 2 folds"):
        datasets_stats(rows, runs=5)
    with pytest.raises(ValueError, match="does not divide"):
        datasets_stats(rows, runs=3)


def test_zero_variance_is_floored_deterministically_and_flagged():
    rng = np.random.default_rng(12)
    diff = _simulate(rng, q=4)
    diff[2] = 0.25
    with pytest.warns(UserWarning, match=r"data sets \[2\] have zero variance"):
        a = _fit(diff, runs=2, random_state=5)
    with pytest.warns(UserWarning, match="zero variance"):
        b = _fit(diff, runs=2, random_state=5)
    assert a.attrs["zero_variance_datasets"] == ["2"]
    np.testing.assert_array_equal(a["delta_mean"].values, b["delta_mean"].values)
    st_ = datasets_stats(np.delete(diff, 2, axis=0), runs=2)
    pooled = st_.ss.sum() / (st_.n - 1).sum() * st_.scale**2
    with pytest.warns(UserWarning, match="zero variance"):
        full = datasets_stats(diff, runs=2)
    assert full.ss[2] * full.scale**2 == pytest.approx(0.01 * 9 * pooled)


@pytest.mark.parametrize(
    ("diff", "kwargs", "match"),
    [
        (np.array([[0.1, np.nan, 0.2], [0.1, 0.2, 0.3]]), {}, "NaN"),
        (np.array([[0.1, np.inf, 0.2], [0.1, 0.2, 0.3]]), {}, "infinite"),
        (np.ones((1, 10)) + np.arange(10), {}, "at least 2 data sets"),
        (np.arange(10.0).reshape(10, 1), {}, "at least 2"),
        (np.arange(20.0).reshape(2, 10), {"runs": 3}, "does not divide"),
        (np.arange(20.0).reshape(2, 10), {"runs": 10}, "fewer than 2 folds"),
        (np.arange(20.0).reshape(2, 10), {"rope": -0.1}, "rope"),
        (np.arange(20.0).reshape(2, 10), {"rope": np.nan}, "rope"),
        (np.ones((3, 10)), {}, "constant within every data set"),
        (np.arange(30.0), {}, "2-d array"),
        (np.arange(20.0).reshape(2, 10), {"sampler": "stan"}, "sampler"),
        (np.arange(20.0).reshape(2, 10), {"names": ["a"]}, "names"),
        (np.arange(20.0).reshape(2, 10), {"draws": 0}, "draws"),
    ],
)
def test_bad_input(diff, kwargs, match):
    with pytest.raises(ValueError, match=match):
        compare_datasets(diff, **kwargs)


@pytest.mark.slow  # PyMC compiles the model inside pm.sample: 15-20 s on 2 cores
def test_pymc_sampler_agrees_with_nutpie():
    pytest.importorskip("pymc")
    rng = np.random.default_rng(14)
    diff = _simulate(rng, q=3, delta0=-1.0, std0=0.2)
    kwargs = {"runs": 2, "random_state": 2, "draws": 200, "tune": 200, "chains": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyMC's own notices about a short run
        slow = _fit(diff, sampler="pymc", **kwargs)
    fast = _fit(diff, sampler="nutpie", **kwargs)
    assert slow.attrs["sampler"] == "pymc"
    assert float(slow["delta0_mean"]) == pytest.approx(float(fast["delta0_mean"]), abs=0.5)
    assert np.allclose(slow["delta_mean"], fast["delta_mean"], atol=0.3)


#: A fit in a fresh process; prints one JSON line: the sampler, the time this fit spent
#: compiling or loading the density, numba's cache hits and the result.
FIT_SCRIPT = """
import json, warnings
import numpy as np
from bayescv.bayes import SamplingWarning, compare_datasets
from bayescv.bayes import _datasets_density as density

diff = np.random.default_rng(0).normal(0.2, 1.0, size=(5, 10))
with warnings.catch_warnings():
    warnings.simplefilter("ignore", SamplingWarning)
    s = compare_datasets(diff, draws=100, tune=100, chains=2, random_state=0)
print(json.dumps({
    "sampler": s.attrs["sampler"], "compile_seconds": s.attrs["compile_seconds"],
    "cache_hits": int(density.callbacks()["logp"].cache_hits),
    "delta0_mean": float(s["delta0_mean"]),
}))
"""


def test_a_later_process_loads_the_density_from_the_disk_cache(tmp_path):
    pytest.importorskip("nutpie")
    env = {k: v for k, v in os.environ.items() if k != "BAYESCV_NO_CACHE"}
    env["BAYESCV_CACHE_DIR"] = str(tmp_path / "cache")

    def run():
        done = subprocess.run(
            [sys.executable, "-c", FIT_SCRIPT], capture_output=True, text=True, env=env,
            check=True, timeout=300,
        )  # fmt: skip
        return json.loads(done.stdout.strip().splitlines()[-1])

    cold, warm = run(), run()
    assert cold["sampler"] == warm["sampler"] == "nutpie"
    assert cold["cache_hits"] == 0
    assert warm["cache_hits"] > 0
    assert warm["compile_seconds"] < min(1.0, cold["compile_seconds"])
    assert warm["delta0_mean"] == cold["delta0_mean"]
