"""The population check: observed source means against replicated sets of new sources.

Reference values: the draws of :mod:`bayescv.bayes._new_sources` are checked against the
moments their definition gives (a new level μ₀ + τ z plus block-mean noise of covariance
Σ / c = (diag(own) + ρ s sᵀ) / c, the model's Σ; Geras & Sutton 2013, eqs. 4–6 in the
package's collapsed form), and the skewness against scipy.stats.skew.
"""

from __future__ import annotations

import json
import warnings

import matplotlib
import numpy as np
import pytest
from scipy import stats as st
from scipy.special import expit

from bayescv.bayes import fit, plot_population_check, predictive_check
from bayescv.bayes._binomial_posterior import binomial_new_sources
from bayescv.bayes._new_sources import gaussian_new_sources, lognormal_new_sources
from bayescv.bayes.checks import POPULATION_STATISTICS, replicated_statistics
from bayescv.losses import from_arrays

matplotlib.use("Agg")

# The default sampler ("auto"), short chains: the diagnostics thresholds are relaxed to match.
FAST = {"draws": 300, "tune": 300, "chains": 2, "rhat_max": 1.05, "ess_min": 50}


class _Design:
    """The two fields of a collapsed design the new-source draws read."""

    def __init__(self, n, ybar=None, count=1.0):
        self.n = np.asarray(n, dtype=float)
        self.n_blocks = self.n.size
        self.ybar_count = count
        self.ybar = None if ybar is None else np.asarray(ybar, dtype=float)


def _params(draws, k, **values):
    """Parameters broadcast to (1, draws[, K]), as the posterior holds them."""
    out = {}
    for name, value in values.items():
        shape = (1, draws, k) if name in ("nu", "gamma_sd") else (1, draws)
        out[name] = np.broadcast_to(np.asarray(value, dtype=float), shape).copy()
    return out


def test_gaussian_new_sources_have_the_population_and_noise_moments():
    # ē_new = μ₀ + τ z + e, e ~ N(0, (diag(own) + ρ s sᵀ) / c), own_k = (1 − ρ) s_k² + ν_k / n_k:
    # mean μ₀, variance τ² + own_k / c + ρ s_k² / c, covariance ρ s_k s_l / c.
    draws, n, count = 200_000, np.array([20.0, 50.0, 80.0]), 2.0
    nu, s, rho, mu0, tau = np.array([1.0, 2.0, 4.0]), np.array([0.3, 0.5, 0.2]), 0.4, 1.5, 0.7
    p = _params(draws, 3, mu0=mu0, tau=tau, nu=nu, gamma_sd=s, rho=rho)
    out = gaussian_new_sources(p, _Design(n, count=count), np.random.default_rng(0))[0]
    own = (1 - rho) * s**2 + nu / n
    var = tau**2 + own / count + rho * s**2 / count
    se_mean = np.sqrt(var / draws)
    np.testing.assert_array_less(np.abs(out.mean(0) - mu0), 5 * se_mean)
    # sd of a sample variance of normal draws: var * sqrt(2 / draws).
    np.testing.assert_array_less(np.abs(out.var(0) - var), 5 * var * np.sqrt(2 / draws))
    cov01 = np.cov(out[:, 0], out[:, 1])[0, 1]
    want = rho * s[0] * s[1] / count  # the new levels are independent across sources
    assert abs(cov01 - want) < 5 * np.sqrt(var[0] * var[1] / draws)


def test_lognormal_new_sources_are_lognormal_around_the_bias_corrected_level():
    # log ē_new + b_k = α + τ z + e on the log scale; b_k = log_ybar_k − log ē_k, the bias
    # correction of the observed log means, is taken off again.
    draws, n = 200_000, np.array([30.0, 60.0, 90.0])
    ybar = np.array([2.0, 3.0, 5.0])
    log_ybar = np.log(ybar) + np.array([0.01, 0.02, 0.005])
    alpha, tau, nu, s, rho = 1.0, 0.5, np.array([0.9, 1.2, 0.6]), np.full(3, 1e-6), 0.0
    p = _params(draws, 3, mu0=alpha, tau=tau, nu=nu, gamma_sd=s, rho=rho)
    out = lognormal_new_sources(
        p, _Design(n, ybar=log_ybar), _Design(n, ybar=ybar), np.random.default_rng(1)
    )[0]
    assert (out > 0).all()
    logs = np.log(out) + (log_ybar - np.log(ybar))
    var = tau**2 + nu / n + (1 - rho) * s**2
    np.testing.assert_array_less(np.abs(logs.mean(0) - alpha), 5 * np.sqrt(var / draws))
    np.testing.assert_array_less(np.abs(logs.var(0) - var), 5 * var * np.sqrt(2 / draws))


