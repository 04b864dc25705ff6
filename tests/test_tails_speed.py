"""The heavy-tail check without a mask per block: same k̂ as before, one fit where one is needed.

The reference below is :func:`bayescv.tails.tail_shape` as it was before the blocks were grouped
once: a boolean mask over all N points for every block, O(N·K), and a k̂ for every block. The
grouped implementation must return the identical Dataset (values, NaNs, dtypes, coords and
attrs), and the interval functions, which use only the pooled k̂, must fit no block at all.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from bayescv import tails
from bayescv._extras import missing_extra
from bayescv.classical import cv_intervals
from bayescv.losses import from_arrays, loss_range, stack_replicates, validate
from bayescv.tails import MIN_TAIL_POINTS, pooled_tail_shape, tail_shape

POOLED = ["khat_pooled", "khat_pooled_se", "n_tail_pooled"]


def mask_reference(losses: xr.Dataset) -> xr.Dataset:
    """``tail_shape`` before the fix, verbatim but for names: one mask per block."""
    validate(losses)
    low, high = loss_range(losses)
    replicated = "replicate" in losses["loss"].dims
    values = np.atleast_2d(np.asarray(losses["loss"].values, dtype=float))
    blocks = np.atleast_2d(np.asarray(losses["block"].values))
    labels = np.unique(blocks)
    khat = np.full((values.shape[0], labels.size), np.nan)
    n_tail = np.zeros_like(khat, dtype=np.int64)
    pooled = np.full(values.shape[0], np.nan)
    n_pooled = np.zeros(values.shape[0], dtype=np.int64)
    missing = tails.missing_extra(["arviz"], "bayes", what="k-hat")
    note = ""
    if np.isfinite(low) and np.isfinite(high):
        note = f"losses bounded in [{low:g}, {high:g}]: no heavy tail"
    elif missing:
        note = missing
    else:
        two_sided = not np.isfinite(low) and bool((values < 0).any())
        for r in range(values.shape[0]):
            pooled[r], n_pooled[r] = tails._upper_and_lower(values[r], two_sided)
            for j, label in enumerate(labels):
                block_values = values[r][blocks[r] == label]
                khat[r, j], n_tail[r, j] = tails._upper_and_lower(block_values, two_sided)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = (1 + khat) / np.sqrt(n_tail)
        se_pooled = (1 + pooled) / np.sqrt(n_pooled)
    pick = (lambda a: a) if replicated else (lambda a: a[0])
    lead = ("replicate",) if replicated else ()
    ds = xr.Dataset(
        {
            "khat": ((*lead, "block"), pick(khat)),
            "khat_se": ((*lead, "block"), pick(se)),
            "n_tail": ((*lead, "block"), pick(n_tail)),
            "khat_pooled": (lead, pick(pooled)),
            "khat_pooled_se": (lead, pick(se_pooled)),
            "n_tail_pooled": (lead, pick(n_pooled)),
        },
        coords={"block": labels},
        attrs={"available": int(not missing), "note": note},
    )
    if replicated:
        ds = ds.assign_coords(replicate=losses["replicate"].values)
    return ds


def _run(rng, sizes, labels, *, constant=None, shift=0.0, **kwargs):
    """Pareto losses (k = 1/2.5) in blocks of the given sizes; block `constant` all equal."""
    parts = [rng.pareto(2.5, n) + shift for n in sizes]
    if constant is not None:
        parts[constant] = np.full(sizes[constant], 1.5)
    return from_arrays(np.concatenate(parts), np.repeat(labels, sizes), **kwargs)


def _interleaved(table, rng):
    """The same table with its points shuffled: every block split into many runs."""
    return table.isel(obs=rng.permutation(table.sizes["obs"]))


def _shuffle_replicate(table, r, rng):
    """`table` with the points of replicate `r` alone shuffled (stacking sorts them by block)."""
    perm = rng.permutation(table.sizes["obs"])
    out = table.copy(deep=True)
    for name, var in table.variables.items():
        if var.dims == ("replicate", "obs"):
            out[name].values[r] = var.values[r][perm]
    return out


def _cases():
    rng = np.random.default_rng(20240611)
    sizes = [450, 230, 150, 60, 300, 199, 200]  # unequal; 150, 60 and 199 below 200
    strings = [f"school_{i}" for i in (4, 0, 12, 3, 7, 10, 1)]  # not in sorted order
    ints = [5, 2, 9, 0, 7, 3, 11]
    rep0 = _run(rng, sizes, strings, constant=4)
    rep1 = _run(rng, [400, 250, 439, 500], ["school_0", "school_9", "school_4", "school_3"])
    return {
        "string_labels": rep0,
        "int_labels_interleaved": _interleaved(_run(rng, sizes, ints, constant=4), rng),
        "replicated_with_an_absent_block": _shuffle_replicate(
            stack_replicates([rep0, rep1], replicate_kind="repeat"), 1, rng
        ),
        "negative_losses_two_tails": _run(rng, sizes, ints, constant=4, shift=-1.0),
        "bounded": _run(rng, sizes, ints, loss_range=(0.0, 1e6)),
    }


CASES = _cases()


@pytest.mark.parametrize("name", list(CASES))
def test_tail_shape_is_identical_to_the_per_block_mask_reference(name):
    table = CASES[name]
    out = tail_shape(table)
    xr.testing.assert_identical(out, mask_reference(table))
    xr.testing.assert_identical(pooled_tail_shape(table), out[POOLED])
    if name != "bounded":
        # the cases reach both outcomes: fitted blocks and blocks with no k̂
        assert np.isfinite(out["khat"]).any()
        assert np.isnan(out["khat"]).any()
        assert np.isfinite(out["khat_pooled"]).all()
    else:
        assert np.isnan(out["khat"]).all()
        assert "bounded" in out.attrs["note"]


def test_block_sizes_decide_which_blocks_get_a_khat():
    # k̂ exactly for the non-constant blocks of at least MIN_TAIL_POINTS points, in label order
    out = tail_shape(CASES["string_labels"])
    assert out["block"].values.tolist() == [
        "school_0", "school_1", "school_10", "school_12", "school_3", "school_4", "school_7",
    ]  # fmt: skip
    counts = {"school_0": 230, "school_1": 200, "school_10": 199, "school_12": 150,
              "school_3": 60, "school_4": 450, "school_7": 300}  # fmt: skip
    constant = "school_7"
    expected = [counts[b] >= MIN_TAIL_POINTS and b != constant for b in out["block"].values]
    assert np.isfinite(out["khat"].values).tolist() == expected
    # the absent block of replicate 0 has no k̂ and no tail points there
    rep = tail_shape(CASES["replicated_with_an_absent_block"])
    assert int(rep["n_tail"].sel(replicate=0, block="school_9")) == 0
    assert np.isfinite(rep["khat"].sel(replicate=1, block="school_9"))


def test_without_arviz_the_grouped_and_reference_paths_agree(monkeypatch):
    absent = missing_extra(["no_such_module_xyz"], "bayes", what="k-hat")
    monkeypatch.setattr(tails, "missing_extra", lambda *args, **kwargs: absent)
    table = CASES["replicated_with_an_absent_block"]
    out = tail_shape(table)
    xr.testing.assert_identical(out, mask_reference(table))
    assert out.attrs["available"] == 0
    assert np.isnan(out["khat_pooled"]).all()


@pytest.fixture
def khat_calls(monkeypatch):
    """Sizes of the arrays the module's ArviZ k̂ (``_khat``) is called on."""
    calls = []
    khat = tails._khat

    def counting(values):
        calls.append(values.size)
        return khat(values)

    monkeypatch.setattr(tails, "_khat", counting)
    return calls


