"""Numerics sweep: accuracy of the block sums of squares, and memory of the learner draws."""

import tracemalloc
from fractions import Fraction

import numpy as np
import pytest
import xarray as xr

import bayescv.learner_comparison._several as several
from bayescv import compare_several, variance_estimates
from bayescv.fold_scores import fold_table
from bayescv.losses import from_arrays
from bayescv.moments import block_moments


def exact_within(x):
    """Σ(x − x̄)² in exact rational arithmetic, rounded once (the reference W)."""
    values = [Fraction(v) for v in np.asarray(x, dtype=float).tolist()]
    mean = sum(values) / len(values)
    return float(sum((v - mean) ** 2 for v in values))


def interleaved(loss, block):
    """A loss table whose blocks are not contiguous runs (block_moments' bincount path)."""
    return xr.Dataset({"loss": ("obs", loss)}, coords={"block": ("obs", block)})


@pytest.mark.parametrize("layout", ["runs", "interleaved"])
def test_within_sum_of_squares_exact_for_large_mean(layout):
    # Losses 1e8 + N(0, 1e-6): the block mean S/n is off by ~1e-8 (the rounding of S), which
    # the uncorrected Σ(e − S/n)² reads as spread, a relative error ~1e-4 in W at n = 100.
    rng = np.random.default_rng(3)
    loss = 1e8 + rng.normal(0.0, 1e-6, 300)
    if layout == "runs":
        block = np.repeat([0, 1, 2], 100)
        table = from_arrays(loss, block)
    else:
        block = np.tile([0, 1, 2], 100)
        table = interleaved(loss, block)
    W = block_moments(table)["W"].values
    expected = [exact_within(loss[block == k]) for k in range(3)]
    # A few roundings of the squared deviations: far below the old error of 1e-4.
    np.testing.assert_allclose(W, expected, rtol=1e-12)


def test_constant_blocks_have_zero_within_sum_of_squares():
    # Three copies of a whose sum 3a rounds so that 3a/3 != a (found by search): the old W
    # was 3 (a − 3a/3)² = 6.7e-16 > 0 for a block of identical losses; exactly 0 is right.
    a = 100000000.81327024
    x = np.full(3, a)
    assert x.sum() / 3 != a  # the premise: the mean rounds away from a
    table = from_arrays(np.concatenate([x, x + 1.0]), [0, 0, 0, 1, 1, 1])
    moments = block_moments(table)
    assert moments["W"].values.tolist() == [0.0, 0.0]
    theta = variance_estimates(table)["theta"].sel(estimator="theta_A_weighted")
    assert float(theta) == 0.0  # (1/N²) Σ n_k W_k/(n_k − 1) with every W_k = 0


def test_within_sum_of_squares_one_huge_block_and_one_tiny():
    # 10^5 points in one block and 2 in another, around 1e8: W against the corrected
    # two-pass sum with math.fsum (Chan, Golub & LeVeque 1983), the tiny block exactly.
    import math

    rng = np.random.default_rng(4)
    big = 1e8 + rng.normal(0.0, 1e-5, 100_000)  # old (uncorrected) W: relative error 9e-7
    loss = np.concatenate([big, [1e8, 1e8 + 1.0]])
    table = from_arrays(loss, np.repeat([0, 1], [big.size, 2]))
    d = big - math.fsum(big) / big.size  # exact differences (Sterbenz)
    reference = math.fsum(d * d) - math.fsum(d) ** 2 / big.size
    W = block_moments(table)["W"].values
    assert W[0] == pytest.approx(reference, rel=1e-12)
    assert W[1] == 0.5  # (1/2)² + (1/2)², exact


def test_several_draws_equal_one_block_draw(monkeypatch):
    # The normals are drawn in blocks of rows; the reference draws them in one (n, J) array
    # from the same generator state, as the function's docstring defines the draws.
    rng = np.random.default_rng(0)
    losses = rng.normal(0.2, 0.02, (3, 50))
    losses = np.vstack([losses, losses[:1]])  # a tie: the same draws for rows 0 and 3
    n, factor, J = 1001, 0.3, losses.shape[1]
    monkeypatch.setattr(several, "_NORMALS_PER_BLOCK", 7 * J + 3)  # several partial blocks
    got = several._draws(losses, factor, n, np.random.default_rng(5))
    gen = np.random.default_rng(5)
    rows, inverse = np.unique(losses, axis=0, return_inverse=True)
    centred = rows - rows.mean(axis=1, keepdims=True)
    z = (gen.standard_normal((n, J)) @ centred.T) * np.sqrt(factor / (J - 1))
    w = np.sqrt((J - 1) / gen.chisquare(J - 1, size=(n, 1)))
    expected = (rows.mean(axis=1) + z * w)[:, inverse.ravel()]
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)
    np.testing.assert_array_equal(got[:, 0], got[:, 3])


def test_several_memory_does_not_grow_with_draws_times_folds():
    # 20 repetitions of 500-fold CV (J = 10^4 folds), 2000 draws: one (n_draws, J) normal
    # array is 160 MB. Drawn in blocks, the peak is one 8 MB block plus O(n_draws L); the
    # bound of 40 MB is 4 times below the old array alone, and generous for the new code.
    rng = np.random.default_rng(1)
    table = fold_table(
        rng.normal(0.2, 0.02, (3, 10_000)), runs=20, learners=["a", "b", "c"],
        greater_is_better=False,
    )  # fmt: skip
    compare_several(table, n_draws=10, random_state=0)  # imports outside the measurement
    tracemalloc.start()
    try:
        out = compare_several(table, n_draws=2000, random_state=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40e6
    assert np.isclose(float(out["p_best"].sum()), 1.0)  # one best learner per draw


def test_block_sources_read_at_runs():
    # The source of each block is read where the (block, source) pair changes, not from a
    # sort of all N labels. Reference: the pairs of a direct scan of the points.
    rng = np.random.default_rng(2)
    n_points, n_blocks = 200_000, 50
    block = np.repeat(np.arange(n_blocks), n_points // n_blocks)
    names = np.array([f"site-{k:03d}" for k in range(n_blocks)])
    table = from_arrays(rng.exponential(size=n_points), block, source=names[block])
    block_moments(table)  # imports and first-call caches outside the measurement
    loss_bytes = table["loss"].values.nbytes
    tracemalloc.start()
    try:
        moments = block_moments(table)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert moments["source"].values.tolist() == names.tolist()
    # Sorting the N source strings took 6 times the losses' bytes; the sums need one scratch
    # group of at most the losses' size plus a few boolean masks of N bytes.
    assert peak < 3 * loss_bytes
    mixed = from_arrays([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1], source=["a", "b", "c", "c"])
    assert "source" not in block_moments(mixed).coords  # block 0 holds two sources
