import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

from bayescv.losses import from_arrays
from bayescv.moments import block_moments, block_sums, largest_loss


def direct_moments(table):
    """Reference: n, S, Q and two-pass W per (replicate, block) by boolean masks."""
    loss = np.atleast_2d(table["loss"].values)
    block = np.atleast_2d(table["block"].values)
    labels = np.unique(block)
    out = {k: np.zeros((loss.shape[0], labels.size)) for k in "nSQW"}
    for r in range(loss.shape[0]):
        for k, label in enumerate(labels):
            x = loss[r][block[r] == label]
            out["n"][r, k] = x.size
            if x.size:
                out["S"][r, k] = x.sum()
                out["Q"][r, k] = (x**2).sum()
                out["W"][r, k] = ((x - x.mean()) ** 2).sum()
    return labels, out


def assert_matches_direct(table, moments):
    labels, ref = direct_moments(table)
    np.testing.assert_array_equal(moments["block"].values, labels)
    squeeze = "replicate" not in table.dims
    for name in "nSQW":
        expected = ref[name][0] if squeeze else ref[name]
        # same sums in a different order: equal up to a few ulps
        np.testing.assert_allclose(moments[name].values, expected, rtol=1e-12, atol=1e-12)
    assert moments["n"].dtype == np.int64
    for name in "SQW":
        assert moments[name].dtype == np.float64


# ---------------------------------------------------------------- block_sums


def test_block_sums_hand_example():
    n, s, q = block_sums(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([0, 2]))
    # runs [1, 2] and [3, 4, 5]: sums 3 and 12, squares 1+4 = 5 and 9+16+25 = 50
    np.testing.assert_array_equal(n, [2, 3])
    np.testing.assert_array_equal(s, [3.0, 12.0])
    np.testing.assert_array_equal(q, [5.0, 50.0])
    assert n.dtype == np.int64


def test_block_sums_single_points():
    n, s, q = block_sums(np.array([-1.0, 2.0, -3.0]), np.array([0, 1, 2]))
    # each run one value: S is the value, Q its square
    np.testing.assert_array_equal(n, [1, 1, 1])
    np.testing.assert_array_equal(s, [-1.0, 2.0, -3.0])
    np.testing.assert_array_equal(q, [1.0, 4.0, 9.0])


# ---------------------------------------------------------------- block_moments


def test_block_moments_hand_example():
    m = block_moments(from_arrays([1.0, 3.0, 2.0, 6.0], [0, 0, 1, 1]))
    # block 0: {1, 3}, mean 2, W = 1 + 1 = 2, Q = 1 + 9 = 10
    # block 1: {2, 6}, mean 4, W = 4 + 4 = 8, Q = 4 + 36 = 40
    np.testing.assert_array_equal(m["n"].values, [2, 2])
    np.testing.assert_array_equal(m["S"].values, [4.0, 8.0])
    np.testing.assert_array_equal(m["Q"].values, [10.0, 40.0])
    np.testing.assert_array_equal(m["W"].values, [2.0, 8.0])
    assert m["n"].dims == ("block",)


def test_block_moments_1d_against_direct():
    rng = np.random.default_rng(0)
    block = np.repeat(np.arange(5), 20)
    table = from_arrays(rng.normal(2.0, 3.0, size=100), rng.permutation(block))
    m = block_moments(table)
    assert dict(m.sizes) == {"block": 5}
    assert_matches_direct(table, m)
    assert m.attrs == table.attrs


def test_block_moments_unequal_blocks_against_direct():
    rng = np.random.default_rng(1)
    block = np.repeat(["a", "b", "c", "d"], [2, 7, 3, 31])
    table = from_arrays(rng.exponential(size=block.size), rng.permutation(block))
    m = block_moments(table)
    np.testing.assert_array_equal(m["n"].values, [2, 7, 3, 31])
    assert_matches_direct(table, m)


def test_block_moments_2d_against_direct():
    rng = np.random.default_rng(2)
    base = np.repeat(np.arange(4), [5, 6, 7, 8])
    block = np.stack([rng.permutation(base) for _ in range(3)])
    table = from_arrays(rng.normal(size=(3, base.size)), block, replicate_kind="repeat")
    m = block_moments(table)
    assert m["n"].dims == ("replicate", "block")
    np.testing.assert_array_equal(m["replicate"].values, [0, 1, 2])
    assert_matches_direct(table, m)


