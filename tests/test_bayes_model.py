"""The collapsed likelihood, the data it sees, and the priors: no sampling here."""

import dataclasses

import numpy as np
import pytest
from scipy import integrate, stats

from bayescv.bayes import Priors
from bayescv.bayes._stats import collapse, gamma_matrix, loglik_numpy
from bayescv.bayes.model import CompiledModel, model_data
from bayescv.bayes.simulate import simulate_losses
from bayescv.losses import from_arrays, stack_replicates

pytest.importorskip("pymc")

K = 4
PARAMS = {
    "mu0": 0.4,
    "tau": 0.3,
    "nu": np.array([1.1, 0.8, 1.3, 0.9]),
    "gamma_sd": np.array([0.3, 0.5, 0.2, 0.4]),
    "rho": 0.35,
}
OTHER = {
    "mu0": -0.1,
    "tau": 0.9,
    "nu": np.array([0.5, 2.0, 0.7, 1.5]),
    "gamma_sd": np.array([0.05, 0.2, 0.6, 0.1]),
    "rho": -0.2,
}


def _table(sizes, seed=0, scheme="source"):
    rng = np.random.default_rng(seed)
    block = np.repeat(np.arange(len(sizes)), sizes)
    return from_arrays(rng.normal(size=block.size) + 0.3 * block, block, scheme=scheme)


@pytest.fixture(scope="module")
def source_model():
    """One compiled CVS model (K = 4) and its compiled likelihood, shared by the tests."""
    model = CompiledModel("source", model_data(collapse(_table([5, 5, 5, 5]))))
    return model, model.logp_function()


@pytest.fixture(scope="module")
def random_model():
    model = CompiledModel("random", model_data(collapse(_table([5, 5, 5, 5], scheme="random"))))
    return model, model.logp_function()


def _design(sizes):
    """Block indicator matrix Z (N x K) of contiguous blocks."""
    block = np.repeat(np.arange(len(sizes)), sizes)
    z = np.zeros((block.size, len(sizes)))
    z[np.arange(block.size), block] = 1.0
    return z, block


def _full_cov(sizes, p):
    """Covariance of all losses of one realisation, marginal over μ_k ~ N(μ₀, τ²):
    Cov(e_ki, e_lj) = τ² δ_kl + Γ_kl + ν_k δ_kl δ_ij (DESIGN.md, the Bayesian model)."""
    z, block = _design(sizes)
    gam = gamma_matrix(p["gamma_sd"], np.asarray(p["rho"]))
    return z @ (p["tau"] ** 2 * np.eye(len(sizes)) + gam) @ z.T + np.diag(p["nu"][block])


def _prior_mean(model):
    """Prior mean m and sd s0 of μ₀ (CVR: μ), which the compiled likelihood integrates out."""
    d = model.data
    return float(d["mu0_loc"]), float(d["mu0_scale"])


def _marginal(x, cov, m, s0):
    """Full-data log-density with μ₀ ~ N(m, s0²) integrated out: mean m, covariance
    cov + s0² 11ᵀ (every loss shares μ₀)."""
    return stats.multivariate_normal(np.full(x.size, m), cov + s0**2).logpdf(x)


def _numpy_ll(s, p):
    ll = loglik_numpy(s, p["mu0"], p["tau"], p["nu"], p["gamma_sd"], p["rho"])
    return float(sum(np.sum(v) for v in ll.values()))


@pytest.mark.parametrize("sizes", [[5, 5, 5, 5], [5, 3, 4, 6]], ids=["equal", "unequal"])
@pytest.mark.parametrize("p", [PARAMS, OTHER], ids=["params1", "params2"])
def test_collapsed_loglik_equals_full_data_density(source_model, sizes, p):
    # Reference: the multivariate normal density of the N raw losses (scipy), N x N covariance.
    model, logp = source_model
    table = _table(sizes, seed=len(sizes) + sum(sizes))
    s = collapse(table)
    model.set_data(model_data(s))
    x, cov = table["loss"].values, _full_cov(sizes, p)
    # Given μ₀ (numpy, the log_likelihood group) ...
    expected = stats.multivariate_normal(np.full(x.size, p["mu0"]), cov).logpdf(x)
    np.testing.assert_allclose(_numpy_ll(s, p), expected, rtol=0, atol=1e-8)
    # ... and with μ₀ integrated out (the compiled model that is sampled).
    expected = _marginal(x, cov, *_prior_mean(model))
    np.testing.assert_allclose(logp(model.point(p)), expected, rtol=0, atol=1e-8)


