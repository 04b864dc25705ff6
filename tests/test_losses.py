import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayescv.losses import (
    REPLICATE_KINDS,
    from_arrays,
    from_frame,
    pivot,
    stack_replicates,
    validate,
)
from bayescv.moments import block_moments

# ---------------------------------------------------------------- building from arrays


def test_from_arrays_1d_layout():
    table = from_arrays([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1], loss_name="zero_one")
    assert table["loss"].dims == ("obs",)
    assert table["loss"].dtype == np.float64
    for name in ("block", "index"):
        assert table[name].dims == ("obs",)
        assert name in table.coords
    assert "source" not in table.coords
    assert "replicate" not in table.dims
    # index defaults to 0..n_obs-1 (docstring of from_arrays)
    np.testing.assert_array_equal(table["index"].values, [0, 1, 2, 3])
    assert table["index"].dtype == np.int64
    assert table.attrs["loss_name"] == "zero_one"
    assert table.attrs["scheme"] == "random"
    assert "replicate_kind" not in table.attrs
    assert {"estimator", "bayescv_version", "created"} <= set(table.attrs)
    assert table["loss"].attrs["long_name"] == "per-point loss (zero_one)"


def test_from_arrays_extra_attrs_recorded():
    table = from_arrays([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1], attrs={"seed": 7, "estimator": "R()"})
    assert table.attrs["seed"] == 7
    assert table.attrs["estimator"] == "R()"


@pytest.mark.parametrize("kind", REPLICATE_KINDS)
def test_from_arrays_2d_replicates(kind):
    loss = np.arange(12.0).reshape(2, 6)
    block = [[0, 0, 1, 1, 2, 2], [2, 2, 1, 1, 0, 0]]
    table = from_arrays(loss, block, replicate_kind=kind)
    assert table["loss"].dims == ("replicate", "obs")
    assert table["block"].dims == table["index"].dims == ("replicate", "obs")
    assert table.attrs["replicate_kind"] == kind
    np.testing.assert_array_equal(table["replicate"].values, [0, 1])
    # row 1 sorted by block: block 0 came from positions 4,5; block 1 from 2,3; block 2 from 0,1
    np.testing.assert_array_equal(table["index"].values[1], [4, 5, 2, 3, 0, 1])
    np.testing.assert_array_equal(table["loss"].values[1], [10.0, 11.0, 8.0, 9.0, 6.0, 7.0])
    np.testing.assert_array_equal(table["loss"].values[0], loss[0])


def test_from_arrays_2d_broadcasts_1d_labels():
    table = from_arrays(np.ones((3, 4)), [1, 0, 1, 0], replicate_kind="repeat")
    # each row sorted the same way: block 0 at positions 1,3, block 1 at 0,2
    np.testing.assert_array_equal(table["index"].values, [[1, 3, 0, 2]] * 3)
    np.testing.assert_array_equal(table["block"].values, [[0, 0, 1, 1]] * 3)


# ---------------------------------------------------------------- canonical ordering


def test_points_sorted_by_block_stably_with_index_carrying_rows():
    loss = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0]
    block = ["b", "a", "b", "c", "a", "c"]
    table = from_arrays(loss, block)
    np.testing.assert_array_equal(table["block"].values, ["a", "a", "b", "b", "c", "c"])
    # stable: within block "a" the order is as given (rows 1, then 4), likewise for b and c
    np.testing.assert_array_equal(table["index"].values, [1, 4, 0, 2, 3, 5])
    # the loss of each point travels with its row: loss[i] == 10 + i by construction
    np.testing.assert_array_equal(table["loss"].values, 10.0 + table["index"].values)


def test_ordering_keeps_given_index_and_source_with_their_losses():
    table = from_arrays(
        [1.0, 2.0, 3.0, 4.0],
        [1, 0, 1, 0],
        source=["s1", "s0", "s1", "s0"],
        index=[40, 41, 42, 43],
    )
    np.testing.assert_array_equal(table["index"].values, [41, 43, 40, 42])
    np.testing.assert_array_equal(table["loss"].values, [2.0, 4.0, 1.0, 3.0])
    np.testing.assert_array_equal(table["source"].values, ["s0", "s0", "s1", "s1"])


