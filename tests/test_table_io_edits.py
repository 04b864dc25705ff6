"""Tables that users edit, resave or hand over in the wrong shape: each test reproduces a defect.

* A bayescv CSV whose labels were edited (a source renamed, rows appended) read back with the
  labels cut to the width of the written ones (``<U6``): two sources merged into one.
* A bayescv CSV saved back by a spreadsheet (its JSON header line split at commas and
  re-quoted) and a semicolon-delimited export were refused as having "no loss column".
* A label written as an integer and edited to a word gave pandas' bare ``invalid literal for
  int()``; a header with spaces after its commas gave a plain "no loss column".
* The header line held ``Infinity`` (not JSON) for an infinite ``loss_range`` bound.
* ``from_long_frame`` turned integer data-set labels into strings, so that
  ``plot_comparison(result, dataset=10)`` found no data set 10.
* ``compare_datasets`` given a fold-score table failed inside numpy.

Reference values are exact expectations: labels as the user wrote them, counts of rows.
"""

from __future__ import annotations

import csv
import io
import json

import matplotlib
import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayescv.bayes import compare_datasets
from bayescv.bayes.datasets_model import datasets_stats
from bayescv.fold_scores import fold_differences, fold_table, from_long_frame
from bayescv.learner_comparison import compare_learners, correlated_ttest
from bayescv.losses import from_arrays, read_csv, read_table, to_csv
from bayescv.moments import block_moments
from bayescv.plots import plot_comparison

matplotlib.use("Agg")

SITES = np.repeat(["site_A", "site_B", "site_C", "site_D"], 10)


def _sites_table():
    rng = np.random.default_rng(0)
    return from_arrays(rng.gamma(2.0, size=40), SITES, scheme="source")


def _text(path):
    """The file as written (CRLF line ends kept; read_text would turn them into LF)."""
    return path.read_bytes().decode("utf-8")


def _rewrite(path, edit):
    path.write_text(edit(_text(path)), encoding="utf-8", newline="")


# ------------------------------------------------------------ labels edited after to_csv


@pytest.mark.parametrize("read", [read_csv, read_table])
def test_renamed_labels_longer_than_written_read_back_whole(read, tmp_path):
    path = tmp_path / "t.csv"
    to_csv(_sites_table(), path)
    assert '"<U6"' in _text(path).splitlines()[0]  # the width written
    _rewrite(
        path,
        lambda t: t.replace("site_C", "site_Cambridge_east").replace(
            "site_D", "site_Cambridge_west"
        ),
    )
    back = read(path)
    expected = ["site_A", "site_B", "site_Cambridge_east", "site_Cambridge_west"]
    assert np.unique(back["block"].values).tolist() == expected
    assert np.unique(back["source"].values).tolist() == expected
    # four sources of 10 points each, as written; not three with one of 20
    assert block_moments(back)["n"].values.tolist() == [10, 10, 10, 10]


def test_appended_rows_with_longer_labels_read_back_whole(tmp_path):
    table = from_arrays([0.1, 0.2, 0.3, 0.4], ["f1", "f1", "f2", "f2"])
    path = tmp_path / "t.csv"
    to_csv(table, path)
    # columns block, index, loss (to_frame's order)
    _rewrite(path, lambda t: t + "fold_three,4,0.5\r\nfold_three,5,0.25\r\n")
    back = read_csv(path)
    assert back["block"].values.tolist() == ["f1", "f1", "f2", "f2", "fold_three", "fold_three"]
    np.testing.assert_array_equal(back["loss"].values, [0.1, 0.2, 0.3, 0.4, 0.5, 0.25])


def test_shortened_labels_and_a_wider_written_width_round_trip(tmp_path):
    # A table whose labels are narrower than their dtype (a subset keeps the dtype) keeps it.
    wide = np.array(["a", "a", "b", "b"], dtype="<U10")
    table = from_arrays([0.1, 0.2, 0.3, 0.4], wide, source=wide, scheme="source")
    assert table["block"].dtype == np.dtype("<U10")
    path = tmp_path / "t.csv"
    to_csv(table, path)
    back = read_csv(path)
    xr.testing.assert_identical(back, table)
    assert back["block"].dtype == back["source"].dtype == np.dtype("<U10")
    # and a label edited shorter reads back as written
    _rewrite(path, lambda t: t.replace("\r\nb,b,", "\r\nB,bb,"))
    edited = read_csv(path)
    pairs = zip(edited["block"].values.tolist(), edited["source"].values.tolist(), strict=True)
    assert sorted(pairs) == [("B", "bb"), ("B", "bb"), ("a", "a"), ("a", "a")]


def test_labels_like_numbers_and_na_stay_strings_when_edited(tmp_path):
    table = from_arrays([0.1, 0.2, 0.3, 0.4], ["001", "001", "NA", "NA"])
    path = tmp_path / "t.csv"
    to_csv(table, path)
    _rewrite(path, lambda t: t.replace("\r\n001,", "\r\n000123,"))
    back = read_csv(path)
    assert back["block"].values.tolist() == ["000123", "000123", "NA", "NA"]


