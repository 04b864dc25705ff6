"""Fitting the model: outputs, targets, diagnostics, compile-once, replicate kinds.

Fast tests sample little (2 chains x 300 draws after 300 tuning steps) from the one compiled
CVS model for K = 5 that the per-thread cache keeps for the session; with so few draws they
check convergence at r-hat <= 1.05 and ESS >= 50 instead of the defaults (1.01 and 400),
which the slow tests and the benchmark check at full length. They pass ``sampler="pymc"``: the
default ``"auto"`` takes nutpie when installed, whose first compilation costs about 35 s.
"""

import sys
import warnings

import numpy as np
import pytest

from bayescv.bayes import (
    SamplingWarning,
    fit,
    get_model,
    plot_ppc,
    posterior_intervals,
    predictive_check,
)
from bayescv.bayes._samplers import resolve_sampler
from bayescv.bayes._stats import collapse, gamma_matrix, sigma_matrix
from bayescv.bayes.checks import POPULATION_STATISTICS
from bayescv.bayes.model import model_data
from bayescv.bayes.simulate import simulate_losses
from bayescv.losses import from_arrays, stack_replicates

pytest.importorskip("pymc")

FAST = {
    "draws": 300,
    "tune": 300,
    "chains": 2,
    "rhat_max": 1.05,
    "ess_min": 50,
    "sampler": "pymc",
}
K = 5
TRUTH = {
    "mu": np.array([0.2, 0.5, 0.35, 0.8, 0.3]),
    "nu": np.array([1.0, 1.5, 0.6, 2.0, 1.2]),
    "gamma_sd": np.array([0.10, 0.15, 0.08, 0.20, 0.12]),
    "rho": 0.4,
}


def _sim(sizes, seed, **kw):
    return simulate_losses(sizes, **{**TRUTH, **kw}, random_state=seed)


@pytest.fixture(scope="module")
def table():
    return _sim([40] * K, seed=1)


@pytest.fixture(scope="module")
def fitted(table):
    return fit(table, random_state=0, **FAST)


def _draws(idata, name):
    return np.asarray(idata.posterior[name].values)


def test_groups_and_diagnostics_are_recorded(fitted):
    for group in (
        "posterior",
        "sample_stats",
        "log_likelihood",
        "prior",
        "prior_predictive",
        "posterior_predictive",
        "observed_data",
        "constant_data",
    ):
        assert group in fitted.groups(), group
    post = fitted.posterior
    assert post.sizes["chain"] == 2
    assert post.sizes["draw"] == 300
    assert post["mu"].dims == ("chain", "draw", "block")
    assert post.sizes["block"] == K
    attrs = fitted.sample_stats.attrs
    assert attrs["problems"] == ""
    assert attrs["divergences"] == 0
    assert attrs["rhat_max"] <= 1.05
    assert attrs["ess_bulk_min"] >= 50
    assert attrs["replicate_kind"] == "single"
    assert attrs["sampler"] == "pymc"
    assert attrs["sampler_requested"] == "pymc"
    assert fitted.log_likelihood["W"].dims == ("chain", "draw", "block")


def test_theta_is_equation_7(fitted):
    # Equal sizes M: θ_CVS = Σσ²/(K²M) + (M−1)Σω/(K²M) + Σ_{k≠l}γ_kl/K² (Geras & Sutton 2013, eq. 7),
    # with σ_k² = ν_k + ω_k and γ_kl = ρ s_k s_l.
    m = 40
    nu, sd, rho = _draws(fitted, "nu"), _draws(fitted, "gamma_sd"), _draws(fitted, "rho")
    omega = sd**2
    gam = gamma_matrix(sd, rho)
    off = gam.sum(axis=(-1, -2)) - np.trace(gam, axis1=-2, axis2=-1)
    eq7 = (nu + omega).sum(-1) / (K**2 * m) + (m - 1) * omega.sum(-1) / (K**2 * m) + off / K**2
    np.testing.assert_allclose(_draws(fitted, "theta"), eq7, rtol=1e-12)
    np.testing.assert_allclose(_draws(fitted, "sigma2"), nu + omega, rtol=1e-12)


