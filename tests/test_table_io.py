import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

from bayescv.losses import (
    REPLICATE_KINDS,
    from_arrays,
    from_frame,
    read_csv,
    read_netcdf,
    read_table,
    stack_replicates,
    to_csv,
    to_frame,
    to_netcdf,
)

FORMATS = {"csv": (to_csv, read_csv), "nc": (to_netcdf, read_netcdf)}

# Floats whose decimal or binary form is awkward: 1/3 has no finite decimal expansion,
# 1e-300 and 1e300 are near the ends of the range, 0.1 + 0.2 == 0.30000000000000004 needs
# 17 significant digits, 5e-324 is the smallest subnormal, -0.0 is negative zero.
AWKWARD = [1 / 3, 1e-300, 1e300, 0.1 + 0.2, 5e-324, -0.0, -1.7976931348623157e308, 2.0**-1074]


def roundtrip(table, fmt, path):
    write, read = FORMATS[fmt]
    file = path / f"table.{fmt}"
    write(table, file)
    return read(file)


def assert_roundtrip(table, fmt, path):
    back = roundtrip(table, fmt, path)
    xr.testing.assert_identical(back, table)
    # assert_identical compares values, not dtypes: check those too
    for name, var in table.variables.items():
        assert back[name].dtype == var.dtype, name
    # and bit patterns of the losses (distinguishes -0.0 from 0.0)
    np.testing.assert_array_equal(
        back["loss"].values.view(np.int64), table["loss"].values.view(np.int64)
    )
    return back


@pytest.fixture(params=sorted(FORMATS))
def fmt(request):
    return request.param


def test_roundtrip_int_labels(fmt, tmp_path):
    table = from_arrays([0.5, 1.5, 2.5, 3.5, 4.5, 5.5], [2, 0, 2, 0, 1, 1], loss_name="abs")
    assert_roundtrip(table, fmt, tmp_path)