# ---------------------------------------------------------------- scheme inference


def test_scheme_source_when_no_source_split():
    table = from_arrays(np.arange(6.0), [0, 0, 0, 1, 1, 1], source=["x", "x", "y", "z", "z", "z"])
    # blocks {x, y} and {z}: no source in two blocks
    assert table.attrs["scheme"] == "source"


def test_scheme_random_when_a_source_is_split():
    table = from_arrays(np.arange(6.0), [0, 0, 0, 1, 1, 1], source=["x", "x", "y", "y", "z", "z"])
    # source y is in block 0 and block 1
    assert table.attrs["scheme"] == "random"


def test_scheme_random_without_source():
    assert from_arrays(np.arange(4.0), [0, 0, 1, 1]).attrs["scheme"] == "random"


def test_scheme_inference_per_replicate():
    # replicate 0 keeps sources whole, replicate 1 splits source x across blocks
    table = from_arrays(
        np.zeros((2, 4)),
        [[0, 0, 1, 1], [0, 1, 0, 1]],
        source=["x", "x", "y", "y"],
        replicate_kind="repeat",
    )
    assert table.attrs["scheme"] == "random"


def test_explicit_source_scheme_uses_blocks_as_sources():
    table = from_arrays([0.1, 0.4, 0.2, 0.3], ["a", "b", "a", "b"], scheme="source")
    assert table.attrs["scheme"] == "source"
    np.testing.assert_array_equal(table["source"].values, table["block"].values)


def test_explicit_random_scheme_overrides_inference():
    table = from_arrays(np.arange(4.0), [0, 0, 1, 1], source=[0, 0, 1, 1], scheme="random")
    assert table.attrs["scheme"] == "random"


# ---------------------------------------------------------------- from_frame


def test_from_frame_default_columns():
    df = pd.DataFrame({"loss": [0.5, 0.1, 0.2, 0.3], "block": [1, 0, 1, 0]})
    table = from_frame(df)
    expected = from_arrays([0.5, 0.1, 0.2, 0.3], [1, 0, 1, 0], loss_name="loss")
    xr.testing.assert_equal(table, expected)
    assert table.attrs["loss_name"] == "loss"