def test_expected_cv_is_centred_on_the_cv_estimate(fitted, table):
    # mu | Σ ~ MVN(ē, Σ) (flat prior, sources fixed), so E[expected_cv] = μ̂ = mean loss
    # exactly; the hierarchy must not pull it. Tolerance: 5 Monte Carlo standard errors.
    draws = _draws(fitted, "expected_cv").ravel()
    mu_hat = float(table["loss"].mean())
    assert abs(draws.mean() - mu_hat) < 5 * draws.std() / np.sqrt(draws.size)
    # Its variance is E[θ] (law of total variance), up to Monte Carlo error.
    assert draws.var() == pytest.approx(_draws(fitted, "theta").mean(), rel=0.2)


def test_ose_is_mu0_and_new_source_is_its_predictive(fitted):
    # OSE (Geras & Sutton 2013, eq. 3) is an expectation over new sources, the population mean μ₀: its draws
    # are μ₀'s. One new source's error is new_source = μ₀ + τ z, z ~ N(0, 1) independent of
    # (μ₀, τ), so Var(new_source) = Var(μ₀) + E[τ²] (law of total variance). Check the
    # construction exactly: (new_source − μ₀) / τ is a standard normal sample (KS test).
    from scipy import stats

    ose, new, mu0, tau = (_draws(fitted, n).ravel() for n in ("ose", "new_source", "mu0", "tau"))
    np.testing.assert_array_equal(ose, mu0)
    assert stats.kstest((new - mu0) / tau, "norm").pvalue > 1e-3
    assert new.var() == pytest.approx(mu0.var() + np.mean(tau**2), rel=0.15)
    ci = posterior_intervals(fitted, level=0.9)
    width = ci["upper"] - ci["lower"]
    # The predictive carries τ² itself, μ₀ only about τ²/K: the new-source interval is wider.
    assert float(width.sel(method_name="bayes_new_source")) > 1.5 * float(
        width.sel(method_name="bayes_ose")
    )
    assert float(width.sel(method_name="bayes_new_source")) > 1.5 * float(
        width.sel(method_name="bayes_expected_cv")
    )


def test_ose_posterior_sd_is_that_of_a_mean_over_sources():
    # Many sources (K = 20, n = 40 each) whose means are drawn here, μ_k ~ N(0.5, τ² = 0.09),
    # with a small training-set part (Γ: s = 0.02, ρ = 0). Reference: integrating the μ_k out,
    # ē ~ MVN(μ₀ 1, V) with V = τ² I + Σ, Σ = Γ + diag(ν_k / n_k) (docs/bayes.md); under
    # μ₀'s wide prior its conditional variance is 1 / (1ᵀ V⁻¹ 1), which for V ≈ (τ² + Σ_kk) I
    # is (τ² + Σ_kk) / K: the sd of ose = μ₀ is sqrt((τ² + typical Σ_kk) / K), evaluated
    # at the posterior means of τ² and of Σ_kk averaged over the blocks. Loose factor: the
    # common-correlation part ρ s² of Γ (from its prior with one realisation) and the
    # posterior spread of (τ, Σ) add to it.
    k, n, tau = 20, 40, 0.3
    mu = 0.5 + tau * np.random.default_rng(21).standard_normal(k)
    table = simulate_losses([n] * k, mu=mu, nu=1.0, gamma_sd=0.02, rho=0.0, random_state=22)
    idata = fit(table, random_state=7, **FAST)
    post = idata.posterior
    sigma_kk = np.diagonal(
        sigma_matrix(
            collapse(table), post["nu"].values, post["gamma_sd"].values, post["rho"].values
        ),
        axis1=-2,
        axis2=-1,
    )
    reference = np.sqrt((float((post["tau"] ** 2).mean()) + sigma_kk.mean()) / k)
    ci = posterior_intervals(idata, level=0.95)
    sd = float(ci["se"].sel(method_name="bayes_ose"))
    assert 0.75 < sd / reference < 1.35, (sd, reference)
    # ... so wider than the sources-at-hand interval (sd ≈ sqrt(Σ_kk / K) without τ²) ...
    assert sd > 1.3 * float(ci["se"].sel(method_name="bayes_expected_cv"))
    # ... and narrower than the one-new-source predictive, whose variance is Var(μ₀) + E[τ²].
    width = ci["upper"] - ci["lower"]
    assert float(width.sel(method_name="bayes_new_source")) > 2 * float(
        width.sel(method_name="bayes_ose")
    )