@pytest.mark.parametrize("sizes", [[5, 5, 5, 5], [6, 3, 4, 2]], ids=["equal", "unequal"])
def test_cvr_loglik_equals_full_data_density(random_model, sizes):
    # CVR model: one μ, ν, ω and γ = ρ ω for every fold (exchangeable folds; Geras & Sutton 2013, §2).
    model, logp = random_model
    table = _table(sizes, seed=3, scheme="random")
    model.set_data(model_data(collapse(table)))
    p = {"nu": 1.3, "gamma_sd": 0.4, "rho": 0.25}
    full = {
        "tau": 0.0,
        "nu": np.full(K, p["nu"]),
        "gamma_sd": np.full(K, p["gamma_sd"]),
        "rho": p["rho"],
    }
    x = table["loss"].values
    expected = _marginal(x, _full_cov(sizes, full), *_prior_mean(model))
    np.testing.assert_allclose(logp(model.point(p)), expected, rtol=0, atol=1e-8)


def test_independent_replicates_loglik_equals_stacked_density(source_model):
    # R realisations share μ_k (marginal N(μ₀, τ²)); u and ε are fresh per realisation, so
    # Cov(e^r_ki, e^s_lj) = τ² δ_kl + δ_rs (Γ_kl + ν_k δ_kl δ_ij).
    model, logp = source_model
    sizes, reps = [3, 4, 2, 3], 3
    table = simulate_losses(
        sizes, mu=[0.1, 0.2, 0.3, 0.0], nu=1.0, gamma_sd=0.3, rho=0.2, n_replicates=reps,
        random_state=5,
    )  # fmt: skip
    s = collapse(table)
    assert s.kind == "independent"
    assert s.ybar_count == reps
    model.set_data(model_data(s))
    z, _ = _design(sizes)
    between = np.kron(np.ones((reps, reps)), z @ (PARAMS["tau"] ** 2 * np.eye(K)) @ z.T)
    within = np.kron(np.eye(reps), _full_cov(sizes, {**PARAMS, "tau": 0.0}))
    x = table["loss"].values.ravel()
    mean = np.full(x.size, PARAMS["mu0"])
    expected = stats.multivariate_normal(mean, between + within).logpdf(x)
    np.testing.assert_allclose(_numpy_ll(s, PARAMS), expected, rtol=0, atol=1e-8)
    expected = _marginal(x, between + within, *_prior_mean(model))
    np.testing.assert_allclose(logp(model.point(PARAMS)), expected, rtol=0, atol=1e-8)


def test_repeated_cv_is_tempered_not_multiplied(source_model):
    # Repeated CV re-partitions the same data: each run's log-likelihood counts 1/R, so given
    # the parameters the total is the mean of the single-run full-data log-densities ...
    model, logp = source_model
    runs = [_table([4, 4, 4, 4], seed=s) for s in (1, 2, 3)]
    rep = collapse(stack_replicates(runs, replicate_kind="repeat"))
    cov = _full_cov([4] * 4, PARAMS)
    singles = [
        stats.multivariate_normal(np.full(16, PARAMS["mu0"]), cov).logpdf(t["loss"].values)
        for t in runs
    ]
    np.testing.assert_allclose(_numpy_ll(rep, PARAMS), np.mean(singles), rtol=0, atol=1e-8)
    # (and the compiled likelihood, μ₀ integrated out, is the integral of that tempered
    # likelihood against μ₀'s prior: checked by quadrature.)
    model.set_data(model_data(rep))
    m, s0 = _prior_mean(model)

    def integrand(mu0):
        ll = np.mean(
            [
                stats.multivariate_normal(np.full(16, mu0), cov).logpdf(t["loss"].values)
                for t in runs
            ]
        )
        return np.exp(ll - np.mean(singles)) * stats.norm(m, s0).pdf(mu0)

    value, _ = integrate.quad(
        integrand, m - 12 * s0, m + 12 * s0, epsabs=0, epsrel=1e-12, limit=200
    )
    np.testing.assert_allclose(
        logp(model.point(PARAMS)), np.log(value) + np.mean(singles), atol=1e-8
    )
    # ... and R identical runs carry exactly the information of one.
    same = collapse(stack_replicates([runs[0]] * 5, replicate_kind="repeat"))
    one = collapse(runs[0])
    for name in ("n", "ybar", "W", "dof", "w_const"):
        np.testing.assert_allclose(getattr(same, name), getattr(one, name), atol=1e-12)
    assert _numpy_ll(same, PARAMS) == pytest.approx(_numpy_ll(one, PARAMS), abs=1e-10)