def test_from_frame_custom_columns():
    df = pd.DataFrame(
        {
            "err": [0.0, 1.0, 0.0, 0.0, 1.0, 1.0],
            "school": [3, 3, 1, 1, 2, 2],
            "site": ["c", "c", "a", "a", "b", "b"],
            "row": [10, 11, 12, 13, 14, 15],
        }
    )
    table = from_frame(df, loss="err", block="school", source="site", index="row")
    # by hand: sorting by school moves the school-3 rows (row 10, 11) to the end
    np.testing.assert_array_equal(table["block"].values, [1, 1, 2, 2, 3, 3])
    np.testing.assert_array_equal(table["source"].values, ["a", "a", "b", "b", "c", "c"])
    np.testing.assert_array_equal(table["index"].values, [12, 13, 14, 15, 10, 11])
    np.testing.assert_array_equal(table["loss"].values, [0.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    assert table.attrs["loss_name"] == "err"
    assert table.attrs["scheme"] == "source"


def test_from_frame_loss_name_and_scheme_passed_through():
    df = pd.DataFrame({"e": [1.0, 2.0, 3.0, 4.0], "g": ["a", "a", "b", "b"]})
    table = from_frame(df, loss="e", block="g", scheme="source", loss_name="squared")
    assert table.attrs["loss_name"] == "squared"
    assert table.attrs["scheme"] == "source"
    np.testing.assert_array_equal(table["source"].values, ["a", "a", "b", "b"])


def test_from_frame_with_replicate_column():
    df = pd.DataFrame(
        {
            "run": [1, 0, 1, 0, 1, 0, 1, 0],
            "loss": [10.0, 0.0, 11.0, 1.0, 12.0, 2.0, 13.0, 3.0],
            "block": [1, 0, 1, 0, 0, 1, 0, 1],
        }
    )
    table = from_frame(df, replicate="run", replicate_kind="repeat")
    assert table["loss"].dims == ("replicate", "obs")
    assert table.attrs["replicate_kind"] == "repeat"
    # run labels (sorted) become the replicate coordinate
    np.testing.assert_array_equal(table["replicate"].values, [0, 1])
    # run 0 rows in order: losses 0,1,2,3 with blocks 0,0,1,1 -> already sorted
    np.testing.assert_array_equal(table["loss"].values[0], [0.0, 1.0, 2.0, 3.0])
    # run 1 rows: losses 10,11,12,13 with blocks 1,1,0,0 -> block 0 first (12, 13)
    np.testing.assert_array_equal(table["loss"].values[1], [12.0, 13.0, 10.0, 11.0])
    np.testing.assert_array_equal(table["index"].values[1], [2, 3, 0, 1])


def test_from_frame_keeps_replicate_labels():
    df = pd.DataFrame({"r": [5] * 4 + [9] * 4, "loss": np.arange(8.0), "block": [0, 0, 1, 1] * 2})
    table = from_frame(df, replicate="r", replicate_kind="bootstrap")
    np.testing.assert_array_equal(table["replicate"].values, [5, 9])


def test_from_frame_unequal_replicate_lengths():
    df = pd.DataFrame(
        {"r": [0] * 4 + [1] * 6, "loss": np.zeros(10), "block": [0, 0, 1, 1] * 2 + [2, 2]}
    )
    with pytest.raises(ValueError, match="mismatched lengths: replicates have"):
        from_frame(df, replicate="r", replicate_kind="repeat")


def test_from_frame_missing_column():
    df = pd.DataFrame({"loss": [1.0, 2.0, 3.0, 4.0], "block": [0, 0, 1, 1]})
    with pytest.raises(ValueError, match=r"column\(s\) \['fold'\] not in the frame"):
        from_frame(df, block="fold")
    with pytest.raises(ValueError, match=r"column\(s\) \['site'\] not in the frame"):
        from_frame(df, source="site")


def test_from_frame_empty():
    df = pd.DataFrame({"loss": [], "block": []})
    with pytest.raises(ValueError, match="empty input"):
        from_frame(df)


def test_from_frame_rejects_non_frame():
    with pytest.raises(TypeError, match="pandas DataFrame"):
        from_frame({"loss": [1.0], "block": [0]})


# ---------------------------------------------------------------- pivot


def test_pivot_1d_equals_manual_reshape():
    rng = np.random.default_rng(0)
    loss = rng.normal(size=12)
    block = np.repeat([0, 1, 2], 4)
    table = from_arrays(loss, block)
    out = pivot(table)
    assert out.dims == ("block", "point")
    # the table is already in block order, so pivot is a plain reshape to (3 blocks, 4 points)
    np.testing.assert_array_equal(out.values, loss.reshape(3, 4))
    np.testing.assert_array_equal(out["index"].values, np.arange(12).reshape(3, 4))
    np.testing.assert_array_equal(out["block"].values, [0, 1, 2])
    np.testing.assert_array_equal(out["point"].values, [0, 1, 2, 3])


def test_pivot_after_reordering():
    loss = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    block = ["b", "a", "b", "a", "b", "a"]
    out = pivot(from_arrays(loss, block))
    # block a holds rows 1, 3, 5; block b rows 0, 2, 4 (stable order)
    np.testing.assert_array_equal(out.sel(block="a").values, [1.0, 3.0, 5.0])
    np.testing.assert_array_equal(out.sel(block="b").values, [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(out["index"].values, [[1, 3, 5], [0, 2, 4]])


def test_pivot_2d():
    loss = np.arange(12.0).reshape(2, 6)
    block = [[0, 0, 1, 1, 2, 2], [2, 2, 1, 1, 0, 0]]
    table = from_arrays(loss, block, replicate_kind="repeat")
    out = pivot(table)
    assert out.dims == ("replicate", "block", "point")
    np.testing.assert_array_equal(out["replicate"].values, [0, 1])
    # manual reshape of the (sorted) table
    np.testing.assert_array_equal(out.values, table["loss"].values.reshape(2, 3, 2))
    # replicate 1, block 0 holds rows 4, 5 (losses 10, 11)
    np.testing.assert_array_equal(out.sel(replicate=1, block=0).values, [10.0, 11.0])
    assert out.attrs["replicate_kind"] == "repeat"


def test_pivot_unequal_sizes_not_divisible():
    table = from_arrays(np.arange(5.0), [0, 0, 1, 1, 1])
    with pytest.raises(ValueError, match="unequal block sizes"):
        pivot(table)


def test_pivot_unequal_sizes_divisible():
    # 6 points in 2 blocks of sizes 2 and 4: divisible, but still unequal
    table = from_arrays(np.arange(6.0), [0, 0, 1, 1, 1, 1])
    with pytest.raises(ValueError, match="unequal block sizes, pivot needs equal ones"):
        pivot(table)


def test_pivot_unequal_between_replicates():
    block = [[0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1]]
    table = from_arrays(np.zeros((2, 6)), block, replicate_kind="repeat")
    with pytest.raises(ValueError, match="unequal block sizes"):
        pivot(table)


# ---------------------------------------------------------------- stack_replicates


def _pair(**kw):
    a = from_arrays([1.0, 2.0, 3.0, 4.0], [1, 1, 0, 0], **kw)
    b = from_arrays([5.0, 6.0, 7.0, 8.0], [0, 1, 0, 1], **kw)
    return a, b


@pytest.mark.parametrize("kind", REPLICATE_KINDS)
def test_stack_replicates(kind):
    a, b = _pair(loss_name="abs", attrs={"seed": 3})
    stacked = stack_replicates([a, b], replicate_kind=kind)
    assert stacked["loss"].dims == ("replicate", "obs")
    assert stacked.attrs["replicate_kind"] == kind
    assert stacked.attrs["loss_name"] == "abs"
    assert stacked.attrs["seed"] == 3
    np.testing.assert_array_equal(stacked["loss"].values, [a["loss"].values, b["loss"].values])
    np.testing.assert_array_equal(stacked["index"].values, [a["index"].values, b["index"].values])
    np.testing.assert_array_equal(stacked["block"].values, [a["block"].values, b["block"].values])
    validate(stacked)


def test_stack_replicates_with_sources():
    a, b = _pair(source=["x", "x", "y", "y"], scheme="random")
    stacked = stack_replicates([a, b], replicate_kind="repeat")
    np.testing.assert_array_equal(
        stacked["source"].values, [a["source"].values, b["source"].values]
    )


def test_stack_unknown_kind():
    with pytest.raises(ValueError, match="unknown replicate kind 'again'"):
        stack_replicates(list(_pair()), replicate_kind="again")


def test_stack_empty():
    with pytest.raises(ValueError, match="empty input: no tables to stack"):
        stack_replicates([], replicate_kind="repeat")


def test_stack_mismatched_lengths():
    a, _ = _pair()
    c = from_arrays(np.arange(6.0), [0, 0, 1, 1, 2, 2])
    with pytest.raises(ValueError, match=r"mismatched lengths: tables have \[4, 6\] points"):
        stack_replicates([a, c], replicate_kind="repeat")


def test_stack_mismatched_schemes():
    a = from_arrays([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1], scheme="random")
    b = from_arrays([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1], scheme="source")
    with pytest.raises(ValueError, match="tables mix CV schemes"):
        stack_replicates([a, b], replicate_kind="repeat")


def test_stack_mixed_sources():
    a = from_arrays([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1], source=[0, 1, 0, 1])
    b = from_arrays([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1])
    with pytest.raises(ValueError, match="some tables have sources and others do not"):
        stack_replicates([a, b], replicate_kind="repeat")


def test_stack_already_replicated():
    a, b = _pair()
    ab = stack_replicates([a, b], replicate_kind="repeat")
    with pytest.raises(ValueError, match="must not have a 'replicate' dimension"):
        stack_replicates([ab, ab], replicate_kind="repeat")


# ---------------------------------------------------------------- block sizes (block_moments)


def test_block_sizes_from_moments_1d():
    sizes = block_moments(from_arrays(np.zeros(7), [2, 0, 0, 2, 1, 1, 2]))["n"]
    assert sizes.dims == ("block",)
    # counted by hand: block 0 twice, block 1 twice, block 2 three times
    np.testing.assert_array_equal(sizes["block"].values, [0, 1, 2])
    np.testing.assert_array_equal(sizes.values, [2, 2, 3])


def test_block_sizes_from_moments_2d_with_absent_block():
    block = [[0, 0, 1, 1, 1, 1], [1, 1, 2, 2, 2, 2]]
    sizes = block_moments(from_arrays(np.zeros((2, 6)), block, replicate_kind="bootstrap"))["n"]
    assert sizes.dims == ("replicate", "block")
    # union of labels {0, 1, 2}; 0 where a block is absent from a replicate
    np.testing.assert_array_equal(sizes.values, [[2, 4, 0], [0, 2, 4]])


# ---------------------------------------------------------------- bad input


def test_nan_loss():
    # blocks already sorted, so the NaN stays at position 2, the input's row 2
    with pytest.raises(
        ValueError, match=r"1 NaN or infinite value\(s\), the first at index 2 \(the table's"
    ):
        from_arrays([0.1, 0.2, np.nan, 0.4], [0, 0, 1, 1])


def test_inf_loss():
    # the log-loss hint only for a log loss (the one built-in loss that is infinite by design)
    with pytest.raises(ValueError, match=r"2 NaN or infinite value\(s\).*log loss is infinite"):
        from_arrays([np.inf, 0.2, 0.3, np.inf], [0, 0, 1, 1], loss_name="log_loss")


@pytest.mark.parametrize("loss_name", ["squared", "unknown", "my_loss"])
def test_inf_loss_no_log_loss_hint_for_other_losses(loss_name):
    with pytest.raises(ValueError, match=r"2 NaN or infinite value\(s\)") as info:
        from_arrays([np.inf, 0.2, 0.3, -np.inf], [0, 0, 1, 1], loss_name=loss_name)
    assert "log loss" not in str(info.value)


def test_nan_loss_2d_reports_original_row():
    loss = np.zeros((2, 4))
    loss[1, 0] = np.nan
    # row 1 sorted by block puts original row 0 at position 2: named by its index first
    with pytest.raises(
        ValueError, match=r"the first in replicate 1 at index 0 \(the table's position \[1, 2\]\)"
    ):
        from_arrays(loss, [[0, 0, 1, 1], [1, 1, 0, 0]], replicate_kind="repeat")


def test_block_with_one_point():
    with pytest.raises(ValueError, match=r"block\(s\) \[2\] have fewer than two points"):
        from_arrays(np.zeros(5), [0, 0, 1, 1, 2])


def test_leave_one_out_blocks_get_a_short_message_with_the_way_out():
    # Leave-one-out CV: every block is one point. The message names five, counts the rest.
    with pytest.raises(
        ValueError, match=r"block\(s\) \[0, 1, 2, 3, 4\] and 395 more have.*use fewer folds"
    ):
        from_arrays(np.zeros(400), np.arange(400))


def test_block_with_one_point_in_a_replicate():
    block = [[0, 0, 1, 1, 1], [0, 1, 1, 1, 1]]
    with pytest.raises(ValueError, match=r"block\(s\) \[0\] in replicate 1 have fewer than two"):
        from_arrays(np.zeros((2, 5)), block, replicate_kind="repeat")


def test_fewer_than_two_blocks():
    with pytest.raises(ValueError, match=r"fewer than two blocks: found 1 \(\[7\]\)"):
        from_arrays(np.zeros(4), [7, 7, 7, 7])


def test_fewer_than_two_blocks_within_a_replicate():
    block = [[0, 0, 1, 1], [1, 1, 1, 1]]
    with pytest.raises(ValueError, match="fewer than two blocks in replicate 1"):
        from_arrays(np.zeros((2, 4)), block, replicate_kind="repeat")


@pytest.mark.parametrize("name", ["block", "source", "index"])
def test_mismatched_lengths(name):
    kw = {"block": [0, 0, 1, 1], "source": None, "index": None}
    kw[name] = [0, 0, 1]
    with pytest.raises(ValueError, match=f"mismatched lengths: '{name}' has shape \\(3,\\)"):
        from_arrays([0.1, 0.2, 0.3, 0.4], kw.pop("block"), **kw)


def test_mismatched_labels_more_dims_than_loss():
    with pytest.raises(ValueError, match="mismatched lengths: 'block' has shape"):
        from_arrays(np.zeros(4), [[0, 0, 1, 1]])


def test_mismatched_replicate_count():
    with pytest.raises(ValueError, match=r"mismatched lengths: 'block' has shape \(3, 4\)"):
        from_arrays(np.zeros((2, 4)), np.zeros((3, 4), int), replicate_kind="repeat")


def test_empty_input():
    with pytest.raises(ValueError, match="empty input"):
        from_arrays([], [])


def test_loss_of_wrong_rank():
    with pytest.raises(ValueError, match="loss must be 1-D or 2-D"):
        from_arrays(np.zeros((2, 2, 2)), np.zeros((2, 2, 2)))


def test_block_labels_required():
    with pytest.raises(ValueError, match="block labels are required"):
        from_arrays([1.0, 2.0], None)


def test_nan_block_labels():
    with pytest.raises(ValueError, match="'block' labels contain NaN"):
        from_arrays(np.zeros(4), [0.0, 0.0, np.nan, np.nan])


def test_float_index_rejected():
    # it read "'index' labels must be integers or strings", and strings are refused too
    with pytest.raises(ValueError, match=r"'index' must hold integer row numbers.*astype\(int\)"):
        from_arrays(np.zeros(4), [0, 0, 1, 1], index=[0.0, 1.0, 2.0, 3.0])


def test_string_index_rejected():
    with pytest.raises(ValueError, match="'index' must hold integer row numbers"):
        from_arrays(np.zeros(4), [0, 0, 1, 1], index=["a", "b", "c", "d"])


def test_unknown_scheme():
    with pytest.raises(ValueError, match=r"attribute 'scheme' must be one of .*'loo'"):
        from_arrays(np.zeros(4), [0, 0, 1, 1], scheme="loo")


def test_replicate_dim_without_kind():
    with pytest.raises(ValueError, match=r"needs attribute 'replicate_kind'.*got None"):
        from_arrays(np.zeros((2, 4)), [0, 0, 1, 1])


def test_unknown_replicate_kind_2d():
    with pytest.raises(ValueError, match="unknown replicate kind 'clone'"):
        from_arrays(np.zeros((2, 4)), [0, 0, 1, 1], replicate_kind="clone")


def test_unknown_replicate_kind_1d():
    with pytest.raises(ValueError, match="unknown replicate kind 'clone'"):
        from_arrays(np.zeros(4), [0, 0, 1, 1], replicate_kind="clone")


def test_validate_replicate_dim_with_bad_kind_attr():
    table = from_arrays(np.zeros((2, 4)), [0, 0, 1, 1], replicate_kind="repeat")
    table.attrs["replicate_kind"] = "clone"
    with pytest.raises(ValueError, match=r"needs attribute 'replicate_kind'.*got 'clone'"):
        validate(table)


def test_validate_structure():
    table = from_arrays(np.arange(4.0), [0, 0, 1, 1])
    assert validate(table) is table
    with pytest.raises(TypeError, match=r"an xarray\.Dataset"):
        validate(table["loss"])
    with pytest.raises(ValueError, match="no 'loss' variable"):
        validate(table.rename({"loss": "err"}))
    with pytest.raises(ValueError, match="no 'index' coordinate"):
        validate(table.drop_vars("index"))
    with pytest.raises(ValueError, match="'loss' must have dims"):
        validate(table.rename_dims({"obs": "point"}))


def test_nan_loss_named_by_its_row_in_the_input_not_its_sorted_position():
    # [1, 2, 3, nan, 5, 6] with blocks [1, 0, 1, 0, 1, 0]: sorted by block the NaN (input
    # row 3) sits at position 1; the message read "position [1] (index 3)".
    with pytest.raises(ValueError, match=r"the first at index 3 \(the table's position 1\)"):
        from_arrays([1, 2, 3, np.nan, 5, 6], [1, 0, 1, 0, 1, 0])