def test_binomial_new_sources_without_spread_are_binomial_rates():
    # τ = 0 and no fold effects: y ~ Binomial(n_k, expit(α)), so y / n has mean p and
    # variance p (1 − p) / n_k.
    draws, n, alpha = 100_000, np.array([10.0, 40.0, 200.0]), -1.5
    p = {name: np.full((1, draws), value) for name, value in
         {"alpha": alpha, "tau": 0.0, "gamma_sd": 0.0, "rho": 0.0}.items()}  # fmt: skip
    out = binomial_new_sources(p, _Design(n), np.random.default_rng(2))[0]
    rate = expit(alpha)
    var = rate * (1 - rate) / n
    np.testing.assert_array_less(np.abs(out.mean(0) - rate), 5 * np.sqrt(var / draws))
    np.testing.assert_allclose(out * n, np.rint(out * n), atol=1e-9)  # whole error counts


def test_population_skewness_is_scipys_g1():
    rng = np.random.default_rng(3)
    block = np.repeat(np.arange(8), 30)
    table = from_arrays(rng.normal(1.0, 0.3, 240) + 0.1 * block**2, block, scheme="source")
    idata = fit(table, random_state=0, population="normal", **FAST)
    rep = replicated_statistics(idata, "posterior")
    new = idata.posterior_predictive["ybar_new"].values.reshape(-1, 8)
    np.testing.assert_allclose(rep["new_sources_skewness"], st.skew(new, axis=-1), rtol=1e-10)
    np.testing.assert_allclose(rep["new_sources_spread"], new.std(axis=-1, ddof=1))
    observed = predictive_check(idata).sel(check="new_sources_skewness")["observed"]
    np.testing.assert_allclose(float(observed), st.skew(idata.observed_data["ybar"].values))


@pytest.fixture(scope="module")
def skewed_sources():
    """30 sources whose error levels are lognormal (log-sd 0.7): right-skewed source means."""
    rng = np.random.default_rng(11)
    k, m = 30, 50
    levels = np.exp(rng.normal(0.0, 0.7, k))
    block = np.repeat(np.arange(k), m)
    losses = levels[block] * rng.gamma(4.0, 0.25, k * m)  # mean level, light tail
    return from_arrays(losses, block, scheme="source", loss_range=(0, np.inf))


def test_population_check_tells_the_normal_population_from_the_lognormal(skewed_sources):
    with warnings.catch_warnings():
        # One table without bootstrap replicates: the fold effects may mix slowly.
        warnings.simplefilter("ignore")
        normal = fit(skewed_sources, random_state=4, population="normal", **FAST)
        auto = fit(skewed_sources, random_state=4, **FAST)
    assert auto.sample_stats.attrs["population"] == "lognormal"  # the default path
    p_normal = float(predictive_check(normal)["p_value"].sel(check="new_sources_skewness"))
    p_log = float(predictive_check(auto)["p_value"].sel(check="new_sources_skewness"))
    # A normal population makes symmetric sets of sources: the observed skew is beyond them.
    assert p_normal < 0.01
    assert 0.05 < p_log < 0.95
    # The replicated within-source variances are the normal model's under both populations;
    # the pooled source means and replicated block means come from the log-scale fit.
    np.testing.assert_array_equal(
        normal.posterior_predictive["W"].values, auto.posterior_predictive["W"].values
    )
    assert (auto.posterior["mu_pooled"].values > 0).all()
    assert (auto.posterior_predictive["ybar"].values > 0).all()
    # The source with the highest error has the most variable block mean: the normal
    # hierarchy shrinks it most, the log-scale one (relative spread alike) much less.
    top = int(np.argmax(skewed_sources["loss"].groupby("block").mean().values))
    pooled = {
        name: float(idata.posterior["mu_pooled"].isel(block=top).mean())
        for name, idata in (("normal", normal), ("lognormal", auto))
    }
    assert pooled["lognormal"] > pooled["normal"]
    # A lognormal model fitted to data from a lognormal population reproduces the spread of
    # the observed sources and each one's mean.
    check = predictive_check(auto)
    assert 0.05 < float(check["p_value"].sel(check="spread")) < 0.95
    means = check.where(check["statistic"] == "mean", drop=True)["p_value"]
    assert float(means.min()) > 0.005
    assert float(means.max()) < 0.995
    axes = plot_population_check(auto)
    assert "lognormal population" in axes[0].get_legend().get_texts()[0].get_text()
    assert f"p = {p_log:.2f}" in axes[1].get_title()
    import matplotlib.pyplot as plt

    plt.close("all")