def test_expected_cv_weights_the_blocks_by_their_size():
    # expected_cv = Σ_k (n_k / N) μ_k = E[μ̂] for the pooled CV estimate μ̂ = Σ_k S_k / N,
    # the comparison module's truth (mean of μ̂ with the sources fixed). With μ | Σ ~ MVN(ē, Σ)
    # (flat prior on μ given Σ), its posterior mean is Σ_k (n_k / N) ē_k, the pooled mean of
    # all losses. The large blocks have the high means (0.875 pooled against 0.4 unweighted in
    # expectation), so the weighting shows far beyond the Monte Carlo error.
    sizes = np.array([10, 200, 15, 150, 25])
    table = _sim(sizes, seed=31, mu=np.array([0.0, 1.0, 0.0, 1.0, 0.0]))
    idata = fit(table, random_state=8, **FAST)
    np.testing.assert_allclose(idata.constant_data["weights"].values, sizes / sizes.sum())
    draws = _draws(idata, "expected_cv").ravel()
    mc_se = draws.std() / np.sqrt(draws.size)  # draws given Σ are independent normals
    pooled = float(table["loss"].mean())
    unweighted = float(idata.observed_data["ybar"].mean())
    assert abs(draws.mean() - pooled) < 5 * mc_se
    assert abs(draws.mean() - unweighted) > 10 * mc_se


def test_auto_sampler_is_nutpie_when_installed_else_pymc(monkeypatch, table, fitted):
    import inspect

    assert inspect.signature(fit).parameters["sampler"].default == "auto"
    try:
        import nutpie  # noqa: F401

        installed = True
    except ImportError:
        installed = False
    assert resolve_sampler("auto") == ("nutpie" if installed else "pymc")
    assert resolve_sampler("numpyro") == "numpyro"
    monkeypatch.setitem(sys.modules, "nutpie", None)  # `import nutpie` now raises ImportError
    assert resolve_sampler("auto") == "pymc"
    idata = fit(table, random_state=0, **{**FAST, "sampler": "auto"})
    attrs = idata.sample_stats.attrs
    assert (attrs["sampler"], attrs["sampler_requested"]) == ("pymc", "auto")
    # "auto" resolved to PyMC is PyMC: the draws of the explicit fit with the same seed.
    np.testing.assert_array_equal(_draws(idata, "mu0_z"), _draws(fitted, "mu0_z"))


def test_posterior_intervals_contract(fitted):
    for kind in ("eti", "hdi"):
        ci = posterior_intervals(fitted, level=0.9, kind=kind)
        assert list(ci["method_name"].values) == [
            "bayes_expected_cv",
            "bayes_ose",
            "bayes_new_source",
        ]
        assert list(ci["target"].values) == ["expected_cv", "ose", "new_source"]
        assert ci.attrs["kind"] == f"posterior_{kind}"
        assert ci.attrs["level"] == 0.9
        assert (ci["lower"] < ci["estimate"]).all()
        assert (ci["estimate"] < ci["upper"]).all()
        assert (ci["flag"] == "").all()
        assert ci.attrs["seed"] == 0
    ci = posterior_intervals(fitted, level=0.9)
    draws = _draws(fitted, "expected_cv").ravel()
    # Equal-tailed: 5 % of the draws below the lower bound (exact by construction).
    assert np.mean(draws < float(ci["lower"][0])) == pytest.approx(0.05, abs=1 / draws.size)
    with pytest.raises(ValueError, match="kind"):
        posterior_intervals(fitted, kind="central")


def test_compiled_model_is_reused_and_results_do_not_depend_on_it(fitted, table):
    model = get_model("source", model_data(collapse(table)))
    compiled_once = model.compile_seconds["pymc"]
    other = _sim([30, 55, 20, 41, 38], seed=2)
    idata = fit(other, random_state=3, **FAST)
    assert get_model("source", model_data(collapse(other))) is model
    assert model.compile_seconds["pymc"] == compiled_once  # no recompilation
    assert idata.sample_stats.attrs["fit_seconds"] < 60
    # Unequal sizes: expected_cv is centred on the pooled mean Σ S_k / N.
    draws = _draws(idata, "expected_cv").ravel()
    assert abs(draws.mean() - float(other["loss"].mean())) < 5 * draws.std() / np.sqrt(draws.size)
    # Refitting the first table with the same seed after another fit gives the same draws:
    # step size and mass matrix adaptation start afresh on every fit.
    again = fit(table, random_state=0, **FAST)
    np.testing.assert_array_equal(_draws(again, "mu0_z"), _draws(fitted, "mu0_z"))
    np.testing.assert_array_equal(_draws(again, "expected_cv"), _draws(fitted, "expected_cv"))