def test_bootstrap_term_is_density_of_centred_replicates(source_model):
    # The bootstrap replicates enter only through their centred scatter: the Gaussian density
    # of the B − 1 Helmert contrasts of the replicate block means, each ~ MVN(0, Σ).
    model, logp = source_model
    observed = _table([5, 5, 5, 5], seed=7)
    boots = [_table([5, 5, 5, 5], seed=100 + b) for b in range(6)]
    boot = stack_replicates(boots, replicate_kind="bootstrap")
    s = collapse(observed, boot)
    assert s.kind == "bootstrap"
    assert s.scatter_df == 5
    model.set_data(model_data(s))
    means = np.array(
        [[t["loss"].values[t["block"].values == k].mean() for k in range(K)] for t in boots]
    )
    helmert = np.linalg.qr(np.vstack([np.ones(6), np.eye(6)[:-1]]).T)[0][:, 1:]  # 6 x 5
    contrasts = helmert.T @ means
    n = np.full(K, 5.0)
    sigma = gamma_matrix(PARAMS["gamma_sd"], np.asarray(PARAMS["rho"])) + np.diag(PARAMS["nu"] / n)
    scatter = stats.multivariate_normal(np.zeros(K), sigma).logpdf(contrasts).sum()
    single = _marginal(observed["loss"].values, _full_cov([5] * 4, PARAMS), *_prior_mean(model))
    np.testing.assert_allclose(logp(model.point(PARAMS)), single + scatter, rtol=0, atol=1e-8)


def test_collapse_refuses_misused_replicates():
    boot = stack_replicates(
        [_table([5, 5, 5, 5], seed=s) for s in (1, 2)], replicate_kind="bootstrap"
    )
    with pytest.raises(ValueError, match="cannot inform the error means"):
        collapse(boot)
    with pytest.raises(ValueError, match="differ from the observed"):
        collapse(_table([5, 5, 5]), boot)
    one_boot = stack_replicates([_table([5, 5, 5, 5])], replicate_kind="bootstrap")
    with pytest.raises(ValueError, match="at least two bootstrap"):
        collapse(_table([5, 5, 5, 5]), one_boot)
    independent = from_arrays(
        np.zeros((2, 6)) + np.arange(6),
        [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1]],
        scheme="source",
        replicate_kind="independent",
    )
    with pytest.raises(ValueError, match="same block sizes"):
        collapse(independent)
    with pytest.raises(ValueError, match="scheme must be"):
        collapse(_table([3, 3]), scheme="nested")


def test_statistics_do_not_grow_with_the_number_of_losses():
    # The model's data have K entries (K x K for the scatter) whatever N: the cost of a fit
    # cannot grow with the number of points.
    small = model_data(collapse(_table([10] * 4)))
    large = model_data(collapse(_table([25_000] * 4)))
    assert {k: v.shape for k, v in small.items()} == {k: v.shape for k, v in large.items()}
    assert max(v.size for v in large.values()) == K * K


def test_priors_are_validated_and_scaled():
    with pytest.raises(ValueError, match="finite and positive"):
        Priors(tau_sd=0.0)
    with pytest.raises(TypeError, match="must be a number"):
        Priors(gamma_sd="big")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Priors().tau_sd = 3.0  # type: ignore[misc]
    s = collapse(_table([5, 3, 4, 6]))
    scaled = Priors().scaled_to(s.scales, s.n_blocks)
    # Prior mean of ν_k, β/(α − 1), is the pooled within-block variance Σ W / Σ (n − 1).
    assert scaled["nu_beta"] / (scaled["nu_alpha"] - 1) == pytest.approx(s.W.sum() / s.dof.sum())
    assert scaled["gamma_scale"] == pytest.approx(np.sqrt(s.W.sum() / s.dof.sum() / 18))
    assert scaled["rho_lower"] == pytest.approx(-1 / 3)
    flat = from_arrays(np.ones(6), [0, 0, 0, 1, 1, 1], scheme="source")
    with pytest.raises(ValueError, match="no variance to model"):
        model_data(collapse(flat))


def test_prior_draws_respect_the_admissible_region():
    # Bengio & Grandvalet (2004): the covariance of all losses must be PSD; here
    # ν_k > 0, Γ PSD and so the full covariance PSD, for every prior draw.
    sizes = [5, 3, 4, 6]
    s = collapse(_table(sizes))
    scaled = Priors().scaled_to(s.scales, s.n_blocks)
    draws = Priors().draw(scaled, K, 2000, np.random.default_rng(0))
    assert (draws["nu"] > 0).all()
    assert (draws["gamma_sd"] >= 0).all()
    assert (draws["tau"] >= 0).all()
    assert ((draws["rho"] > -1 / (K - 1)) & (draws["rho"] < 1)).all()
    gam = gamma_matrix(draws["gamma_sd"], draws["rho"])
    assert np.linalg.eigvalsh(gam).min() >= -1e-12 * gam.max()
    for i in range(0, 2000, 97):
        p = {name: value[i] for name, value in draws.items()}
        assert np.linalg.eigvalsh(_full_cov(sizes, p)).min() > 0