def test_population_rows_only_where_there_is_a_population():
    rng = np.random.default_rng(5)
    block = np.repeat(np.arange(5), 40)
    random_kfold = from_arrays(rng.normal(1.0, 0.3, 200), block, scheme="random")
    idata = fit(random_kfold, random_state=0, **FAST)
    check = predictive_check(idata)
    assert not set(POPULATION_STATISTICS) & set(check["statistic"].values)
    with pytest.raises(ValueError, match="no population of sources"):
        plot_population_check(idata)
    sources = from_arrays(rng.normal(1.0, 0.3, 200) + 0.1 * block, block, scheme="source")
    fitted = fit(sources, random_state=0, **FAST)
    # The prior predictive draws new sources already (its levels come from the prior).
    prior = predictive_check(fitted, group="prior")
    assert not set(POPULATION_STATISTICS) & set(prior["statistic"].values)
    assert set(POPULATION_STATISTICS) <= set(predictive_check(fitted)["statistic"].values)
    # Two sources: a spread, no skewness (g1 needs three).
    two = from_arrays(rng.normal(1.0, 0.3, 80), np.repeat([0, 1], 40), scheme="source")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # two sources: τ rests on its prior
        two_fit = fit(two, random_state=0, **FAST)
    check = predictive_check(two_fit)
    assert "new_sources_spread" in check["check"].values
    assert "new_sources_skewness" not in check["check"].values
    assert len(plot_population_check(two_fit)) == 1
    import matplotlib.pyplot as plt

    plt.close("all")


def test_binomial_population_check_and_a_table_without_errors():
    rng = np.random.default_rng(6)
    block = np.repeat(np.arange(6), 50)
    rates = expit(rng.normal(-2.5, 0.5, 6))
    table = from_arrays((rng.random(300) < rates[block]).astype(float), block, scheme="source")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = fit(table, random_state=1, **FAST)
    assert idata.sample_stats.attrs["likelihood"] == "binomial"
    new = idata.posterior_predictive["ybar_new"].values
    assert ((new >= 0) & (new <= 1)).all()
    check = predictive_check(idata)
    assert set(POPULATION_STATISTICS) <= set(check["statistic"].values)
    # No errors anywhere: every observed source mean is 0, so the skewness of the sources is
    # undefined (no row) and nothing warns; the spread is still checked.
    zeros = from_arrays(np.zeros(300), block, scheme="source")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        perfect = fit(zeros, random_state=1, **FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check = predictive_check(perfect)
    assert "new_sources_skewness" not in check["check"].values
    assert float(check["observed"].sel(check="new_sources_spread")) == 0.0


def test_cli_prints_the_population_check_and_draws_it(skewed_sources, tmp_path, capsys):
    from bayescv.cli import main
    from bayescv.losses import to_frame

    path = tmp_path / "losses.csv"
    to_frame(skewed_sources)[["loss", "block"]].to_csv(path, index=False)
    argv = ["bayes", str(path), "--scheme", "source", "--draws", "300", "--tune", "300"]
    argv += ["--chains", "2", "--random-state", "4"]
    assert main([*argv, "--population", "normal", "--plot", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "population check (the source means against sets of new sources from the normal" in out
    assert "try --population lognormal" in out  # the skewness p-value is below 0.01
    assert "population.png" in out
    assert (tmp_path / "population.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # A plain CSV declares no range: --loss-range 0,inf takes the lognormal default.
    assert main([*argv, "--loss-range", "0,inf", "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["diagnostics"]["population"] == "lognormal"
    check = result["population_check"]
    assert set(check) == set(POPULATION_STATISTICS)
    assert 0.05 < check["new_sources_skewness"]["p_value"] < 0.95
    assert check["new_sources_skewness"]["observed"] == pytest.approx(
        st.skew(skewed_sources["loss"].groupby("block").mean().values)
    )


def test_cli_hint_fits_the_population_fitted(capsys):
    # An extreme p-value under the normal population points at --population lognormal; under
    # the lognormal population, which is then the one fitted, at the docs' limits instead.
    from bayescv.cli.bayes import _print_population_check

    extreme = {
        "new_sources_spread": {"observed": 1.0, "p_value": 0.4},
        "new_sources_skewness": {"observed": 3.0, "p_value": 0.004},
    }
    _print_population_check(extreme, {"population": "normal"})
    out = capsys.readouterr().out
    assert "from the normal population): spread p = 0.400, skewness p = 0.004" in out
    assert "try --population lognormal" in out
    _print_population_check(extreme, {"population": "lognormal"})
    out = capsys.readouterr().out
    assert "for its limits" in out
    assert "try --population lognormal" not in out
    calm = {"new_sources_spread": {"observed": 1.0, "p_value": 0.4}}
    _print_population_check(calm, {"population": "normal"})
    assert "below 0.01" not in capsys.readouterr().out
    _print_population_check({}, {"population": "normal"})  # random K-fold: no population
    assert capsys.readouterr().out == ""