def test_roundtrip_string_labels(fmt, tmp_path):
    table = from_arrays(
        [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
        ["beta", "alpha", "beta", "alpha", "NA", "NA"],
        attrs={"seed": 42, "estimator": "Ridge(alpha=1.0)"},
    )
    back = assert_roundtrip(table, fmt, tmp_path)
    assert back.attrs["seed"] == 42
    # "NA" is a label, not a missing value
    assert "NA" in back["block"].values


def test_roundtrip_with_source(fmt, tmp_path):
    table = from_arrays(
        np.linspace(0.0, 1.0, 6),
        ["f1", "f1", "f2", "f2", "f1", "f2"],
        source=["s1", "s2", "s3", "s3", "s1", "s4"],
        index=[5, 4, 3, 2, 1, 0],
    )
    assert table.attrs["scheme"] == "source"
    assert_roundtrip(table, fmt, tmp_path)


def test_roundtrip_explicit_source_scheme(fmt, tmp_path):
    table = from_arrays([1.0, 2.0, 3.0, 4.0], [10, 20, 10, 20], scheme="source")
    assert_roundtrip(table, fmt, tmp_path)


@pytest.mark.parametrize("kind", REPLICATE_KINDS)
def test_roundtrip_replicates(kind, fmt, tmp_path):
    rng = np.random.default_rng(1)
    block = [[0, 0, 1, 1, 2, 2], [2, 1, 0, 2, 1, 0], [1, 1, 1, 0, 0, 0]]
    table = from_arrays(
        rng.exponential(size=(3, 6)),
        block,
        source=["a", "b", "c", "d", "e", "f"],
        replicate_kind=kind,
        loss_name="squared",
    )
    back = assert_roundtrip(table, fmt, tmp_path)
    assert back.attrs["replicate_kind"] == kind


def test_roundtrip_stacked_replicates_with_string_labels(fmt, tmp_path):
    a = from_arrays([0.1, 0.2, 0.3, 0.4], ["x", "y", "x", "y"])
    b = from_arrays([0.5, 0.6, 0.7, 0.8], ["y", "y", "yy", "yy"])
    # assert_identical would not notice "<U1" vs "<U2"; assert_roundtrip checks dtypes too
    table = stack_replicates([a, b], replicate_kind="independent")
    assert_roundtrip(table, fmt, tmp_path)


def test_roundtrip_replicate_labels(fmt, tmp_path):
    table = from_arrays(np.ones((2, 4)), [0, 0, 1, 1], replicate_kind="repeat")
    table = table.assign_coords(replicate=[3, 8])
    back = assert_roundtrip(table, fmt, tmp_path)
    np.testing.assert_array_equal(back["replicate"].values, [3, 8])


def test_roundtrip_awkward_floats(fmt, tmp_path):
    n = len(AWKWARD)
    table = from_arrays(AWKWARD, np.arange(n) % 2)
    back = assert_roundtrip(table, fmt, tmp_path)
    # 0.1 + 0.2 must come back as 0.30000000000000004, not 0.3
    assert 0.1 + 0.2 in back["loss"].values
    assert 0.3 not in back["loss"].values


def test_roundtrip_awkward_floats_2d(fmt, tmp_path):
    loss = np.array([AWKWARD, AWKWARD[::-1]])
    table = from_arrays(loss, np.arange(len(AWKWARD)) // 4, replicate_kind="bootstrap")
    assert_roundtrip(table, fmt, tmp_path)


def test_roundtrip_float_labels(fmt, tmp_path):
    table = from_arrays([1.0, 2.0, 3.0, 4.0], [0.1 + 0.2, 0.1 + 0.2, 1 / 3, 1 / 3])
    assert_roundtrip(table, fmt, tmp_path)


def test_roundtrip_awkward_string_labels(fmt, tmp_path):
    # quotes, the delimiter, line breaks (a bare "\r" too), spaces, "#", empty, non-ASCII
    labels = ['"q"', "x,y", "a\nb", "c\rd", " e ", "#f", "", "日本"]
    table = from_arrays(np.arange(16.0), np.repeat(labels, 2), source=np.repeat(labels[::-1], 2))
    assert_roundtrip(table, fmt, tmp_path)


def test_csv_header_line(tmp_path):
    table = from_arrays([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1])
    to_csv(table, tmp_path / "t.csv")
    first = (tmp_path / "t.csv").read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# bayescv loss table {")
    assert '"scheme": "random"' in first


# ---------------------------------------------------------------- to_frame and plain CSV


def test_to_frame_columns_1d():
    table = from_arrays([0.3, 0.1, 0.2, 0.4], [1, 0, 1, 0], loss_name="abs")
    frame = to_frame(table)
    assert list(frame.columns) == ["block", "index", "loss"]
    # by hand: the table is sorted by block, so rows 1, 3 (block 0) come before rows 0, 2
    np.testing.assert_array_equal(frame["block"], [0, 0, 1, 1])
    np.testing.assert_array_equal(frame["index"], [1, 3, 0, 2])
    np.testing.assert_array_equal(frame["loss"], [0.1, 0.4, 0.3, 0.2])
    assert frame.attrs["loss_name"] == "abs"


def test_to_frame_columns_2d_with_source():
    table = from_arrays(
        np.arange(8.0).reshape(2, 4),
        [0, 0, 1, 1],
        source=["a", "a", "b", "b"],
        replicate_kind="repeat",
    )
    frame = to_frame(table)
    assert list(frame.columns) == ["replicate", "block", "source", "index", "loss"]
    # one row per (replicate, point), replicate-major
    np.testing.assert_array_equal(frame["replicate"], [0, 0, 0, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(frame["loss"], np.arange(8.0))
    assert frame.attrs["replicate_kind"] == "repeat"


def test_read_plain_csv(tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text("block,loss\n1,0.5\n0,0.25\n1,0.75\n0,1.0\n", encoding="utf-8")
    table = read_csv(path)
    expected = from_arrays([0.5, 0.25, 0.75, 1.0], [1, 0, 1, 0], loss_name="loss")
    xr.testing.assert_equal(table, expected)
    assert table.attrs["scheme"] == "random"
    assert table.attrs["loss_name"] == "loss"


def test_read_plain_csv_with_optional_columns(tmp_path):
    path = tmp_path / "plain.csv"
    frame = pd.DataFrame(
        {
            "replicate": [0, 0, 0, 0, 1, 1, 1, 1],
            "block": ["a", "a", "b", "b", "b", "a", "b", "a"],
            "source": ["s", "s", "t", "t", "t", "s", "t", "s"],
            "index": [0, 1, 2, 3, 0, 1, 2, 3],
            "loss": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8],
        }
    )
    frame.to_csv(path, index=False)
    # without the header there is no replicate_kind: the table is invalid
    with pytest.raises(ValueError, match="needs attribute 'replicate_kind'"):
        read_csv(path)
    table = from_frame(
        pd.read_csv(path),
        source="source",
        index="index",
        replicate="replicate",
        replicate_kind="repeat",
    )
    # replicate 1 sorted by block: block a holds rows 1, 3 (0.6, 0.8), block b rows 0, 2
    np.testing.assert_array_equal(table["loss"].values[1], [0.6, 0.8, 0.5, 0.7])
    assert table.attrs["scheme"] == "source"


def test_read_plain_csv_nan_loss(tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text("block,loss\n0,NaN\n0,1\n1,2\n1,3\n", encoding="utf-8")
    with pytest.raises(ValueError, match="NaN or infinite"):
        read_csv(path)


# ---------------------------------------------------------------- property test

_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=6)


@st.composite
def loss_tables(draw):
    label_kind = draw(st.sampled_from(["int", "str"]))
    labels_of = st.integers(-(2**63), 2**63 - 1) if label_kind == "int" else _TEXT
    n_blocks = draw(st.integers(2, 4))
    blocks = draw(st.lists(labels_of, min_size=n_blocks, max_size=n_blocks, unique=True))
    sizes = draw(st.lists(st.integers(2, 4), min_size=n_blocks, max_size=n_blocks))
    block = np.repeat(np.array(blocks), sizes)
    n_obs = block.size
    n_rep = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if n_rep > 1:
        block = np.stack([rng.permutation(block) for _ in range(n_rep)])
    else:
        block = rng.permutation(block)
    floats = st.floats(allow_nan=False, allow_infinity=False, width=64)
    loss = np.array(draw(st.lists(floats, min_size=n_rep * n_obs, max_size=n_rep * n_obs)))
    loss = loss.reshape(n_rep, n_obs) if n_rep > 1 else loss
    kw = {}
    if draw(st.booleans()):
        kw["source"] = draw(st.lists(_TEXT, min_size=n_obs, max_size=n_obs))
    if draw(st.booleans()):
        kw["index"] = rng.permutation(n_obs)
    if n_rep > 1:
        kw["replicate_kind"] = draw(st.sampled_from(REPLICATE_KINDS))
    return from_arrays(loss, block, **kw)


@settings(max_examples=50, deadline=None)
@given(table=loss_tables())
def test_roundtrip_property(table, tmp_path_factory):
    path = tmp_path_factory.mktemp("rt")
    for fmt in sorted(FORMATS):
        assert_roundtrip(table, fmt, path)


# ---------------------------------------------------------------- one reader for every format


@pytest.mark.parametrize("kind", REPLICATE_KINDS)
def test_read_table_reads_what_to_csv_and_to_netcdf_write(kind, fmt, tmp_path):
    rng = np.random.default_rng(3)
    table = from_arrays(
        rng.exponential(size=(2, 6)),
        [["a", "a", "b", "b", "c", "c"], ["c", "b", "a", "c", "b", "a"]],
        source=["s1", "s2", "s3", "s4", "s5", "s6"],
        replicate_kind=kind,
        loss_name="squared",
    )
    write, _ = FORMATS[fmt]
    path = tmp_path / f"t.{fmt}"
    write(table, path)
    back = read_table(path)
    xr.testing.assert_identical(back, table)
    for name, var in table.variables.items():
        assert back[name].dtype == var.dtype, name


def test_read_table_detects_format_by_content_not_name(tmp_path):
    table = from_arrays([0.1, 0.2, 0.3, 0.4], ["a", "a", "b", "b"], scheme="source")
    to_netcdf(table, tmp_path / "looks_like.csv")
    to_csv(table, tmp_path / "looks_like.nc")
    xr.testing.assert_identical(read_table(tmp_path / "looks_like.csv"), table)
    xr.testing.assert_identical(read_table(tmp_path / "looks_like.nc"), table)


def test_read_table_classic_netcdf(tmp_path):
    # classic NetCDF (magic bytes b"CDF"), as written by scipy or older tools
    table = from_arrays([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1], scheme="source")
    table.to_netcdf(tmp_path / "classic.nc", engine="scipy")
    assert (tmp_path / "classic.nc").read_bytes()[:3] == b"CDF"
    back = read_table(tmp_path / "classic.nc")
    np.testing.assert_array_equal(back["loss"].values, table["loss"].values)
    assert back.attrs["scheme"] == "source"


def test_read_table_plain_csv_with_named_columns(tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text("err,school,pupil\n0.5,x,0\n0.25,x,1\n0.75,y,2\n1.0,y,3\n", encoding="utf-8")
    table = read_table(path, loss="err", block="school", index="pupil", scheme="source")
    expected = from_arrays(
        [0.5, 0.25, 0.75, 1.0], ["x", "x", "y", "y"], index=[0, 1, 2, 3], scheme="source",
        loss_name="err",
    )  # fmt: skip
    xr.testing.assert_equal(table, expected)
    assert table.attrs["loss_name"] == "err"


def test_read_table_plain_csv_uses_default_optional_columns(tmp_path):
    # like read_csv: columns named source / index / replicate are used when present
    path = tmp_path / "plain.csv"
    path.write_text("block,source,loss\n0,a,1\n0,a,2\n1,b,3\n1,b,4\n", encoding="utf-8")
    table = read_table(path)
    assert table["source"].values.tolist() == ["a", "a", "b", "b"]
    assert table.attrs["scheme"] == "source"
    xr.testing.assert_identical(table.drop_attrs(), read_csv(path).drop_attrs())


def test_read_table_plain_csv_with_runs(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text(
        "replicate,block,loss\n0,a,1\n0,a,2\n0,b,3\n0,b,4\n1,a,5\n1,b,6\n1,a,7\n1,b,8\n",
        encoding="utf-8",
    )
    table = read_table(path, replicate_kind="repeat")
    assert table.attrs["replicate_kind"] == "repeat"
    np.testing.assert_array_equal(table["loss"].values, [[1, 2, 3, 4], [5, 7, 6, 8]])


@pytest.mark.parametrize("scheme", ["random", "source"])
def test_read_table_scheme_replaces_the_stored_one(scheme, fmt, tmp_path):
    table = from_arrays([0.1, 0.2, 0.3, 0.4], ["a", "a", "b", "b"], loss_name="abs")
    write, _ = FORMATS[fmt]
    write(table, tmp_path / f"t.{fmt}")
    back = read_table(tmp_path / f"t.{fmt}", scheme=scheme)
    assert back.attrs["scheme"] == scheme
    assert back.attrs["loss_name"] == "abs"
    np.testing.assert_array_equal(back["loss"].values, table["loss"].values)
    if scheme == "source":  # leave-one-source-out: each block is its source
        assert back["source"].values.tolist() == ["a", "a", "b", "b"]


def test_read_table_default_column_names_fit_self_describing_files(fmt, tmp_path):
    # the CLI passes its defaults (loss, block) and maybe --source-col source: all fine
    table = from_arrays([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1], source=["a", "a", "b", "b"])
    write, _ = FORMATS[fmt]
    write(table, tmp_path / f"t.{fmt}")
    back = read_table(tmp_path / f"t.{fmt}", loss="loss", block="block", source="source")
    xr.testing.assert_identical(back, table)


def test_read_csv_keeps_missing_labels_out_of_plain_files_only(tmp_path):
    # with the bayescv header an empty field is the label "" (round trip); without it, an error
    table = from_arrays([1.0, 2.0, 3.0, 4.0], ["", "", "b", "b"])
    to_csv(table, tmp_path / "headed.csv")
    xr.testing.assert_identical(read_csv(tmp_path / "headed.csv"), table)
    plain = tmp_path / "plain.csv"
    plain.write_text("block,loss\n,1\n,2\nb,3\nb,4\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"missing block label .* data row\(s\): 1, 2"):
        read_csv(plain)
