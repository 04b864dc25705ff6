"""The duplicated-point term of bootstrap replicates (bayescv.bayes._stats.tie_term)."""

import numpy as np
import pytest
from scipy import stats
from sklearn.linear_model import LogisticRegression

from bayescv import bootstrap_cv_losses, cross_val_losses
from bayescv.bayes._stats import collapse, gamma_matrix, tie_term
from bayescv.bayes.model import CompiledModel, model_data
from bayescv.losses import from_arrays

pytest.importorskip("pymc")


@pytest.fixture(scope="module")
def source_model_k3():
    """One compiled CVS model for K = 3 and its compiled log-density."""
    table = from_arrays(np.arange(15.0) % 4, np.repeat(np.arange(3), 5), scheme="source")
    model = CompiledModel("source", model_data(collapse(table)))
    return model, model.logp_function()


def _resampled(point_loss, sizes, seed, copies_differ=False):
    """A bootstrap table resampling the points of each block with replacement.

    `point_loss` has shape (R, N): the loss of original point i under replicate r's model.
    """
    rng = np.random.default_rng(seed)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    index = np.stack(
        [np.concatenate([s + rng.integers(0, n, n) for s, n in zip(starts, sizes, strict=True)])
         for _ in range(point_loss.shape[0])]
    )  # fmt: skip
    block = np.broadcast_to(np.repeat(np.arange(len(sizes)), sizes), index.shape)
    loss = np.take_along_axis(point_loss, index, axis=1)
    return from_arrays(loss, block, index=index, scheme="source", replicate_kind="bootstrap")


def test_tie_term_is_the_mean_per_point_variance_across_replicates():
    # Reference: a per-point loop: each original point's losses in the replicates that draw
    # it (one value per replicate, however many copies), their variance (ddof=1) when drawn
    # in at least two, averaged over the block's points.
    sizes, n_rep = [6, 4, 7], 9
    rng = np.random.default_rng(0)
    point_loss = rng.normal(size=(n_rep, sum(sizes)))
    table = _resampled(point_loss, sizes, seed=1)
    index, block = table["index"].values, table["block"].values
    expected = []
    for k in range(len(sizes)):
        variances = []
        for i in np.unique(index[block == k]):
            drawn = [r for r in range(n_rep) if i in index[r]]
            if len(drawn) >= 2:
                variances.append(np.var(point_loss[drawn, i], ddof=1))
        expected.append(np.mean(variances))
    np.testing.assert_allclose(tie_term(table, np.arange(3)), expected, rtol=1e-12)


def test_bootstrap_block_mean_variance_carries_the_per_point_variance_twice():
    # Toy 0-1 losses: point i is misclassified by a replicate's model with probability p_i,
    # independently across points and models (so the block's smooth error has ω = 0), and
    # the n test points are resampled with replacement. Exact (tie_term docstring):
    #   Var*(ē*) = E[s²(m)]/n + Var*(mean_i L_i(m)),  Var*(mean_i L_i) = c̄/n,
    #   E[s²(m)] = Ē(1 − Ē) − c̄/n,  c̄ = mean_i p_i (1 − p_i),
    # so c̄ enters once through the per-point variance and once more through c̄/n.
    n, n_rep = 20, 40_000
    p = np.linspace(0.0, 1.0, n)
    rng = np.random.default_rng(2)
    point_loss = (rng.random((n_rep, 2 * n)) < np.tile(p, 2)).astype(float)
    table = _resampled(point_loss, [n, n], seed=3)  # two like blocks (a table needs two)
    means = table["loss"].values[:, :n].mean(axis=1)
    c_bar, e_bar = np.mean(p * (1 - p)), p.mean()
    exact = (e_bar * (1 - e_bar) - c_bar / n) / n + c_bar / n
    # Monte Carlo: the sample variance of 40,000 draws is within 4 standard errors
    # (se ≈ var · sqrt(2 / R) for a near-normal mean of 20 terms).
    assert means.var(ddof=1) == pytest.approx(exact, abs=4 * exact * np.sqrt(2 / n_rep))
    # The estimator recovers c̄ from the replicates (binomial noise of 40,000 draws).
    np.testing.assert_allclose(tie_term(table, np.arange(2)), c_bar, rtol=0.02)