def test_interval_flags_fit_the_pooled_losses_only(khat_calls):
    # 80 blocks of 250 points, each large enough for a k̂ of its own: the flag needs none.
    rng = np.random.default_rng(7)
    k, size = 80, 250
    labels = [f"block_{i:03d}" for i in range(k)]
    table = from_arrays(rng.pareto(3.0, k * size), np.repeat(labels, size),
                        scheme="source", loss_name="squared")  # fmt: skip
    ci = cv_intervals(table, ["naive_points"])
    assert khat_calls == [k * size]  # one ArviZ fit, of all the points
    assert np.isfinite(ci.attrs["khat"])
    replicated = stack_replicates([table, table], replicate_kind="repeat")
    khat_calls.clear()
    cv_intervals(replicated, ["naive_points"])
    assert khat_calls == [k * size, k * size]  # one per replicate
    # the full diagnostic does fit every block (the counter sees per-block calls)
    khat_calls.clear()
    tail_shape(table)
    assert sorted(khat_calls) == [size] * k + [k * size]


def test_small_blocks_are_skipped_before_any_fit(khat_calls):
    # 50 blocks of 150 points (< MIN_TAIL_POINTS): no block reaches ArviZ, the pooled 7500 do.
    rng = np.random.default_rng(8)
    table = from_arrays(rng.pareto(3.0, 50 * 150), np.repeat(np.arange(50), 150))
    out = tail_shape(table)
    assert khat_calls == [50 * 150]
    assert np.isnan(out["khat"]).all()
    assert (out["n_tail"] == 0).all()
    assert np.isfinite(out["khat_pooled"])