# ------------------------------------------------------- files saved back by a spreadsheet


def _spreadsheet_resave(path, *, delimiter=","):
    """What Excel and LibreOffice do: split every line at commas, write it back (RFC 4180)."""
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator="\r\n").writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8", newline="")


def _small_table():
    return from_arrays(
        [0.1, 0.4, 0.2, 0.3], ["a", "a", "b", "b"], scheme="source", loss_name="squared"
    )


@pytest.mark.parametrize("read", [read_csv, read_table])
def test_header_split_by_a_spreadsheet_is_named_with_the_way_out(read, tmp_path):
    path = tmp_path / "t.csv"
    to_csv(_small_table(), path)
    _spreadsheet_resave(path)
    assert _text(path).startswith('"# bayescv loss table {""attrs""')
    with pytest.raises(ValueError, match="header line was altered") as info:
        read(path)
    message = str(info.value)
    assert "spreadsheet" in message
    assert "to_csv" in message
    assert "read_table" in message
    assert "no loss column" not in message


def test_the_way_out_of_an_altered_header_works(tmp_path):
    # The advice: delete the first line, read the rest with read_table(scheme=...) and set
    # the attributes that matter.
    table = _small_table()
    path = tmp_path / "t.csv"
    to_csv(table, path)
    _spreadsheet_resave(path)
    lines = _text(path).splitlines(keepends=True)
    path.write_text("".join(lines[1:]), encoding="utf-8", newline="")
    back = read_table(path, scheme="source")
    for name in ("loss", "block", "source", "index"):
        np.testing.assert_array_equal(back[name].values, table[name].values)
    assert back.attrs["scheme"] == "source"


def test_header_with_the_marker_but_not_json_is_named(tmp_path):
    path = tmp_path / "t.csv"
    to_csv(_small_table(), path)
    # a spreadsheet exporting without quotes pads the row with the empty cells of the others
    _rewrite(path, lambda t: t.replace("}}\r\n", "}},,,\r\n", 1))
    with pytest.raises(ValueError, match="header line was altered"):
        read_csv(path)


@pytest.mark.parametrize("header", [True, False])
def test_semicolon_delimited_file_is_named(header, tmp_path):
    path = tmp_path / "t.csv"
    if header:
        to_csv(_small_table(), path)
        first, *rest = _text(path).split("\r\n")
        text = "\r\n".join([first, *(r.replace(",", ";") for r in rest)])
        path.write_text(text, encoding="utf-8", newline="")
    else:  # a European export: semicolons between fields, decimal commas
        path.write_text("block;loss\r\na;0,1\r\na;0,4\r\nb;0,2\r\nb;0,3\r\n", encoding="utf-8")
    with pytest.raises(ValueError, match="semicolon-delimited") as info:
        read_csv(path)
    assert "sep=';'" in str(info.value)