def test_failed_diagnostics_warn_and_flag_the_intervals(table):
    with pytest.warns(SamplingWarning, match="ESS"):
        idata = fit(table, draws=15, tune=5, chains=2, sampler="pymc", random_state=1)
    assert idata.sample_stats.attrs["problems"]
    ci = posterior_intervals(idata)
    assert (ci["flag"] == "not_converged").all()
    assert ci.attrs["diagnostics"] == idata.sample_stats.attrs["problems"]


def test_bad_arguments_are_refused(table):
    with pytest.raises(ValueError, match="sampler"):
        fit(table, sampler="stan")
    with pytest.raises(ValueError, match="draws"):
        fit(table, draws=0)
    with pytest.raises(ValueError, match="target_accept"):
        fit(table, target_accept=1.0)


def test_bootstrap_replicates_inform_sigma_not_mu():
    # Bootstrap replicates of one data set measure its sampling covariance Σ; treating them
    # as independent realisations would shrink the expected_cv interval by about √R.
    sizes, n_boot = [40] * K, 20
    observed = _sim(sizes, seed=11)
    mu_hat = float(observed["loss"].mean())
    # Idealised bootstrap: replicates with the observed design and the same Σ.
    boot_tables = [_sim(sizes, seed=100 + b) for b in range(n_boot)]
    boot = stack_replicates(boot_tables, replicate_kind="bootstrap")
    longer = {**FAST, "draws": 500, "tune": 500}  # the scales s_k have long left tails
    right = fit(observed, bootstrap=boot, random_state=2, **longer)
    wrong = fit(
        stack_replicates([observed, *boot_tables], replicate_kind="independent"),
        random_state=2,
        **longer,
    )
    sd_right = _draws(right, "expected_cv").std()
    sd_wrong = _draws(wrong, "expected_cv").std()
    ratio = sd_right / sd_wrong
    assert 0.7 * np.sqrt(n_boot + 1) < ratio < 1.4 * np.sqrt(n_boot + 1)
    # The bootstrap fit's θ is of the size of the bootstrap variance of μ̂ (the classical
    # bootstrap estimate; 19 degrees of freedom, so within a factor of two).
    boot_var = np.var([t["loss"].mean() for t in boot_tables], ddof=1)
    assert 0.5 < sd_right**2 / boot_var < 2.0
    # μ comes from the observed table alone: centred on its μ̂, not on the replicates'.
    draws = _draws(right, "expected_cv").ravel()
    assert abs(draws.mean() - mu_hat) < 5 * draws.std() / np.sqrt(draws.size)
    assert right.constant_data.attrs["n_bootstrap"] == n_boot


def test_recovers_known_parameters_from_independent_replicates():
    # 80 simulated realisations identify μ_k, ν_k, Γ; the truth must lie inside the central
    # 99.5 % posterior interval of each of the 16 parameters (fixed seed).
    table = _sim([30] * K, seed=5, n_replicates=80)
    # Γ's scales and ρ are identified here; 2 x 300 draws left their tail ESS at 35 (< 50)
    # after a change that only reordered floating-point sums, so this fit draws 2 x 600.
    idata = fit(table, random_state=4, **{**FAST, "draws": 600, "tune": 600})
    post = idata.posterior
    q = [0.0025, 0.9975]
    for name in ("mu", "nu", "gamma_sd"):
        lo, hi = np.quantile(post[name].values.reshape(-1, K), q, axis=0)
        assert ((lo < TRUTH[name]) & (TRUTH[name] < hi)).all(), name
    lo, hi = np.quantile(post["rho"].values, q)
    assert lo < TRUTH["rho"] < hi