@pytest.mark.skipif(bool(missing_extra(["arviz"], "bayes", what="k-hat")), reason="no arviz")
@pytest.mark.parametrize("size", [300, 5_000, 200_000])
@pytest.mark.parametrize(
    "draw",
    [
        lambda rng, n: rng.pareto(1.5, n),  # k = 0.67
        lambda rng, n: rng.standard_t(3, n) ** 2,  # k = 0.67
        lambda rng, n: rng.exponential(1.0, n),  # k = 0
        lambda rng, n: np.round(rng.exponential(1.0, n), 1),  # ties at the cutoff
        lambda rng, n: rng.uniform(0.0, 1.0, n),  # k = -1
    ],
)
def test_khat_from_the_largest_values_is_psislw_on_all_of_them(size, draw):
    """ArviZ's k̂ of all the values, to the last bit: _khat passes psislw only the largest.

    psislw sorts every value (3 of the 4 s of a fit of 10⁷ losses, before); its k̂ depends
    only on the tail length and the tail + 1 largest values, which _khat keeps.
    """
    az = pytest.importorskip("arviz")
    values = draw(np.random.default_rng(size), size)
    with np.errstate(over="ignore"):
        _, full = az.psislw(np.log(values - values.min() + np.finfo(float).tiny))
    k, n_tail = tails._khat(values)
    assert n_tail == int(np.ceil(min(size / 5.0, 3.0 * np.sqrt(size))))
    assert k == float(full) or (np.isnan(k) and not np.isfinite(full))


@pytest.mark.parametrize(
    "layout",
    [
        lambda rng, s: rng.exponential(1.0, s),
        lambda rng, s: np.round(rng.exponential(1.0, s), 1),  # ties at the cut-off
        lambda rng, s: np.sort(rng.pareto(1.5, s)),  # the largest at the end
        lambda rng, s: np.sort(rng.standard_normal(s))[::-1].copy(),  # ... at the start
        # The strided sample (every 10th value) holds only the large values: fewer than m
        # values pass its cut-off, so the full partition answers.
        lambda rng, s: np.where(np.arange(s) % 10 == 0, np.arange(s, dtype=float), 0.0),
    ],
)
def test_largest_values_are_those_of_the_full_partition(layout):
    """_largest keeps the m values np.partition(values, s − m)[s − m:] keeps (any order)."""
    s = 1_000_000
    values = layout(np.random.default_rng(4), s)
    for m in (1, 5_000, 47_000):
        expected = np.sort(np.partition(values, s - m)[s - m :])
        assert np.array_equal(np.sort(tails._largest(values, m)), expected), m