def test_block_moments_2d_absent_block():
    block = [[0, 0, 1, 1, 1], [1, 1, 2, 2, 2]]
    loss = [[1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0]]
    m = block_moments(from_arrays(loss, block, replicate_kind="bootstrap"))
    # union of labels {0, 1, 2}; an absent block has n = 0 and zero sums
    np.testing.assert_array_equal(m["n"].values, [[2, 3, 0], [0, 2, 3]])
    # replicate 0: block 0 = {1, 2}, block 1 = {3, 4, 5}; replicate 1: {6, 7}, {8, 9, 10}
    # W of two consecutive integers is 2 * 0.5**2 = 0.5, of three is 1 + 0 + 1 = 2
    np.testing.assert_array_equal(m["S"].values, [[3.0, 12.0, 0.0], [0.0, 13.0, 27.0]])
    np.testing.assert_array_equal(m["W"].values, [[0.5, 2.0, 0.0], [0.0, 0.5, 2.0]])


def _non_contiguous(table, rng):
    """Permute obs until some block is no longer one contiguous run."""
    while True:
        perm = rng.permutation(table.sizes["obs"])
        out = table.isel(obs=perm)
        row = np.atleast_2d(out["block"].values)[0]
        runs = row[np.concatenate(([0], np.flatnonzero(row[1:] != row[:-1]) + 1))]
        if np.unique(runs).size < runs.size:
            return out


@pytest.mark.parametrize("n_rep", [1, 3])
def test_permuted_obs_fallback_identical(n_rep):
    rng = np.random.default_rng(3)
    base = np.repeat(np.arange(4), [2, 4, 8, 4])
    shape = (n_rep, base.size) if n_rep > 1 else (base.size,)
    # multiples of 1/4 below 2**10 in blocks of 2, 4 or 8 points: every sum, square, block
    # mean S/n (a power-of-two division) and centred square is exact in float64, so any
    # summation order gives bit-identical S, Q and W
    loss = rng.integers(0, 4096, size=shape) / 4.0
    block = np.stack([rng.permutation(base) for _ in range(n_rep)]) if n_rep > 1 else base
    kind = {"replicate_kind": "repeat"} if n_rep > 1 else {}
    table = from_arrays(loss, block, source=np.asarray(block) * 10, **kind)
    permuted = _non_contiguous(table, rng)
    xr.testing.assert_identical(block_moments(permuted), block_moments(table))
    assert_matches_direct(permuted, block_moments(permuted))


def test_permuted_obs_fallback_random_floats():
    rng = np.random.default_rng(4)
    base = np.repeat(np.arange(6), 9)
    table = from_arrays(rng.normal(5.0, 2.0, size=base.size), rng.permutation(base))
    permuted = _non_contiguous(table, rng)
    a, b = block_moments(table), block_moments(permuted)
    np.testing.assert_array_equal(a["n"].values, b["n"].values)
    xr.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("permute", [False, True])
def test_within_sum_of_squares_stable_for_large_mean(permute):
    rng = np.random.default_rng(5)
    block = np.repeat(np.arange(3), 50)
    loss = 1e8 + rng.normal(0.0, 1e-3, size=block.size)
    table = from_arrays(loss, block)
    if permute:
        table = _non_contiguous(table, rng)
    m = block_moments(table)
    # two-pass reference: centre each block on its mean, then square
    reference = np.array(
        [((loss[block == k] - loss[block == k].mean()) ** 2).sum() for k in range(3)]
    )
    np.testing.assert_allclose(m["W"].values, reference, rtol=1e-6)
    # W ~ 50 * 1e-6 = 5e-5, while Q ~ 50 * 1e16 = 5e17 has a rounding error of order
    # eps * Q ~ 1e2: the one-pass Q - S**2 / n loses every digit (here multiples of 64 such
    # as 0, -256 or 384, sometimes negative)
    naive = m["Q"].values - m["S"].values ** 2 / m["n"].values
    assert np.all(np.abs(naive - reference) > 0.5 * reference)


def test_source_coordinate_leave_one_source_out():
    table = from_arrays(np.arange(6.0), ["s2", "s1", "s2", "s1", "s3", "s3"], scheme="source")
    m = block_moments(table)
    np.testing.assert_array_equal(m["source"].values, ["s1", "s2", "s3"])
    assert m["source"].dims == ("block",)


def test_source_coordinate_names_each_blocks_source():
    table = from_arrays(np.arange(6.0), [2, 0, 2, 0, 1, 1], source=["c", "a", "c", "a", "b", "b"])
    m = block_moments(table)
    # block 0 holds only source a, block 1 only b, block 2 only c
    np.testing.assert_array_equal(m["source"].values, ["a", "b", "c"])


