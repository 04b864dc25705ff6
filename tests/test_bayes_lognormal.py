"""The lognormal population of sources (``fit(..., population="lognormal")``).

References: the delta method, log ē ≈ log μ + (ē − μ)/μ with Var ≈ Var(ē)/μ² and
E[log ē] ≈ log μ − Var(ē)/(2μ²); the mean of a lognormal variable, E[exp(λ)] =
exp(α + τ²/2) for λ ~ N(α, τ²).
"""

import json
import warnings

import numpy as np
import pytest

from bayescv.bayes import fit, posterior_intervals
from bayescv.bayes._lognormal import log_scale, population_targets, resolve_population
from bayescv.bayes._stats import collapse
from bayescv.cli import main
from bayescv.losses import from_arrays, to_csv


def squared_error_table(k=8, n=60, seed=0, scale=None):
    """Squared Gaussian residuals: source k's losses are σ_k² χ²₁, so Var = 2 × mean²."""
    rng = np.random.default_rng(seed)
    sigma2 = np.exp(rng.normal(0.0, 0.5, k)) if scale is None else np.asarray(scale)
    block = np.repeat(np.arange(k), n)
    loss = sigma2[block] * rng.standard_normal(k * n) ** 2
    return from_arrays(loss, block, source=block, scheme="source", loss_name="squared")


def test_log_scale_is_the_delta_method_on_every_statistic():
    table = squared_error_table()
    stats = collapse(table)
    log = log_scale(stats)
    n, ybar, w = stats.n, stats.ybar, stats.W
    nu_rel = w / (n - 1) / ybar**2
    np.testing.assert_allclose(log.ybar, np.log(ybar) + nu_rel / (2 * n), rtol=1e-12)
    np.testing.assert_allclose(log.W, w / ybar**2, rtol=1e-12)
    np.testing.assert_array_equal(log.dof, stats.dof)
    np.testing.assert_array_equal(log.n, stats.n)


def test_log_scale_scales_the_bootstrap_scatter_and_ties_by_the_block_means():
    table = squared_error_table(k=4, n=30)
    rng = np.random.default_rng(1)
    boot_loss = np.stack([table["loss"].values * rng.uniform(0.8, 1.2) for _ in range(5)])
    boot = from_arrays(
        boot_loss, np.tile(table["block"].values, (5, 1)), scheme="source",
        replicate_kind="bootstrap", loss_name="squared",
    )  # fmt: skip
    stats = collapse(table, boot)
    log = log_scale(stats)
    d = 1.0 / stats.ybar
    np.testing.assert_allclose(log.scatter, stats.scatter * np.outer(d, d), rtol=1e-12)
    np.testing.assert_allclose(log.scatter_extra, stats.scatter_extra * d**2, rtol=1e-12)
    assert log.scatter_df == stats.scatter_df


def test_log_scale_statistics_do_not_move_with_a_sources_level():
    """Multiplying a source's losses by c shifts its log mean by log c and nothing else:
    on the log scale a block's weight no longer depends on its level."""
    table = squared_error_table()
    factor = np.linspace(0.5, 8.0, 8)
    scaled = table.copy()
    scaled["loss"] = table["loss"] * factor[table["block"].values]
    a, b = log_scale(collapse(table)), log_scale(collapse(scaled))
    np.testing.assert_allclose(b.ybar - a.ybar, np.log(factor), rtol=1e-10)
    np.testing.assert_allclose(b.W, a.W, rtol=1e-10)
    # on the raw scale the within-block variances grow with the square of the level
    np.testing.assert_allclose(collapse(scaled).W / collapse(table).W, factor**2, rtol=1e-10)


def test_population_targets_are_the_lognormal_mean_and_a_predictive_draw():
    alpha, tau = np.array([0.3, -1.0]), np.array([0.5, 0.0])
    out = population_targets(alpha, tau, np.random.default_rng(0))
    np.testing.assert_allclose(out["ose"], np.exp(alpha + tau**2 / 2), rtol=1e-12)
    assert out["new_source"][1] == pytest.approx(np.exp(-1.0))  # τ = 0: the level itself