def test_numpy_prior_matches_the_pymc_prior(source_model):
    # The prior group is drawn with numpy (no compiled graph per fit); it must be the model's
    # prior: two-sample Kolmogorov-Smirnov tests against pymc.draw of the model's variables.
    # (μ₀ is integrated out of the graph, its prior is the analytic N(m, s0²): not drawn here.)
    import pymc as pm

    model, _ = source_model
    s = collapse(_table([5, 3, 4, 6]))
    data = model_data(s)
    model.set_data(data)
    scaled = Priors().scaled_to(s.scales, s.n_blocks)
    ours = Priors().draw(scaled, K, 3000, np.random.default_rng(1))
    names = ["tau", "nu", "gamma_sd", "rho"]
    theirs = dict(
        zip(names, pm.draw([model.model[n] for n in names], 3000, random_seed=2), strict=True)
    )
    for name in names:
        a, b = np.asarray(ours[name]), np.asarray(theirs[name])
        a, b = (a[:, 0], b[:, 0]) if a.ndim == 2 else (a, b)
        assert stats.ks_2samp(a, b).pvalue > 1e-3, name


@pytest.mark.parametrize("scheme", ["source", "random"])
def test_numpy_parameters_match_the_graph(source_model, random_model, scheme):
    # Every sampler's draws are mapped to parameters with numpy (natural_params); it must
    # reproduce the model's own deterministics, μ₀'s exact conditional draw included.
    from bayescv.bayes._coordinates import natural_params

    model, _ = source_model if scheme == "source" else random_model
    model.set_data(model_data(collapse(_table([5, 3, 4, 6], seed=2, scheme=scheme))))
    loc = "mu0" if scheme == "source" else "mu"
    names = [loc, "nu", "gamma_sd", "rho"] + (["tau"] if scheme == "source" else [])
    outputs = model.model.replace_rvs_by_values([model.model[n] for n in names])
    fn = model.model.compile_fn(outputs, inputs=model.model.value_vars, mode="NUMBA")
    rng = np.random.default_rng(3)
    per = K if scheme == "source" else None
    point = {
        f"{loc}_z": rng.normal(),
        "nu_z": rng.normal(size=per),
        "gamma_sd_z": rng.normal(size=per),
        "rho_b_logodds__": rng.normal(),
    }
    if scheme == "source":
        point["tau_z"] = rng.normal()
    graph = dict(zip(names, fn(point), strict=True))
    values = {k: np.asarray(v)[None, None] for k, v in point.items() if k != "rho_b_logodds__"}
    values["rho_b"] = np.asarray(1 / (1 + np.exp(-point["rho_b_logodds__"])))[None, None]
    ours = natural_params(scheme, model.data, values)
    for name in names:
        np.testing.assert_allclose(ours[name][0, 0], graph[name], rtol=1e-10, err_msg=name)


def test_collapse_reads_block_sources_like_block_moments():
    # collapse() reads each block's source from the contiguous block runs (O(N)); it must
    # agree with block_moments (which finds them by a sort) for every layout.
    from bayescv.moments import block_moments

    rng = np.random.default_rng(4)
    block = np.repeat([0, 1, 2, 3], [4, 3, 5, 4])
    names = np.array(["d", "b", "a", "c"])
    cvs = from_arrays(rng.normal(size=16), block, source=names[block], scheme="source")
    shuffled = cvs.isel(obs=rng.permutation(16))
    mixed = from_arrays(rng.normal(size=16), block, source=names[(block + np.arange(16)) % 4])
    for table in (cvs, shuffled, mixed):
        expected = block_moments(table)
        got = collapse(table).sources
        if "source" in expected.coords:
            np.testing.assert_array_equal(got, expected["source"].values)
        else:
            assert got is None
    np.testing.assert_array_equal(collapse(cvs).sources, ["d", "b", "a", "c"])
    bad = cvs.copy(data={"loss": np.where(np.arange(16) == 3, np.nan, cvs["loss"].values)})
    with pytest.raises(ValueError, match="NaN"):
        collapse(bad)