def test_source_coordinate_2d():
    block = [[0, 0, 1, 1], [1, 1, 0, 0]]
    source = [["x", "x", "y", "y"], ["y", "y", "x", "x"]]
    m = block_moments(from_arrays(np.zeros((2, 4)), block, source=source, replicate_kind="repeat"))
    np.testing.assert_array_equal(m["source"].values, ["x", "y"])


def test_no_source_coordinate_when_blocks_mix_sources():
    table = from_arrays(np.arange(6.0), [0, 0, 0, 1, 1, 1], source=["a", "b", "a", "c", "c", "c"])
    assert "source" not in block_moments(table).coords
    assert "source" not in block_moments(from_arrays(np.arange(4.0), [0, 0, 1, 1])).coords


# ---------------------------------------------------------------- property test


@st.composite
def tables(draw):
    n_blocks = draw(st.integers(2, 5))
    sizes = draw(st.lists(st.integers(2, 8), min_size=n_blocks, max_size=n_blocks))
    base = np.repeat(np.arange(n_blocks), sizes)
    n_rep = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    floats = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=64)
    loss = np.array(draw(st.lists(floats, min_size=n_rep * base.size, max_size=n_rep * base.size)))
    if n_rep == 1:
        block = rng.permutation(base)
        return from_arrays(loss, block)
    block = np.stack([rng.permutation(base) for _ in range(n_rep)])
    table = from_arrays(loss.reshape(n_rep, -1), block, replicate_kind="independent")
    if draw(st.booleans()):
        table = table.isel(obs=rng.permutation(base.size))
    return table


@settings(max_examples=50, deadline=None)
@given(table=tables())
def test_moment_identities(table):
    m = block_moments(table)
    loss = np.atleast_2d(table["loss"].values)
    n = np.atleast_2d(m["n"].values)
    s = np.atleast_2d(m["S"].values)
    q = np.atleast_2d(m["Q"].values)
    w = np.atleast_2d(m["W"].values)
    # counts partition the points of every replicate
    np.testing.assert_array_equal(n.sum(axis=1), loss.shape[1])
    # Σ_k S_k = Σ_i e_i, up to summation-order rounding (bounded by n eps Σ|e_i|)
    bound = 4 * loss.shape[1] * np.finfo(float).eps * np.abs(loss).sum(axis=1) + 1e-300
    assert np.all(np.abs(s.sum(axis=1) - loss.sum(axis=1)) <= bound)
    # Σ(e - ē)² = Σe² - (Σe)²/n (Koenig-Huygens), so Q = W + S²/n; rounding is relative to Q
    np.testing.assert_allclose(q, w + s**2 / n, rtol=1e-9, atol=1e-300)
    assert np.all(w >= 0)
    assert np.all(w <= q * (1 + 1e-12) + 1e-300)


# ---------------------------------------------------------------- magnitude of the losses


def test_largest_loss_formula():
    # sqrt(max float64 / (16 N)): the estimators sum up to about 12 N squared losses
    for n in (4, 20, 10**6):
        expected = np.sqrt(np.finfo(np.float64).max / (16 * n))
        assert largest_loss(n) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("reduce", ["moments", "sums"])
def test_losses_beyond_the_limit_are_refused(reduce):
    n = 20
    limit = largest_loss(n)
    loss = np.linspace(-1.0, 1.0, n) * limit * 1.01
    table = from_arrays(loss, np.repeat(np.arange(4), 5))
    call = (
        (lambda: block_moments(table))
        if reduce == "moments"
        else (lambda: block_sums(loss, np.arange(0, n, 5)))
    )
    with pytest.raises(ValueError, match=r"losses up to .* overflow float64.*rescale them"):
        call()


def test_losses_just_below_the_limit_give_finite_moments():
    # Warnings are errors: an overflow anywhere in the sums fails this test.
    n = 20
    loss = np.linspace(-1.0, 1.0, n) * largest_loss(n) * 0.99
    table = from_arrays(loss, np.repeat(np.arange(4), 5))
    moments = block_moments(table)
    for name in "SQW":
        assert np.isfinite(moments[name]).all()
    assert_matches_direct(table, moments)


def test_limit_counts_points_per_run_not_per_table():
    # 2 runs of 4 points: the limit is that of 4 points
    loss = np.full((2, 4), largest_loss(4) * 0.9)
    loss[:, ::2] *= -1
    table = from_arrays(loss, [0, 0, 1, 1], replicate_kind="repeat")
    assert np.isfinite(block_moments(table)["Q"]).all()
