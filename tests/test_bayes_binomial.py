"""The 0-1 likelihood of the Bayesian model (:mod:`bayescv.bayes.binomial_model`)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr
from scipy import special, stats
from sklearn.linear_model import LogisticRegression

from bayescv import bootstrap_cv_losses, cross_val_losses
from bayescv.bayes import _binomial_density as density
from bayescv.bayes import fit, posterior_intervals, predictive_check
from bayescv.bayes.binomial_model import (
    binomial_data,
    build_binomial_model,
    collapse_counts,
    jeffreys_logit_draws,
    natural_params,
)
from bayescv.losses import from_arrays, stack_replicates


def _table(scheme: str, rate: float, seed: int, sizes=(30, 40, 50, 30, 20, 60)):
    rng = np.random.default_rng(seed)
    block = np.repeat(np.arange(len(sizes)), sizes)
    loss = (rng.random(block.size) < rate).astype(float)
    return from_arrays(loss, block, scheme=scheme)


def _direct_logp(x: np.ndarray, source: bool, data: dict, runs=None) -> float:
    """The model's log-density written out with scipy's distributions (module docs).

    `runs`, for repeated runs: their (y, n) per run and block, whose binomial
    log-likelihoods enter through their mean (``collapse_counts``).
    """
    k = data["y"].size
    at = 0
    level = data["level_loc"] + data["level_scale"] * x[at]
    at += 1
    # Jeffreys' prior on the mean block logit: expit(η̄) ~ Beta(½, ½), with the Jacobians
    # p (1 − p) of p = expit(η̄) and level_scale of η̄ = level_loc + level_scale · level_z.
    p = special.expit(level)
    out = stats.beta.logpdf(p, 0.5, 0.5) + np.log(p * (1 - p)) + np.log(data["level_scale"])
    tau = 0.0
    if source:
        t = x[at]
        at += 1
        tau = data["tau_kappa"] * np.logaddexp(0.0, t)
        # HalfNormal density of τ and the Jacobian dτ/dt = κ expit(t).
        out += stats.halfnorm.logpdf(tau, scale=data["tau_scale"])
        out += np.log(data["tau_kappa"] * special.expit(t))
    g = x[at]
    at += 1
    s = np.exp(data["gamma_loc"] + g)
    # HalfNormal density of s and the Jacobian ds/dg = s.
    out += stats.halfnorm.logpdf(s, scale=data["gamma_scale"]) + np.log(s)
    r = x[at]
    at += 1
    b = special.expit(r)
    out += stats.beta.logpdf(b, data["rho_a"], data["rho_a"]) + np.log(b * (1 - b))
    rho = data["rho_lower"] + (1 - data["rho_lower"]) * b
    z = x[at:]
    out += stats.norm.logpdf(z).sum()
    # η's deviations from their mean: the centring projection of sqrt(d) z, d = τ² + (1 − ρ) s²
    # (the eigenvalue of τ² I + s² [(1 − ρ) I + ρ 11ᵀ] on the vectors orthogonal to 1).
    centre = np.eye(k) - np.full((k, k), 1.0 / k)
    eta = level + np.sqrt(tau**2 + (1 - rho) * s**2) * (centre @ z)
    y, n = (data["y"][None], data["n"][None]) if runs is None else runs
    out += stats.binom.logpmf(y, n, special.expit(eta)).sum(axis=1).mean()
    return float(out)


def _classification(scheme: str, n_bootstrap: int):
    """An observed 0-1 table of logistic regression and, optionally, its bootstrap table."""
    rng = np.random.default_rng(7)
    groups = np.repeat(np.arange(6), [30, 40, 50, 30, 20, 60])
    X = rng.normal(size=(groups.size, 3))
    y = (X[:, 0] + rng.normal(size=groups.size) > 0.8).astype(int)
    kw = {"groups": groups} if scheme == "source" else {"cv": 6}
    learner = LogisticRegression()
    table = cross_val_losses(learner, X, y, loss="zero_one", **kw)
    if not n_bootstrap:
        return table, None
    return table, bootstrap_cv_losses(
        learner, X, y, loss="zero_one", n_bootstrap=n_bootstrap, random_state=1, **kw
    )


@pytest.mark.parametrize(
    ("scheme", "n_bootstrap"), [("source", 0), ("random", 0), ("source", 8), ("random", 8)]
)
def test_density_equals_direct_computation_and_pymc(scheme, n_bootstrap):
    table, boot = _classification(scheme, n_bootstrap)
    data = binomial_data(collapse_counts(table, boot))
    source = scheme == "source"
    slices = density.coordinate_slices(source, 6)
    scal = np.array([float(data[name]) for name in density.SCALARS])
    model = build_binomial_model(scheme, data)
    logp, dlogp = model.compile_logp(), model.compile_dlogp()
    order = [v.name for v in model.value_vars]
    rng = np.random.default_rng(1)
    for _ in range(4):
        x = rng.normal(scale=0.8, size=slices["eta_z"].stop)
        value, grad = density.logp_and_grad(
            x, source, data["y"], data["n"], scal, density.scatter_rows(data), data["scatter"]
        )
        # The compound-symmetric root and the symmetric root give the same η law, not the
        # same η: the direct computation is compared on the prior and likelihood with η
        # formed by the module's root, so compare at z whose sum is 0 (both roots agree).
        point = {n: (x[s] if n == "eta_z" else x[s][0]) for n, s in slices.items()}
        assert value == pytest.approx(float(logp(point)), rel=1e-9, abs=1e-8)
        flat = np.concatenate([np.atleast_1d(grad[slices[n]]) for n in order])
        assert np.allclose(dlogp(point), flat, rtol=1e-8, atol=1e-10)
        x0 = x.copy()
        z = x0[slices["eta_z"]]
        x0[slices["eta_z"]] = z - z.mean()
        value0, _ = density.logp_and_grad(
            x0, source, data["y"], data["n"], scal, density.scatter_rows(data), data["scatter"]
        )
        if not n_bootstrap:  # the direct computation has no scatter term
            assert value0 == pytest.approx(_direct_logp(x0, source, data), rel=1e-10)


def _repeated_runs(scheme: str) -> xr.Dataset:
    """Three repeated runs of the same data: other splits (CVR) or other errors (CVS)."""
    if scheme == "random":
        rng = np.random.default_rng(7)
        X = rng.normal(size=(230, 3))
        y = (X[:, 0] + rng.normal(size=230) > 0.8).astype(int)
        return cross_val_losses(
            LogisticRegression(), X, y, loss="zero_one", cv=6, n_repeats=3, random_state=2
        )
    runs = [_table("source", 0.1, seed) for seed in (11, 12, 13)]
    return stack_replicates(runs, replicate_kind="repeat")


@pytest.mark.parametrize("scheme", ["source", "random"])
def test_repeated_runs_enter_through_their_mean_log_likelihood(scheme):
    table = _repeated_runs(scheme)
    stats_ = collapse_counts(table)
    runs = stats_.y_runs.shape[0]
    assert runs == 3
    # Each run's counts, from its own losses.
    for r in range(runs):
        one = collapse_counts(table.isel(replicate=r).drop_vars("replicate"))
        assert np.array_equal(stats_.y_runs[r], one.y)
        assert np.array_equal(stats_.n_runs[r], one.n)
    data = binomial_data(stats_)
    assert data["y"] == pytest.approx(stats_.y_runs.mean(axis=0))
    source = scheme == "source"
    k = data["y"].size
    slices = density.coordinate_slices(source, k)
    scal = np.array([float(data[name]) for name in density.SCALARS])
    model = build_binomial_model(scheme, data)
    logp = model.compile_logp()
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = rng.normal(scale=0.8, size=slices["eta_z"].stop)
        x[slices["eta_z"]] -= x[slices["eta_z"]].mean()  # the direct computation's roots agree
        value, _ = density.logp_and_grad(
            x, source, data["y"], data["n"], scal, density.scatter_rows(data), data["scatter"]
        )
        point = {n: (x[s] if n == "eta_z" else x[s][0]) for n, s in slices.items()}
        assert value == pytest.approx(float(logp(point)), rel=1e-9, abs=1e-8)
        direct = _direct_logp(x, source, data, (stats_.y_runs, stats_.n_runs))
        assert value == pytest.approx(direct, rel=1e-10)


def test_identical_repeated_runs_count_as_one():
    # The mean of R equal log-likelihoods is one of them: the posterior is the one run's.
    table = _table("source", 0.05, 5)
    repeated = stack_replicates([table] * 3, replicate_kind="repeat")
    settings = {"random_state": 4, "draws": 300, "tune": 300, "chains": 2}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains: a SamplingWarning is possible
        one, three = fit(table, **settings), fit(repeated, **settings)
    assert three.sample_stats.attrs["likelihood"] == "binomial"
    assert three.sample_stats.attrs["replicate_kind"] == "repeat"
    assert three.constant_data.attrs["n_replicates"] == 3
    for name in ("expected_cv", "ose", "new_source"):
        assert np.array_equal(one.posterior[name].values, three.posterior[name].values)
    assert np.allclose(one.log_likelihood["y"].values, three.log_likelihood["y"].values)


def test_jeffreys_draws_follow_beta_half_half():
    # p = G1 / (G1 + G2) with G1, G2 ~ Gamma(1/2) is Beta(1/2, 1/2): the prior on expit(η̄).
    rng = np.random.default_rng(3)
    loc, scale = -2.0, 0.5
    p = special.expit(loc + scale * jeffreys_logit_draws(loc, scale, rng, 20_000))
    assert stats.kstest(p, stats.beta(0.5, 0.5).cdf).pvalue > 0.01
    assert np.all((p > 0) & (p < 1))


def test_natural_params_match_the_pymc_deterministics():
    table = _table("source", 0.1, 2)
    data = binomial_data(collapse_counts(table))
    model = build_binomial_model("source", data)
    rng = np.random.default_rng(3)
    point = {
        "level_z": rng.normal(),
        "tau_z": rng.normal(),
        "gamma_sd_z": rng.normal(),
        "rho_b_logodds__": rng.normal(),
        "eta_z": rng.normal(size=6),
    }
    graphs = model.replace_rvs_by_values([model["eta"], model["alpha"]])
    eta, alpha = model.compile_fn(graphs, inputs=model.value_vars, on_unused_input="ignore")(point)
    values = {**point, "rho_b": special.expit(point.pop("rho_b_logodds__"))}
    ours = natural_params("source", data, {k: np.asarray(v) for k, v in values.items()})
    assert np.allclose(ours["eta"], eta)
    assert np.allclose(ours["alpha"], alpha)


def test_counts_and_bad_tables():
    table = _table("source", 0.1, 4)
    counts = collapse_counts(table)
    loss = table["loss"].values
    assert counts.y.sum() == loss.sum()
    assert counts.n.sum() == loss.size
    with pytest.raises(ValueError, match="0-1 losses"):
        collapse_counts(from_arrays([0.5, 0, 1, 0], [0, 0, 1, 1], scheme="source"))
    stacked = stack_replicates([table, table], replicate_kind="independent")
    with pytest.raises(ValueError, match="bootstrap"):
        collapse_counts(table, stacked)
    with pytest.raises(ValueError, match="likelihood='gaussian'"):
        fit(stacked, likelihood="binomial")
    repeated = stack_replicates([table, table], replicate_kind="repeat")
    boot = stack_replicates([table, table], replicate_kind="bootstrap")
    with pytest.raises(ValueError, match="one observed run, not repeated runs"):
        collapse_counts(repeated, boot)
    # A block (source 5) absent from the second run.
    short = table.assign_coords(block=("obs", np.minimum(table["block"].values, 4)))
    gappy = stack_replicates([table, short], replicate_kind="repeat")
    with pytest.raises(ValueError, match="block 5 has no points in run 1"):
        collapse_counts(gappy)
    with pytest.raises(ValueError, match="likelihood must be"):
        fit(table, likelihood="poisson")


@pytest.mark.parametrize(("ones", "runs"), [(False, 1), (True, 1), (False, 3)])
def test_constant_table_gets_a_proper_interval_inside_0_1(ones, runs):
    n = 400
    table = from_arrays(np.full(n, float(ones)), np.repeat(np.arange(8), n // 8), scheme="source")
    if runs > 1:  # repeated runs without an error: the default likelihood is the binomial
        table = stack_replicates([table] * runs, replicate_kind="repeat")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a SamplingWarning is possible; bounds are checked
        idata = fit(table, random_state=0, draws=500, tune=500)
    ci = posterior_intervals(idata)
    assert idata.sample_stats.attrs["likelihood"] == "binomial"
    assert ((ci["lower"] >= 0) & (ci["upper"] <= 1)).all()
    row = ci.sel(method_name="bayes_expected_cv")
    # Non-degenerate: 0 errors in 400 points cannot rule out a rate of a few in 1000.
    width = float(row["upper"] - row["lower"])
    assert width > 1.0 / n
    # Of the order of the rule of three, 3 / N (issue 15), which the fold effects widen: a
    # Jeffreys prior on α itself gave 0.125 here (binomial_model docs), the mean block
    # logit's gives about 0.023.
    far = 1.0 - float(row["lower"]) if ones else float(row["upper"])
    assert 3.0 / n < far < 10 * 3.0 / n


def test_fit_targets_and_predictive_check():
    table = _table("source", 0.05, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = fit(table, likelihood="binomial", random_state=1, draws=500, tune=500)
    post = idata.posterior
    assert {"expected_cv", "ose", "new_source", "theta", "mu", "eta"} <= set(post.data_vars)
    assert float(post["expected_cv"].min()) >= 0
    assert float(post["expected_cv"].max()) <= 1
    check = predictive_check(idata)
    assert set(check["statistic"].values) == {
        "mean",
        "spread",
        "new_sources_spread",
        "new_sources_skewness",
    }
    assert ((check["p_value"] >= 0) & (check["p_value"] <= 1)).all()
    # Pointwise log-likelihood per block, for LOO over blocks.
    assert idata.log_likelihood["y"].shape[-1] == 6