def test_semicolon_advice_reads_the_file(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("block;loss\r\na;0,1\r\na;0,4\r\nb;0,2\r\nb;0,3\r\n", encoding="utf-8")
    from bayescv.losses import from_frame

    table = from_frame(pd.read_csv(path, sep=";", decimal=","))
    np.testing.assert_array_equal(table["loss"].values, [0.1, 0.4, 0.2, 0.3])


def test_integer_label_edited_to_a_word_is_named_with_the_way_out(tmp_path):
    # Block labels written as integers (the header records int64), one edited to a word:
    # pandas' bare "invalid literal for int()" named neither the file nor the cause.
    path = tmp_path / "t.csv"
    to_csv(from_arrays([0.1, 0.4, 0.2, 0.3], [1, 1, 2, 2]), path)
    first, header, *rows = _text(path).split("\r\n")
    rows = [("x2" + r[1:]) if r.startswith("2,") else r for r in rows]
    path.write_text("\r\n".join([first, header, *rows]), encoding="utf-8", newline="")
    with pytest.raises(ValueError, match="type its header line records") as info:
        read_csv(path)
    assert str(info.value).startswith(f"{path}: ")
    # the way out the message gives: drop the header line, read it as a plain CSV
    path.write_text("\r\n".join([header, *rows]), encoding="utf-8", newline="")
    table = read_table(path, scheme="random")
    assert table["block"].values.tolist() == ["1", "1", "x2", "x2"]


def test_spaces_after_commas_are_named_and_the_advice_reads_the_file(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("block, loss\na, 0.1\na, 0.4\nb, 0.2\nb, 0.3\n", encoding="utf-8")
    with pytest.raises(ValueError, match="spaces around its commas"):
        read_csv(path)
    from bayescv.losses import from_frame

    table = from_frame(pd.read_csv(path, skipinitialspace=True))
    np.testing.assert_array_equal(table["loss"].values, [0.1, 0.4, 0.2, 0.3])


# ----------------------------------------------------------------- the header line is JSON


def _reject_constant(name):
    raise ValueError(f"non-standard JSON constant {name}")


def test_header_of_an_infinite_loss_range_is_standard_json(tmp_path):
    table = from_arrays([0.1, 0.4, 0.2, 0.3], [0, 0, 1, 1], loss_range=(0.0, np.inf))
    path = tmp_path / "t.csv"
    to_csv(table, path)
    first = _text(path).splitlines()[0]
    meta = json.loads(first[len("# bayescv loss table ") :], parse_constant=_reject_constant)
    assert meta["attrs"]["loss_range"][0] == 0.0
    back = read_csv(path)
    xr.testing.assert_identical(back, table)
    assert back.attrs["loss_range"] == [0.0, np.inf]


def test_header_written_with_infinity_still_reads_identically(tmp_path):
    # Files written before: json.dumps's default "Infinity", "-Infinity" and "NaN".
    table = from_arrays(
        [0.1, 0.4, 0.2, 0.3], [0, 0, 1, 1], loss_range=(-np.inf, np.inf), attrs={"x": np.nan}
    )
    new, old = tmp_path / "new.csv", tmp_path / "old.csv"
    to_csv(table, new)
    first, rest = _text(new).split("\r\n", 1)
    meta = json.loads(first[len("# bayescv loss table ") :])
    assert meta["attrs"]["loss_range"] == ["-inf", "inf"]  # the standard encoding
    meta.pop("nonfinite")
    meta["attrs"] |= {"loss_range": [-np.inf, np.inf], "x": np.nan}
    old_first = "# bayescv loss table " + json.dumps(meta)
    assert "-Infinity" in old_first
    assert "NaN" in old_first
    old.write_text(old_first + "\r\n" + rest, encoding="utf-8", newline="")
    from_new, from_old = read_csv(new), read_csv(old)
    xr.testing.assert_identical(from_old, from_new)
    xr.testing.assert_identical(from_new, table)
    for back in (from_new, from_old):
        assert back.attrs["loss_range"] == [-np.inf, np.inf]
        assert np.isnan(back.attrs["x"])


def test_string_attrs_that_spell_inf_stay_strings(tmp_path):
    table = from_arrays([0.1, 0.4, 0.2, 0.3], [0, 0, 1, 1], attrs={"note": "inf", "n": ["nan"]})
    path = tmp_path / "t.csv"
    to_csv(table, path)
    back = read_csv(path)
    assert back.attrs["note"] == "inf"
    assert back.attrs["n"] == ["nan"]


# ------------------------------------------------------------- integer data-set labels


def _int_frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        [
            {"dataset": d, "learner": ll, "fold": f, "score": rng.normal(0.8, 0.02)}
            for d in (2, 10)
            for ll in ("a", "b")
            for f in range(5)
        ]
    )


def test_long_frame_keeps_integer_data_set_labels():
    frame = _int_frame()
    table = from_long_frame(frame, metric="accuracy")
    assert table["dataset"].values.tolist() == [2, 10]
    assert table["dataset"].dtype.kind == "i"
    for d in (2, 10):  # round trip: each label selects its own rows
        rows = frame[(frame["dataset"] == d) & (frame["learner"] == "a")]
        np.testing.assert_array_equal(
            table["loss"].sel(dataset=d, learner="a").values.ravel(), -rows["score"].to_numpy()
        )


def test_plot_comparison_finds_an_integer_data_set():
    result = correlated_ttest(from_long_frame(_int_frame(), metric="accuracy"), rope=0.01)
    ax = plot_comparison(result, dataset=10)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0] == f"a better: {float(result['p_better'].sel(dataset=10)):.3f}"
    rows = compare_learners(
        from_long_frame(_int_frame(), metric="accuracy"), methods=["correlated_t"]
    )
    assert sorted(rows["dataset"].values.tolist()) == ["10", "2"]


def test_long_frame_string_and_absent_data_set_labels_unchanged():
    frame = _int_frame()
    named = from_long_frame(frame.assign(dataset=frame["dataset"].map(str)), metric="accuracy")
    assert named["dataset"].values.tolist() == ["2", "10"]
    assert named["dataset"].dtype.kind == "U"
    one = from_long_frame(frame[frame["dataset"] == 2].drop(columns="dataset"), metric="accuracy")
    assert one["dataset"].values.tolist() == ["0"]


# ---------------------------------------------------------- compare_datasets' input


def _three_datasets():
    rng = np.random.default_rng(1)
    return fold_table(rng.normal(size=(3, 2, 10)), runs=2, greater_is_better=False)


def test_compare_datasets_names_a_fold_table_and_how_to_get_differences():
    table = _three_datasets()
    with pytest.raises(TypeError, match="fold_differences") as info:
        compare_datasets(table)
    assert "compare_learners" in str(info.value)
    with pytest.raises(ValueError, match="fold_differences"):
        compare_datasets(fold_differences(table, "A", "B"))


def test_the_recipe_for_compare_datasets_gives_its_input():
    # The message's recipe, checked by the data check compare_datasets runs first.
    table = _three_datasets()
    diff = fold_differences(table, "A", "B")
    x = diff.values.reshape(diff.sizes["dataset"], -1)
    stats = datasets_stats(x, runs=table.sizes["repetition"], names=diff["dataset"].values)
    assert stats.n_datasets == 3
    assert list(stats.names) == ["0", "1", "2"]
