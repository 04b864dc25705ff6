"""Every bad input of the loss tables, their files, the closed-form intervals, the CV runner,
paired comparisons and the covariate-shift functions: the exception type and the words of its
message, one row each.

Rows that passed before the reliability pass stay here too, so that they keep passing. The
inputs that are odd but fine (CSV quirks, NumPy scalars) are in the second table, with what
they must give.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from bayescv import shift
from bayescv.classical import cv_intervals, variance_estimates
from bayescv.cv import bootstrap_cv_losses, cross_val_losses
from bayescv.losses import (
    from_arrays,
    from_frame,
    loss_differences,
    read_csv,
    read_table,
    stack_replicates,
    to_csv,
    to_netcdf,
    validate,
)
from bayescv.moments import block_moments, block_sums

BLOCKS = [0, 0, 1, 1, 2, 2]
LOSSES = [0.1, 0.4, 0.3, 0.2, 0.9, 0.5]


def table(**kw: Any) -> xr.Dataset:
    return from_arrays(LOSSES, BLOCKS, **kw)


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def csv_file(tmp: Path, text: str, name: str = "losses.csv", encoding: str = "utf-8") -> Path:
    return write(tmp / name, text, encoding)


def saved(tmp: Path, fmt: str) -> Path:
    path = tmp / f"table.{fmt}"
    (to_csv if fmt == "csv" else to_netcdf)(table(scheme="source"), path)
    return path


def regression(n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, 2)), rng.normal(size=n)


def with_inf(X: np.ndarray) -> np.ndarray:
    X = X.copy()
    X[3, 1] = np.inf
    return X


@dataclass(frozen=True)
class Case:
    id: str
    call: Callable[[Path], Any]
    error: type[Exception]
    words: tuple[str, ...]
    absent: tuple[str, ...] = ()


L = np.array([0.1, 0.5, 0.3, 0.9, 0.2])
W = np.array([0.5, 1.5, 1.0, 2.0, 0.5])

CASES = [
    # ------------------------------------------------------------ loss tables in memory
    Case("nan loss", lambda t: from_arrays([0.1, np.nan, 0.3, 0.4], [0, 0, 1, 1]),
         ValueError, ("1 NaN or infinite value(s)", "at index 1")),
    Case("inf log loss hint", lambda t: from_arrays([np.inf, 1, 1, 1], [0, 0, 1, 1],
                                                    loss_name="log_loss"),
         ValueError, ("infinite", "log loss is infinite", "probability 0")),
    Case("inf squared loss no hint", lambda t: from_arrays([np.inf, 1, 1, 1], [0, 0, 1, 1],
                                                           loss_name="squared"),
         ValueError, ("NaN or infinite",), ("log loss",)),
    Case("complex losses", lambda t: from_arrays(np.array(LOSSES) + 1j, BLOCKS),
         ValueError, ("losses must be real", "complex")),
    Case("complex losses, object array",
         lambda t: from_arrays(np.array([1 + 2j, 1, 2, 3], dtype=object), [0, 0, 1, 1]),
         ValueError, ("losses must be real",)),
    Case("empty", lambda t: from_arrays([], []), ValueError, ("empty input",)),
    Case("one-point block", lambda t: from_arrays([1.0, 2.0, 3.0], [0, 0, 1]),
         ValueError, ("block(s) [1]", "fewer than two points")),
    Case("single block", lambda t: from_arrays([1.0, 2.0, 3.0], [0, 0, 0]),
         ValueError, ("fewer than two blocks",)),
    Case("mismatched lengths", lambda t: from_arrays([1.0, 2.0, 3.0, 4.0], [0, 0, 1]),
         ValueError, ("mismatched lengths", "'block'")),
    Case("None block labels",
         lambda t: from_arrays([1.0, 2, 3, 4], np.array([None, None, "a", "a"], dtype=object)),
         ValueError, ("'block' labels are missing", "None", "[0, 1]")),
    Case("NaN in object source labels",
         lambda t: from_arrays([1.0, 2, 3, 4], [0, 0, 1, 1],
                               source=np.array(["a", np.nan, "b", "b"], dtype=object)),
         ValueError, ("'source' labels are missing", "[1]")),
    Case("NaN float labels", lambda t: from_arrays([1.0, 2, 3, 4], [0.0, 0.0, np.nan, np.nan]),
         ValueError, ("'block' labels contain NaN",)),
    Case("unknown scheme", lambda t: table(scheme="grouped"),
         ValueError, ("'scheme' must be one of",)),
    Case("unknown replicate kind", lambda t: table(replicate_kind="resample"),
         ValueError, ("unknown replicate kind 'resample'",)),
    Case("2-D without replicate kind", lambda t: from_arrays(np.ones((2, 4)), [0, 0, 1, 1]),
         ValueError, ("needs attribute 'replicate_kind'",)),
    Case("3-D losses", lambda t: from_arrays(np.ones((2, 2, 4)), [0, 0, 1, 1]),
         ValueError, ("1-D or 2-D",)),
    Case("frame with two loss columns",
         lambda t: from_frame(pd.DataFrame([[0, 1.0, 2.0]] * 2 + [[1, 3.0, 4.0]] * 2,
                                           columns=["block", "loss", "loss"])),
         ValueError, ("duplicate column 'loss'", "2 columns"), ("mismatched lengths",)),
    Case("frame lacks a column", lambda t: from_frame(pd.DataFrame({"err": [1.0], "block": [0]})),
         ValueError, ("column(s) ['loss'] not in the frame",)),
    Case("frame is not a frame", lambda t: from_frame({"loss": [1.0]}),
         TypeError, ("pandas DataFrame",)),
    Case("frame is empty", lambda t: from_frame(pd.DataFrame({"loss": [], "block": []})),
         ValueError, ("empty input",)),
    Case("validate a frame", lambda t: validate(pd.DataFrame({"loss": [1.0]})),
         TypeError, ("xarray.Dataset",)),
    Case("stack nothing", lambda t: stack_replicates([], replicate_kind="repeat"),
         ValueError, ("no tables to stack",)),
    # ------------------------------------------------------------ loss-table files
    Case("empty file", lambda t: read_table(csv_file(t, "")),
         ValueError, ("losses.csv", "the file is empty")),
    Case("header row only", lambda t: read_table(csv_file(t, "block,loss\n")),
         ValueError, ("losses.csv", "no rows")),
    Case("latin-1 file", lambda t: read_table(csv_file(t, "block,loss\ncafé,1\ncafé,2\nb,3\nb,4\n",
                                                       encoding="latin-1")),
         ValueError, ("losses.csv", "not UTF-8", "0xe9", "re-encode", "UTF-8")),
    Case("latin-1 file through read_csv",
         lambda t: read_csv(csv_file(t, "block,loss\na,1\na,2\nb,3\nb,4\nré,5\n", encoding="latin-1")),
         ValueError, ("losses.csv", "not UTF-8")),
    Case("two loss columns in a CSV",
         lambda t: read_csv(csv_file(t, "block,loss,loss\n0,1,2\n0,2,3\n1,3,4\n1,4,5\n")),
         ValueError, ("duplicate column 'loss'", "2 times")),
    Case("missing block labels",
         lambda t: read_csv(csv_file(t, "block,loss\n0,1\n,2\n1,3\n1,4\n,5\n0,6\n")),
         ValueError, ("losses.csv", "missing block label", "data row(s): 2, 5")),
    Case("missing source label",
         lambda t: read_table(csv_file(t, "block,source,loss\n0,a,1\n0,,2\n1,b,3\n1,b,4\n"),
                              source="source"),
         ValueError, ("missing source label", "data row(s): 2")),
    Case("empty loss field", lambda t: read_csv(csv_file(t, "block,loss\na,\na,2\nb,3\nb,4\n")),
         ValueError, ("missing loss (empty field)", "data row 1")),
    Case("non-numeric loss", lambda t: read_csv(csv_file(t, "block,loss\na,1\na,x\nb,3\nb,4\n")),
         ValueError, ("non-numeric loss 'x'", "data row 2")),
    Case("NaN loss in a CSV", lambda t: read_csv(csv_file(t, "block,loss\n0,NaN\n0,1\n1,2\n1,3\n")),
         ValueError, ("losses.csv", "NaN or infinite")),
    Case("no loss column", lambda t: read_table(csv_file(t, "block,err\n0,1\n0,1\n1,1\n1,1\n")),
         ValueError, ("no loss column 'loss'", "['block', 'err']")),
    Case("named column absent", lambda t: read_table(csv_file(t, "block,loss\n0,1\n0,1\n1,1\n1,1\n"),
                                                     source="school"),
         ValueError, ("no source column 'school'",)),
    Case("one-point block in a CSV", lambda t: read_csv(csv_file(t, "block,loss\n0,1\n0,2\n1,3\n")),
         ValueError, ("losses.csv", "fewer than two points")),
    Case("single block in a CSV", lambda t: read_csv(csv_file(t, "block,loss\n0,1\n0,2\n0,3\n")),
         ValueError, ("fewer than two blocks",)),
    Case("runs without replicate kind",
         lambda t: read_csv(csv_file(t, "replicate,block,loss\n0,a,1\n0,a,2\n0,b,3\n0,b,4\n"
                                        "1,a,1\n1,a,2\n1,b,3\n1,b,4\n")),
         ValueError, ("needs attribute 'replicate_kind'",)),
    Case("NetCDF through read_csv", lambda t: read_csv(saved(t, "nc")),
         ValueError, ("table.nc", "NetCDF", "read_table")),
    Case("corrupt NetCDF",
         lambda t: read_table(write(t / "bad.nc", "\x89HDF\r\n\x1a\n" + "junk" * 8, "latin-1")),
         ValueError, ("bad.nc", "not a readable NetCDF")),
    Case("column names on a bayescv CSV", lambda t: read_table(saved(t, "csv"), loss="err"),
         ValueError, ("table.csv", "bayescv CSV", "'err'", "plain CSV")),
    Case("column names on NetCDF", lambda t: read_table(saved(t, "nc"), block="fold"),
         ValueError, ("table.nc", "NetCDF", "'fold'")),
    Case("replicate kind on a one-run file", lambda t: read_table(saved(t, "nc"),
                                                                  replicate_kind="repeat"),
         ValueError, ("replicate_kind None", "'repeat'")),
    Case("broken header line", lambda t: read_csv(csv_file(t, "# bayescv loss table {oops\n"
                                                              "block,loss\n0,1\n0,1\n1,1\n1,1\n")),
         ValueError, ("header line was altered", "not the JSON line")),
    Case("no such file", lambda t: read_table(t / "nope.csv"), FileNotFoundError, ("nope.csv",)),
    # ------------------------------------------------------------ moments and intervals
    Case("losses that overflow their squares", lambda t: cv_intervals(
        from_arrays(np.linspace(1, 2, 6) * 1e160, BLOCKS), "all"),
         ValueError, ("losses up to 2e+160", "overflow float64", "rescale them", "1e161")),
    Case("overflow in block_moments", lambda t: block_moments(from_arrays([1e300] * 4, [0, 0, 1, 1])),
         ValueError, ("overflow float64", "4 points")),
    Case("overflow in block_sums", lambda t: block_sums(np.array([1e200, 1.0]), np.array([0, 1])),
         ValueError, ("losses up to 1e+200",)),
    Case("unknown method", lambda t: cv_intervals(table(), ["theta_9"]),
         ValueError, ("unknown interval method(s) ['theta_9']",)),
    Case("no methods", lambda t: cv_intervals(table(), []), ValueError, ("no interval methods",)),
    Case("level above 1", lambda t: cv_intervals(table(), level=1.5),
         ValueError, ("level must be a number in (0, 1)", "1.5")),
    Case("level 0", lambda t: cv_intervals(table(), level=0), ValueError, ("(0, 1)",)),
    Case("level NaN", lambda t: cv_intervals(table(), level=float("nan")), ValueError, ("(0, 1)",)),
    Case("level as text", lambda t: cv_intervals(table(), level="0.9"), ValueError, ("'0.9'",)),
    Case("level True", lambda t: cv_intervals(table(), level=True), ValueError, ("True",)),
    Case("level complex", lambda t: cv_intervals(table(), level=0.9 + 0j), ValueError, ("(0, 1)",)),
    Case("unknown kind", lambda t: cv_intervals(table(), kind="cauchy"),
         ValueError, ("kind must be",)),
    Case("DataFrame to cv_intervals",
         lambda t: cv_intervals(pd.DataFrame({"loss": LOSSES, "block": BLOCKS})),
         TypeError, ("xarray.Dataset", "got DataFrame", "from_frame")),
    Case("array to cv_intervals", lambda t: cv_intervals(np.array(LOSSES)),
         TypeError, ("got ndarray", "from_arrays")),
    Case("DataFrame to variance_estimates",
         lambda t: variance_estimates(pd.DataFrame({"loss": LOSSES, "block": BLOCKS})),
         TypeError, ("from_frame",)),
    Case("bootstrap method without its table", lambda t: cv_intervals(table(), ["bootstrap"]),
         ValueError, ("needs bootstrap-replicated CV runs",)),
    Case("bootstrap table as the losses",
         lambda t: cv_intervals(from_arrays(np.ones((2, 6)), BLOCKS, replicate_kind="bootstrap")),
         ValueError, ("bootstrap replicates", "bootstrap=")),
    Case("bootstrap table is a frame",
         lambda t: cv_intervals(table(), ["bootstrap"], bootstrap=pd.DataFrame()),
         TypeError, ("bootstrap must be a loss table",)),
    # ------------------------------------------------------------ paired comparisons
    Case("differences overflow", lambda t: loss_differences(
        from_arrays([1e308, 1, 1, 1], [0, 0, 1, 1]), from_arrays([-1e308, 1, 1, 1], [0, 0, 1, 1])),
         ValueError, ("differences A - B overflow float64",)),
    Case("different splits", lambda t: loss_differences(
        from_arrays([1.0, 2, 3, 4], [0, 0, 1, 1]), from_arrays([1.0, 2, 3, 4], [0, 1, 0, 1])),
         ValueError, ("the two tables differ in 'index'", "same splits")),
    # ------------------------------------------------------------ the CV runner
    Case("infinite feature", lambda t: cross_val_losses(Ridge(), with_inf(regression()[0]),
                                                        regression()[1], cv=4),
         ValueError, ("X contains 1 infinite value(s)",)),
    Case("feature too large for float64", lambda t: cross_val_losses(
        Ridge(), np.array([[10**400, 1]] * 40, dtype=object), regression()[1], cv=4),
         ValueError, ("too large for float64", "rescale")),
    Case("features whose squares overflow", lambda t: cross_val_losses(
        make_pipeline(StandardScaler(), Ridge()), regression()[0] * 1e200, regression()[1], cv=4,
        random_state=0),
         ValueError, ("fitting Pipeline failed", "squares overflow float64", "rescale the features")),
    Case("infinite loss from a callable", lambda t: cross_val_losses(
        Ridge(), *regression(), cv=4, random_state=0, loss=lambda y, p: np.full(len(y), np.inf)),
         ValueError, ("NaN or infinite loss", "for finite predictions"), ("log loss",)),
    Case("bad seed text", lambda t: cross_val_losses(Ridge(), *regression(), random_state="abc"),
         TypeError, ("random_state must be",)),
    Case("negative seed", lambda t: cross_val_losses(Ridge(), *regression(), random_state=-1),
         ValueError, ("random_state must be in [0, 2**63)",)),
    Case("bool seed", lambda t: cross_val_losses(Ridge(), *regression(), random_state=True),
         TypeError, ("not a bool",)),
    Case("no repeats", lambda t: cross_val_losses(Ridge(), *regression(), n_repeats=0),
         ValueError, ("n_repeats must be a positive integer",)),
    Case("no bootstrap runs", lambda t: bootstrap_cv_losses(Ridge(), *regression(), n_bootstrap=0),
         ValueError, ("n_bootstrap must be a positive integer",)),
    Case("cv as text", lambda t: cross_val_losses(Ridge(), *regression(), cv="kfold"),
         ValueError, ("cv must be an int, a splitter",)),
    Case("unknown loss", lambda t: cross_val_losses(Ridge(), *regression(), loss="hinge"),
         ValueError, ("unknown loss 'hinge'",)),
    Case("loss needs predict_proba", lambda t: cross_val_losses(Ridge(), *regression(),
                                                                loss="log_loss"),
         ValueError, ("needs Ridge.predict_proba",)),
    Case("X and y lengths", lambda t: cross_val_losses(Ridge(), regression()[0], np.ones(39)),
         ValueError, ("inconsistent numbers of samples",)),
    # ------------------------------------------------------------ covariate shift
    Case("shift: NaN weight", lambda t: shift.importance_weighted_risk(L, np.r_[np.nan, W[1:]]),
         ValueError, ("weights contain 1 NaN",)),
    Case("shift: infinite weight", lambda t: shift.importance_weighted_risk(L, np.r_[np.inf, W[1:]]),
         ValueError, ("infinite values", "no support overlap")),
    Case("shift: negative weights", lambda t: shift.control_variate_risk(L, -W),
         ValueError, ("non-negative",)),
    Case("shift: infinite loss", lambda t: shift.importance_weighted_risk(np.r_[np.inf, L[1:]], W),
         ValueError, ("losses contain NaN or infinite",)),
    Case("shift: complex losses", lambda t: shift.target_risk_intervals(L + 1j, W),
         ValueError, ("losses must be real",)),
    Case("shift: text losses", lambda t: shift.target_risk_intervals(np.array(["a"] * 5), W),
         ValueError, ("losses must be real numbers",)),
    Case("shift: complex weights on a table", lambda t: shift.importance_weighted_risk(
        table(), np.ones(6) + 1j), ValueError, ("weights must be real",)),
    Case("shift: mismatched lengths", lambda t: shift.importance_weighted_risk(L, W[:3]),
         ValueError, ("mismatched lengths",)),
    Case("shift: too few weights for a table", lambda t: shift.importance_weighted_risk(
        table(), W[:2]), ValueError, ("mismatched lengths", "2 weights")),
    Case("shift: one point", lambda t: shift.importance_weighted_risk(L[:1], W[:1]),
         ValueError, ("at least 2 points",)),
    Case("shift: two points, cross-fitted beta", lambda t: shift.control_variate_risk(L[:2], W[:2]),
         ValueError, ("at least 3 points",)),
    Case("shift: all-zero weights", lambda t: shift.importance_weighted_risk(L, 0 * W),
         ValueError, ("all zero",)),
    Case("shift: huge losses", lambda t: shift.target_risk_intervals(L * 1e300, W),
         ValueError, ("overflow float64", "rescale the losses")),
    Case("shift: huge weights", lambda t: shift.target_risk_intervals(L, W * 1e300),
         ValueError, ("overflow float64", "mean near 1")),
    Case("shift: huge fixed beta", lambda t: shift.control_variate_risk(L, W, beta=1e300),
         ValueError, ("overflow float64",)),
    Case("shift: unknown method", lambda t: shift.target_risk_intervals(L, W, methods=["iw2"]),
         ValueError, ("methods must be distinct names",)),
    Case("shift: unknown beta", lambda t: shift.control_variate_risk(L, W, beta="best"),
         ValueError, ("beta must be one of",)),
    Case("shift: NaN beta", lambda t: shift.control_variate_risk(L, W, beta=np.nan),
         ValueError, ("beta must be finite",)),
    Case("shift: bad level", lambda t: shift.importance_weighted_risk(L, W, level=1.5),
         ValueError, ("level must be a number in (0, 1)",)),
    Case("shift: clip as text", lambda t: shift.importance_weighted_risk(L, W, clip="a"),
         ValueError, ("clip must be a positive maximum weight",)),
    Case("shift: clip_quantile as text",
         lambda t: shift.importance_weighted_risk(L, W, clip_quantile="a"),
         ValueError, ("clip_quantile must be in (0, 1)",)),
    Case("shift: both clips", lambda t: shift.importance_weighted_risk(L, W, clip=2,
                                                                       clip_quantile=0.9),
         ValueError, ("not both",)),
    Case("shift: min_ess_fraction above 1",
         lambda t: shift.importance_weighted_risk(L, W, min_ess_fraction=2),
         ValueError, ("min_ess_fraction must be in [0, 1]",)),
    Case("shift: optimal_beta lengths", lambda t: shift.optimal_beta(L, W[:3]),
         ValueError, ("mismatched lengths",)),
    Case("shift: optimal_beta NaN", lambda t: shift.optimal_beta(np.r_[np.nan, L[1:]], W),
         ValueError, ("must be finite",)),
    Case("shift: optimal_beta empty", lambda t: shift.optimal_beta([], []),
         ValueError, ("at least 2 points",)),
    Case("shift: loo_betas negative weights", lambda t: shift.loo_betas(L, -W),
         ValueError, ("non-negative",)),
    Case("shift: loo_betas two points", lambda t: shift.loo_betas(L[:2], W[:2]),
         ValueError, ("at least 3 points",)),
    Case("shift: ESS of NaN", lambda t: shift.effective_sample_size([np.nan, 1.0]),
         ValueError, ("finite and non-negative",)),
    Case("shift: scenario shift as text", lambda t: shift.GaussianShift(shift="a"),
         ValueError, ("shift must be a real number",)),
    Case("shift: scenario NaN shift", lambda t: shift.GaussianShift(shift=np.nan),
         ValueError, ("shift must be finite",)),
    Case("shift: scenario zero scale", lambda t: shift.GaussianShift(scale=0.0),
         ValueError, ("scale must be positive",)),
    Case("shift: scenario shift overflowing", lambda t: shift.GaussianShift(shift=20.0),
         ValueError, ("too large", "overflow float64")),
    Case("shift: scenario sample size", lambda t: shift.GaussianShift().sample_source(2.5, rng=0),
         ValueError, ("size must be a non-negative int",)),
    Case("shift: scenario negative size", lambda t: shift.GaussianShift().sample_target(-1, rng=0),
         ValueError, ("size must be a non-negative int",)),
    Case("shift: weights and target both", lambda t: shift.importance_weighted_cv(
        Ridge(), *regression(), regression()[0], weights=np.ones(40)),
         ValueError, ("exactly one of X_target",)),
    Case("shift: one source", lambda t: shift.importance_weighted_cvs(
        Ridge(), *regression(), np.zeros(40)), ValueError, ("at least two sources",)),
    Case("shift: weight classifier without predict_proba",
         lambda t: shift.density_ratio_weights(*[regression()[0]] * 2, classifier=Ridge()),
         ValueError, ("has no predict_proba",)),
    Case("shift: one cross-fitting fold", lambda t: shift.density_ratio_weights(
        *[regression()[0]] * 2, cv=1), ValueError, ("at least 2 folds",)),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case, tmp_path):
    with pytest.raises(case.error) as info:
        case.call(tmp_path)
    message = str(info.value)
    for word in case.words:
        assert word in message, f"{word!r} not in {message!r}"
    for word in case.absent:
        assert word not in message, f"{word!r} in {message!r}"
    # one line: the CLI prints the first line only
    assert "\n" not in message.strip() or case.error is FileNotFoundError


def test_case_ids_are_unique():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


# ---------------------------------------------------------------- odd but fine inputs


def plain(tmp: Path, text: str, encoding: str = "utf-8") -> xr.Dataset:
    return read_table(csv_file(tmp, text, encoding=encoding))


ACCEPTED = [
    # (id, call, check)
    ("BOM", lambda t: plain(t, "block,loss\na,1\na,2\nb,3\nb,4\n", "utf-8-sig"),
     lambda ds: ds["loss"].values.tolist() == [1.0, 2.0, 3.0, 4.0]),
    ("CRLF line ends", lambda t: plain(t, "block,loss\r\na,1\r\na,2\r\nb,3\r\nb,4\r\n"),
     lambda ds: ds["block"].values.tolist() == ["a", "a", "b", "b"]),
    ("'NA' and spaces are labels", lambda t: plain(t, "block,loss\nNA,1\nNA,2\n x ,3\n x ,4\n"),
     lambda ds: sorted(set(ds["block"].values.tolist())) == [" x ", "NA"]),
    ("quoted labels with commas", lambda t: plain(t, 'block,loss\n"a,b",1\n"a,b",2\nc,3\nc,4\n'),
     lambda ds: "a,b" in ds["block"].values),
    ("non-ASCII labels", lambda t: plain(t, "block,loss\nÉcole,1\nÉcole,2\n日本,3\n日本,4\n"),
     lambda ds: "日本" in ds["block"].values),
    ("bayescv CSV with BOM and an empty label", lambda t: read_table(
        _bom(_saved_with_empty_label(t))),
     lambda ds: "" in ds["block"].values),
    ("float32 level", lambda t: cv_intervals(table(), level=np.float32(0.9)),
     lambda ds: abs(ds.attrs["level"] - 0.9) < 1e-7),
    ("0-d array level", lambda t: cv_intervals(table(), level=np.array(0.8)),
     lambda ds: ds.attrs["level"] == 0.8),
    ("int64 block labels", lambda t: from_arrays(LOSSES, np.array(BLOCKS, dtype=np.int64)),
     lambda ds: ds["block"].dtype == np.int64),
    ("shift: float32 min_ess_fraction", lambda t: shift.importance_weighted_risk(
        L, W, min_ess_fraction=np.float32(0.1)), lambda ds: ds.attrs["min_ess_fraction"] > 0),
    ("shift: one method as a string", lambda t: shift.target_risk_intervals(L, W, methods="iw"),
     lambda ds: ds["method_name"].values.tolist() == ["iw"]),
    ("losses of 1e150", lambda t: cv_intervals(from_arrays(np.linspace(1, 2, 6) * 1e150, BLOCKS),
                                               "all"),
     lambda ds: bool((np.isfinite(ds["upper"]) | (ds["flag"] != "")).all())),
]  # fmt: skip


def _saved_with_empty_label(tmp: Path) -> Path:
    path = tmp / "headed.csv"
    to_csv(from_arrays([1.0, 2, 3, 4], ["", "", "b", "b"]), path)
    return path


def _bom(path: Path) -> Path:
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    return path


@pytest.mark.parametrize(
    ("call", "check"), [a[1:] for a in ACCEPTED], ids=[a[0] for a in ACCEPTED]
)
def test_accepted(call, check, tmp_path):
    assert check(call(tmp_path))