@pytest.fixture(scope="module")
def fits():
    table = squared_error_table(k=20, n=80, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a SamplingWarning would not change the identities
        normal = fit(table, random_state=5, draws=500, tune=500, population="normal")
        # the default ("auto") takes the lognormal population for squared errors
        lognormal = fit(table, random_state=5, draws=500, tune=500)
    return table, normal, lognormal


def test_lognormal_fit_replaces_only_ose_and_new_source(fits):
    _, normal, lognormal = fits
    post = lognormal.posterior
    expected = np.exp(post["log_mu0"] + post["log_tau"] ** 2 / 2)
    np.testing.assert_allclose(post["ose"].values, expected.values, rtol=1e-12)
    assert (post["new_source"].values > 0).all()
    # the same seed gives the normal model's own draws for everything else
    for name in ("expected_cv", "theta", "mu0", "tau", "mu"):
        np.testing.assert_array_equal(post[name].values, normal.posterior[name].values)
    assert lognormal.sample_stats.attrs["population"] == "lognormal"
    assert normal.sample_stats.attrs["population"] == "normal"
    # mu0 and tau are the normal model's, and say so (az.summary shows them beside ose)
    assert "the normal model's mu0" in post["mu0"].attrs["description"]
    assert "log_tau" in post["tau"].attrs["description"]
    assert "description" not in normal.posterior["mu0"].attrs
    assert "log_mu0" in lognormal.prior
    assert "log_mu0" not in normal.posterior


def test_lognormal_ose_is_not_pulled_to_the_low_error_sources(fits):
    """Sources with a higher error have the more variable block means; μ₀ weights them
    less and sits below the plain mean of the source means, the lognormal population's
    mean does not."""
    table, normal, lognormal = fits
    means = table["loss"].groupby("block").mean().values
    plain = means.mean()
    rows = {}
    for name, idata in (("normal", normal), ("lognormal", lognormal)):
        ci = posterior_intervals(idata).sel(method_name="bayes_ose")
        rows[name] = (float(ci["estimate"]), float(ci["se"]))
    (n_est, n_se), (l_est, l_se) = rows["normal"], rows["lognormal"]
    assert n_est < plain - n_se  # pulled down by more than a posterior sd
    assert abs(l_est - plain) < l_se
    assert l_est > n_est


def test_auto_population_follows_the_losses_range():
    """Lognormal for losses in [0, inf) with positive block means on a CVS table; else normal."""
    squared = squared_error_table(k=4, n=10)
    assert resolve_population("auto", squared, collapse(squared)) == "lognormal"
    unnamed = from_arrays(squared["loss"].values, squared["block"].values, scheme="source")
    assert resolve_population("auto", unnamed, collapse(unnamed)) == "normal"  # no range
    kfold = from_arrays(squared["loss"].values, squared["block"].values, loss_name="squared")
    assert resolve_population("auto", kfold, collapse(kfold, scheme="random")) == "normal"
    zero = squared.copy()
    zero["loss"] = squared["loss"].where(squared["block"] != 0, 0.0)  # a block without error
    assert resolve_population("auto", zero, collapse(zero)) == "normal"
    assert resolve_population("normal", squared, collapse(squared)) == "normal"


def test_population_errors_are_clear():
    table = squared_error_table(k=4, n=10)
    with pytest.raises(ValueError, match="population must be one of"):
        fit(table, population="gamma")
    kfold = from_arrays(table["loss"].values, table["block"].values, scheme="random")
    with pytest.raises(ValueError, match="random K-fold table has no sources"):
        fit(kfold, population="lognormal")
    binary = from_arrays(
        (table["loss"].values > 1).astype(float), table["block"].values,
        source=table["block"].values, scheme="source",
    )  # fmt: skip
    with pytest.raises(ValueError, match="logit-normal already"):
        fit(binary, population="lognormal")
    # Squared errors minus 10 violate the squared loss's range: the table checks name that
    # before anything is fitted (the population's message came first before).
    violating = table.copy()
    violating["loss"] = table["loss"] - 10.0
    with pytest.raises(ValueError, match=r"outside the range \[0, inf\] of the built-in loss"):
        fit(violating, population="lognormal", likelihood="gaussian")
    # Losses that can be negative (no declared range).
    signed = from_arrays(
        table["loss"].values - 10.0, table["block"].values,
        source=table["block"].values, scheme="source",
    )  # fmt: skip
    with pytest.raises(ValueError, match="needs positive block means, but block 0"):
        fit(signed, population="lognormal", likelihood="gaussian")


def test_cli_bayes_population_option(tmp_path, capsys):
    path = tmp_path / "losses.csv"
    to_csv(squared_error_table(k=6, n=30), path)
    code = main(
        ["bayes", str(path), "--population", "lognormal", "--draws", "300", "--tune", "300",
         "--format", "json", "--random-state", "0"]
    )  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert code in (0, 1)  # 1 only when the short chains did not converge
    assert out["diagnostics"]["population"] == "lognormal"
    assert out["intervals"]["bayes_ose"]["lower"] > 0


def test_plot_targets_marks_the_estimate_the_table_shows(fits):
    """The lognormal rows' estimate is the posterior median; the figure marks and names it."""
    import matplotlib.pyplot as plt

    from bayescv.bayes import plot_targets

    _, _, lognormal = fits
    ci = posterior_intervals(lognormal)
    axes = plot_targets(lognormal)
    for ax, name in zip(axes[:3], ["expected_cv", "ose", "new_source"], strict=True):
        estimate = float(ci["estimate"].sel(method_name=f"bayes_{name}"))
        handles, labels = ax.get_legend_handles_labels()
        want = "posterior mean" if name == "expected_cv" else "posterior median"
        (line,) = [h for h, label in zip(handles, labels, strict=True) if label == want]
        assert float(line.get_xdata()[0]) == pytest.approx(estimate, rel=1e-12)
    plt.close("all")


def test_sources_orders_of_magnitude_apart_give_no_numpy_warning():
    # Two sources 10,000 times apart: τ on the log scale is huge and a few draws of
    # exp(α + τ²/2) exceed the float range. They are inf, silently, and the row's se is
    # inf (the posterior has no finite sd), not NaN with a RuntimeWarning.
    rng = np.random.default_rng(0)
    levels = np.array([0.01, 100.0])
    block = np.repeat(np.arange(2), 40)
    table = from_arrays(
        levels[block] * rng.gamma(4.0, 0.25, 80), block, scheme="source", loss_range=(0, np.inf)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # divergences, τ on its prior; not numpy's
        idata = fit(table, random_state=0)
        ci = posterior_intervals(idata)
    assert np.isinf(idata.posterior["ose"].values).any()
    assert float(ci["se"].sel(method_name="bayes_ose")) == np.inf
    assert np.isfinite(float(ci["upper"].sel(method_name="bayes_ose")))


def test_cli_table_says_whose_mu0_and_tau_the_summary_shows(tmp_path, capsys):
    # The summary lists mu0 and tau (the normal model's) beside ose, log_mu0 and log_tau:
    # under the lognormal population the table says which is which.
    path = tmp_path / "losses.csv"
    to_csv(squared_error_table(k=6, n=30), path)
    argv = ["bayes", str(path), "--draws", "300", "--tune", "300", "--random-state", "0"]
    assert main(argv) in (0, 1)  # 1 only when the short chains did not converge
    out = capsys.readouterr().out
    assert "(lognormal population of sources)" in out
    assert "(mu0, tau: the normal model's" in out
    assert "ose = exp(log_mu0 + log_tau²/2)" in out
    assert main([*argv, "--population", "normal"]) in (0, 1)
    assert "mu0, tau: the normal model's" not in capsys.readouterr().out
