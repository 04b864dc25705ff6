"""Defects found by a user's-eye hunt through loss-table I/O and the heavy-tail diagnostic."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayescv.datasets import load_dataframe
from bayescv.losses import (
    from_arrays,
    from_frame,
    loss_differences,
    read_netcdf,
    read_table,
    stack_replicates,
    to_frame,
)
from bayescv.tails import MIN_TAIL_POINTS, pooled_tail_shape, tail_shape


def _shuffled_pair():
    rng = np.random.default_rng(0)
    frame_a = pd.DataFrame({"loss": rng.random(12), "block": np.repeat([0, 1, 2], 4)})
    frame_b = frame_a.assign(loss=rng.random(12)).sample(frac=1, random_state=1)
    return frame_a, frame_b


def test_loss_differences_matches_points_given_in_another_order():
    frame_a, frame_b = _shuffled_pair()
    diff = loss_differences(from_frame(frame_a), from_frame(frame_b))
    # the difference of each row's losses, matched by the frames' own row labels
    expected = (frame_a["loss"] - frame_b["loss"].sort_index()).to_numpy()
    np.testing.assert_array_equal(diff["loss"].values, expected[diff["index"].values])
    assert diff["index"].values.tolist() == list(range(12))


def test_loss_differences_matches_replicated_points_per_replicate():
    a = from_arrays([[1.0, 2, 3, 4], [5, 6, 7, 8]], [0, 0, 1, 1], replicate_kind="repeat")
    b = from_arrays(
        [[20.0, 10, 40, 30], [50, 60, 80, 70]],
        [0, 0, 1, 1],
        index=[[1, 0, 3, 2], [0, 1, 3, 2]],
        replicate_kind="repeat",
    )
    diff = loss_differences(a, b)
    # A's point (replicate r, index i) minus B's point with the same replicate and index
    assert diff["loss"].values.tolist() == [[-9.0, -18, -27, -36], [-45, -54, -63, -72]]


def test_loss_differences_still_refuses_other_points():
    a = from_arrays([1.0, 2, 3, 4], [0, 0, 1, 1])
    other_rows = from_arrays([1.0, 2, 3, 4], [0, 0, 1, 1], index=[0, 1, 2, 7])
    with pytest.raises(ValueError, match="differ in 'index'"):
        loss_differences(a, other_rows)
    other_blocks = from_arrays([1.0, 2, 3, 4], [0, 1, 0, 1])
    with pytest.raises(ValueError, match="differ in 'index'"):  # block 0 holds rows 0, 2
        loss_differences(a, other_blocks)
    # bootstrap replicates repeat a row: matching by (block, index) would be a guess
    dup = from_arrays([1.0, 2, 3, 4], [0, 0, 1, 1], index=[0, 0, 2, 3])
    dup_b = from_arrays([1.0, 2, 3, 4], [0, 0, 1, 1], index=[0, 0, 3, 2])
    with pytest.raises(ValueError, match="differ in 'index'"):
        loss_differences(dup, dup_b)


def test_stack_replicates_refuses_tables_of_different_losses():
    squared = from_arrays([1.0, 2, 3, 4], [0, 0, 1, 1], loss_name="squared")
    absolute = from_arrays([1.0, 2, 3, 4], [0, 0, 1, 1], loss_name="absolute")
    with pytest.raises(ValueError, match=r"different losses \(\['squared', 'absolute'\]\)"):
        stack_replicates([squared, absolute], replicate_kind="repeat")


def test_stack_replicates_takes_any_iterable_of_tables():
    table = from_arrays([1.0, 2, 3, 4], [0, 0, 1, 1])
    stacked = stack_replicates((t for t in [table, table]), replicate_kind="repeat")
    assert stacked.sizes == {"replicate": 2, "obs": 4}


@pytest.mark.parametrize("losses", [[1.0, 2, 3, 4], np.ones(2 * MIN_TAIL_POINTS)])
def test_tail_note_says_why_there_is_no_khat(losses):
    table = from_arrays(losses, np.arange(len(losses)) % 2)
    for result in (tail_shape(table), pooled_tail_shape(table)):
        assert np.isnan(result["khat_pooled"])
        if len(losses) < MIN_TAIL_POINTS:
            assert result.attrs["note"] == "4 losses, fewer than 200: no k-hat"
        else:
            assert result.attrs["note"] == "all losses equal: no tail, no k-hat"


def test_tail_note_empty_when_khat_computed():
    rng = np.random.default_rng(0)
    table = from_arrays(rng.pareto(1.5, 1000), np.arange(1000) % 2)
    assert pooled_tail_shape(table).attrs["note"] == ""


def test_nan_loss_in_csv_named_by_its_row_in_the_file(tmp_path):
    path = tmp_path / "losses.csv"
    # the NaN is in data row 5, which sorting by block would move to table position 1
    path.write_text("block,loss\nb,1\na,1\nb,2\nb,3\na,nan\n")
    with pytest.raises(
        ValueError, match=r"NaN or infinite loss 'nan' in column 'loss', data row 5"
    ):
        read_table(path)


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ('block,loss\na,"0,5"\na,1\nb,2\nb,3\n', r"data row 1; it has a decimal comma"),
        ("block\tloss\na\t0.5\na\t1\nb\t2\nb\t3\n", "looks tab-delimited"),
        (
            "sep=,\r\nblock,loss\r\na,0.5\r\na,1\r\nb,2\r\nb,3\r\n",
            r"delimiter line \(sep=\.\.\.\): delete that line",
        ),
    ],
    ids=["decimal comma", "tab-delimited", "spreadsheet sep= line"],
)
def test_spreadsheet_csv_gets_a_hint(tmp_path, text, hint):
    path = tmp_path / "losses.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=hint):
        read_table(path)


def test_nan_float_label_named_by_position():
    frame = pd.DataFrame({"loss": np.arange(6.0), "block": [1, 1, 2, np.nan, 3, 3]})
    with pytest.raises(
        ValueError, match=r"NaN or infinite values at 1 position\(s\), the first \[3\]"
    ):
        from_frame(frame)


@pytest.mark.parametrize("doubled", ["y", "x"])
def test_load_dataframe_refuses_a_duplicated_column(doubled):
    frame = pd.DataFrame({"x": [1.0, 2, 3, 4], "y": [0.5, 1, 2, 3], "site": [1, 1, 2, 2]})
    frame = pd.concat([frame, frame[[doubled]]], axis=1)
    # before: a duplicated target became a two-column target, a duplicated feature an
    # AttributeError
    with pytest.raises(ValueError, match=rf"duplicate column\(s\) \['{doubled}'\]"):
        load_dataframe(frame, target="y", source="site")


def test_spreadsheet_bool_losses_read_as_zero_one(tmp_path):
    # a pandas bool column (True/False) that a spreadsheet opened and saved: TRUE/FALSE
    path = tmp_path / "losses.csv"
    path.write_text("block,loss\r\na,TRUE\r\na,FALSE\r\nb,FALSE\r\nb,FALSE\r\n")
    assert read_table(path)["loss"].values.tolist() == [1.0, 0.0, 0.0, 0.0]


def test_read_netcdf_reads_classic_netcdf(tmp_path):
    table = from_arrays([0.1, 0.4, 0.2, 0.3], ["a", "a", "b", "b"], scheme="source")
    path = tmp_path / "classic.nc"
    table.to_netcdf(path, engine="scipy")  # NetCDF 3, as xarray writes without NetCDF-4 libraries
    assert read_table(path).identical(table)
    assert read_netcdf(path).identical(table)  # before: "not a readable NetCDF file"


def test_read_netcdf_of_a_csv_says_so(tmp_path):
    path = tmp_path / "losses.csv"
    path.write_text("block,loss\na,0.5\na,1\nb,2\nb,3\n")
    with pytest.raises(ValueError, match=r"not a NetCDF file .*read a CSV with read_table"):
        read_netcdf(path)


def test_from_frame_reads_the_columns_to_frame_writes():
    # leave-one-source-out table: before, from_frame ignored the source and index columns
    # of to_frame's frame and rebuilt a random-CV table
    table = from_arrays([0.1, 0.4, 0.2, 0.3, 0.5, 0.6], list("aabbcc"), scheme="source")
    back = from_frame(to_frame(table))
    assert back.attrs["scheme"] == "source"
    for name in ("loss", "block", "source", "index"):
        np.testing.assert_array_equal(back[name].values, table[name].values)


def test_from_frame_of_runs_keeps_them_apart():
    table = from_arrays([0.1, 0.4, 0.2, 0.3], ["a", "a", "b", "b"])
    runs = stack_replicates([table, table], replicate_kind="repeat")
    # before: the two runs were read as one run of 8 points, blocks merged across runs
    plain = to_frame(runs)
    plain.attrs = {}  # a frame from elsewhere: the kind of its runs must be said
    with pytest.raises(ValueError, match="needs attribute 'replicate_kind'"):
        from_frame(plain)
    back = from_frame(plain, replicate_kind="repeat")
    assert dict(back.sizes) == {"replicate": 2, "obs": 4}
    np.testing.assert_array_equal(back["loss"].values, runs["loss"].values)


def test_from_frame_reads_the_attributes_to_frame_keeps():
    """to_frame keeps the table's attributes in DataFrame.attrs; from_frame reads them back.

    Before, ``from_frame(to_frame(table))`` dropped ``loss_range`` (a declared Brier table
    came back unbounded, so its intervals were no longer kept in [0, 1]), renamed the loss
    to the column's name "loss" and refused runs without ``replicate_kind``. The round trip
    is now the identity; explicit arguments still win over the frame's attributes.
    """
    rng = np.random.default_rng(0)
    table = from_arrays(
        rng.uniform(size=(2, 12)),
        np.tile(np.repeat([0, 1, 2], 4), (2, 1)),
        replicate_kind="bootstrap",
        loss_name="my_brier",
        loss_range=(0, 1),
        attrs={"estimator": "LogisticRegression()"},
    )
    xr.testing.assert_identical(from_frame(to_frame(table)), table)
    one_run = to_frame(table).query("replicate == 0").drop(columns="replicate")
    back = from_frame(one_run, loss_name="other")
    assert back.attrs["loss_name"] == "other"
    assert back.attrs["loss_range"] == [0.0, 1.0]
    assert "replicate_kind" not in back.attrs  # one run taken out is not a replicated table


def test_labels_of_mixed_types_that_read_alike_are_refused():
    """Labels are stored as text: 1 and "1" (or 1 and 1.0) would merge or split silently.

    Before, sources 1 (int) and "1" (str) of an object column became one source "1": two
    held-out sources merged into one block.
    """
    losses = np.arange(6.0)
    for labels in ([1, 1, "1", "1", 2, 2], [1, 1, 1.0, 1.0, 2, 2]):
        with pytest.raises(ValueError, match="mix types that do not match as text"):
            from_arrays(losses, np.array(labels, dtype=object), scheme="source")
    mixed = from_arrays(losses, np.array([1, 1, "x", "x", 2, 2], dtype=object))
    assert sorted(np.unique(mixed["block"].values)) == ["1", "2", "x"]  # distinct: kept


def test_loss_differences_refuses_tables_of_other_splits_or_data():
    """Two tables with the same blocks and rows are not the same splits if one is
    leave-one-source-out and the other random K-fold, if their replicates are of different
    kinds, or if they give a point different sources; before, each difference table took A's
    attributes silently.
    """
    losses = np.arange(8.0)
    blocks = np.repeat(["a", "b"], 4)
    as_source = from_arrays(losses, blocks, scheme="source")
    as_random = from_arrays(losses[::-1], blocks, scheme="random")
    with pytest.raises(ValueError, match="differ in their CV scheme"):
        loss_differences(as_source, as_random)
    runs = [from_arrays(losses, blocks), from_arrays(losses + 1, blocks)]
    with pytest.raises(ValueError, match="differ in their kind of replicates"):
        loss_differences(
            stack_replicates(runs, replicate_kind="repeat"),
            stack_replicates(runs, replicate_kind="independent"),
        )
    other = from_arrays(losses, blocks, source=np.repeat(["s", "t", "u", "v"], 2))
    same = from_arrays(losses, blocks, source=np.repeat(["s", "t", "u", "v"], 2)[::-1])
    with pytest.raises(ValueError, match="different source labels"):
        loss_differences(other, same)
    assert float(abs(loss_differences(other, other)["loss"]).max()) == 0.0