def test_large_n_converges_without_divergences():
    # 10⁶ losses: the within-block statistics are very precise; the data-scaled
    # parameterisation keeps the geometry O(1) (the slow test checks 10⁷ at full length).
    rng = np.random.default_rng(8)
    block = np.repeat(np.arange(K), 200_000)
    loss = (
        TRUTH["mu"][block] + 0.1 * rng.standard_normal(K)[block] + rng.standard_normal(block.size)
    )
    idata = fit(from_arrays(loss, block, scheme="source"), random_state=5, **FAST)
    attrs = idata.sample_stats.attrs
    assert attrs["divergences"] == 0
    assert attrs["rhat_max"] <= 1.05


def test_cvr_model_gives_equation_2():
    # Random K-fold: exchangeable folds, one ν, ω, γ = ρω and one mean; equal folds of M give
    # θ_CVR = σ²/(KM) + (M−1)ω/(KM) + (K−1)γ/K (Geras & Sutton 2013, eq. 2), and no new-source target.
    m = 30
    table = simulate_losses(
        [m] * K, mu=0.3, nu=1.0, gamma_sd=0.1, rho=0.3, scheme="random", random_state=6
    )
    idata = fit(table, random_state=6, **FAST)
    nu, sd, rho = (_draws(idata, n) for n in ("nu", "gamma_sd", "rho"))
    omega, gamma = sd**2, rho * sd**2
    eq2 = (nu + omega) / (K * m) + (m - 1) * omega / (K * m) + (K - 1) * gamma / K
    np.testing.assert_allclose(_draws(idata, "theta"), eq2, rtol=1e-12)
    ci = posterior_intervals(idata)
    assert list(ci["method_name"].values) == ["bayes_expected_cv"]
    assert "ose" not in idata.posterior


def test_predictive_check_and_plot(fitted):
    check = predictive_check(fitted)
    # Per source: mean and within-source variance; the spread; and the population's two
    # statistics against sets of new sources (bayescv.bayes.checks).
    assert check.sizes["check"] == 2 * K + 3
    assert set(check["statistic"].values) == {
        "mean",
        "within_var",
        "spread",
        *POPULATION_STATISTICS,
    }
    # Observed statistics from the data themselves: mean losses and W_k / (n_k − 1).
    obs = fitted.observed_data
    np.testing.assert_allclose(
        check["observed"].where(check["statistic"] == "mean", drop=True), obs["ybar"]
    )
    # A model fitted to data from itself reproduces them: no extreme p-values.
    assert ((check["p_value"] > 0.005) & (check["p_value"] < 0.995)).all()
    prior = predictive_check(fitted, group="prior")
    # The prior predictive is far wider than the posterior predictive.
    width = lambda c: float((c["upper"] - c["lower"]).sel(check="spread"))  # noqa: E731
    assert width(prior) > 2 * width(check)
    import matplotlib

    matplotlib.use("Agg")
    axes = plot_ppc(fitted)
    assert len(axes) == 3
    assert "spread" in axes[2].get_title()
    import matplotlib.pyplot as plt

    plt.close("all")


def test_predictive_check_detects_a_misfit():
    # One source with ten times the within-variance of the rest, fitted with a within-variance
    # shared by all (the CVR model): its within-source variance is far outside the replicated
    # range, with a p-value near 0.
    rng = np.random.default_rng(9)
    block = np.repeat(np.arange(K), 60)
    scale = np.where(block == 2, np.sqrt(10.0), 1.0)
    table = from_arrays(rng.standard_normal(block.size) * scale, block, scheme="random")
    with warnings.catch_warnings():
        # The misfit can also show in the sampler; only the check's verdict matters here.
        warnings.simplefilter("ignore", SamplingWarning)
        idata = fit(table, random_state=9, **FAST)
    check = predictive_check(idata)
    assert float(check["p_value"].sel(check="within_var[2]")) < 0.01


@pytest.mark.parametrize("sampler", ["auto", "pymc"])
def test_losses_whose_squares_overflow_are_refused_before_sampling(sampler):
    # Losses of 1e300: their squares overflow float64. The fit must stop with the moments'
    # one-line message, not reach a sampler (PyMC raised a SamplingError here).
    block = np.repeat(np.arange(4), 10)
    table = from_arrays(np.random.default_rng(0).normal(1, 0.3, 40) * 1e300, block)
    with pytest.raises(ValueError, match=r"overflow float64.*rescale them, e\.g\. divide"):
        fit(table, sampler=sampler)