def test_scatter_term_models_the_duplicated_point_term(source_model_k3):
    # With resampled replicates the scatter term is the density of the Helmert contrasts of
    # the replicate block means with covariance Σ − diag(ν_k/n_k²) + diag((1 − 1/n_k) c̄_k/n_k).
    model, logp = source_model_k3
    sizes, n_rep = [5, 5, 5], 6
    rng = np.random.default_rng(4)
    observed = from_arrays(rng.normal(size=15), np.repeat(np.arange(3), 5), scheme="source")
    point_loss = observed["loss"].values + 0.3 * rng.normal(size=(n_rep, 15))
    boot = _resampled(point_loss, sizes, seed=5)
    s = collapse(observed, boot)
    n = np.full(3, 5.0)
    c_bar = tie_term(boot, np.arange(3))
    np.testing.assert_allclose(s.scatter_extra, (1 - 1 / n) * c_bar / n, rtol=1e-12)
    np.testing.assert_allclose(s.scatter_nu_factor, 1 - 1 / n)
    model.set_data(model_data(s))
    p = {"mu0": 0.1, "tau": 0.4, "nu": np.array([0.9, 1.2, 0.7]),
         "gamma_sd": np.array([0.2, 0.3, 0.1]), "rho": 0.3}  # fmt: skip
    means = boot["loss"].values.reshape(n_rep, 3, 5).mean(axis=2)
    helmert = np.linalg.qr(np.vstack([np.ones(n_rep), np.eye(n_rep)[:-1]]).T)[0][:, 1:]
    sigma_s = (
        gamma_matrix(p["gamma_sd"], np.asarray(p["rho"]))
        + np.diag((1 - 1 / n) * p["nu"] / n)
        + np.diag(s.scatter_extra)
    )
    expected = stats.multivariate_normal(np.zeros(3), sigma_s).logpdf(helmert.T @ means).sum()
    # The other terms do not see the bootstrap: compare with the same fit without it.
    without = collapse(observed)
    with_boot = logp(model.point(p))
    model.set_data(model_data(without))
    np.testing.assert_allclose(with_boot - logp(model.point(p)), expected, rtol=0, atol=1e-8)


def test_fresh_replicates_labelled_bootstrap_have_no_tie_term():
    # Replicates that draw no row twice are not recorded resamples: nothing is added.
    rng = np.random.default_rng(6)
    block = np.repeat(np.arange(3), 5)
    observed = from_arrays(rng.normal(size=15), block, scheme="source")
    boot = from_arrays(rng.normal(size=(4, 15)), np.broadcast_to(block, (4, 15)),
                       scheme="source", replicate_kind="bootstrap")  # fmt: skip
    assert tie_term(boot, np.arange(3)) is None
    s = collapse(observed, boot)
    assert (s.scatter_extra == 0).all()
    assert (s.scatter_nu_factor == 1).all()


def test_tie_term_needs_points_drawn_in_two_replicates():
    index = np.array([[0, 0, 1, 1, 4, 4, 5, 6], [2, 2, 3, 3, 4, 5, 5, 6]])
    block = np.array([[0, 0, 0, 0, 1, 1, 1, 1]] * 2)
    boot = from_arrays(np.ones((2, 8)), block, index=index, scheme="source",
                       replicate_kind="bootstrap")  # fmt: skip
    with pytest.raises(ValueError, match=r"blocks \[0\] have no point drawn in two"):
        tie_term(boot, np.arange(2))


def test_bootstrap_cv_losses_of_a_classifier_have_a_positive_tie_term():
    # A real bootstrap of leave-one-source-out CV under 0-1 loss: points near the decision
    # boundary change class between bootstrap models, so c̄_k > 0 in every block, and
    # c̄_k ≤ 1/4, the largest variance of a 0-1 loss.
    rng = np.random.default_rng(7)
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] + 0.8 * rng.normal(size=120) > 0).astype(int)
    groups = np.repeat(np.arange(4), 30)
    model = LogisticRegression()
    observed = cross_val_losses(model, X, y, groups=groups, loss="zero_one")
    boot = bootstrap_cv_losses(model, X, y, groups=groups, loss="zero_one", n_bootstrap=8,
                               random_state=8)  # fmt: skip
    c_bar = tie_term(boot, np.arange(4))
    assert (c_bar > 0).all()
    assert (c_bar <= 0.25).all()
    s = collapse(observed, boot)
    np.testing.assert_allclose(s.scatter_extra, (1 - 1 / 30) * c_bar / 30, rtol=1e-12)


def test_random_kfold_bootstrap_has_a_tie_term_per_fold():
    # CVR: a point's fold changes between replicates (copies stay together); c̄_k averages
    # the points each fold tests, and stays a variance of a 0-1 loss.
    rng = np.random.default_rng(9)
    X = rng.normal(size=(100, 2))
    y = (X[:, 0] + 0.8 * rng.normal(size=100) > 0).astype(int)
    model = LogisticRegression()
    observed = cross_val_losses(model, X, y, cv=5, loss="zero_one", random_state=1)
    boot = bootstrap_cv_losses(model, X, y, cv=5, loss="zero_one", n_bootstrap=8,
                               random_state=10)  # fmt: skip
    c_bar = tie_term(boot, np.arange(5))
    assert (c_bar > 0).all()
    assert (c_bar <= 0.25).all()
    s = collapse(observed, boot)
    assert s.scheme == "random"
    assert (s.scatter_extra > 0).all()
