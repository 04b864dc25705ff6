"""Estimates kept in the loss range, elpd pair blocks read by attribute, and no ``-0`` se.

Reference values are exact: clipping to ``[low, high]`` (an estimate inside stays, one outside
goes to the nearer end); a table of constant losses has every variance estimate exactly 0,
so its θ^ω = μ̂² − s2 (Geras & Sutton 2013, Table 1) is 0 with a positive sign, as is every se.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from bayescv import intervals
from bayescv.classical import cv_intervals, variance_estimates
from bayescv.cli import main
from bayescv.learner_comparison import compare_learners
from bayescv.losses import from_arrays, from_elpd, read_table, to_csv, to_netcdf

OUT = "estimate_outside_range"


# ----------------------------------------------------------------- move_into_range
def test_move_into_range_moves_only_estimates_outside_and_flags_them():
    moved, flag = intervals.move_into_range([-0.5, 0.0, 0.3, 1.0, 1.7, np.nan], (0.0, 1.0))
    np.testing.assert_array_equal(moved, [0.0, 0.0, 0.3, 1.0, 1.0, np.nan])
    assert flag.tolist() == [OUT, "", "", "", OUT, ""]  # NaN stays NaN, unflagged


def test_move_into_range_keeps_the_shape_of_a_2d_input():
    estimate = np.array([[-1.0, 0.5], [2.0, np.nan]])
    moved, flag = intervals.move_into_range(estimate, (0.0, 1.0))
    assert moved.shape == flag.shape == (2, 2)
    np.testing.assert_array_equal(moved, [[0.0, 0.5], [1.0, np.nan]])
    assert flag.tolist() == [[OUT, ""], [OUT, ""]]


@pytest.mark.parametrize("bounds", [(-np.inf, np.inf), (0.0, np.inf), (-np.inf, 0.0)])
def test_move_into_range_never_moves_towards_an_infinite_end(bounds):
    estimate = np.array([-np.inf, -1e300, 0.0, 1e300, np.inf])
    moved, flag = intervals.move_into_range(estimate, bounds)
    low, high = bounds
    keep = (estimate >= low) & (estimate <= high)
    np.testing.assert_array_equal(moved[keep], estimate[keep])
    assert (flag[keep] == "").all()
    if np.isinf(low) and np.isinf(high):
        assert keep.all()  # no range: nothing moves, nothing is flagged
    else:  # only the finite end moves anything
        assert set(moved[~keep]) == {0.0}
        assert (flag[~keep] == OUT).all()


def test_move_into_range_of_a_scalar_is_a_0d_array():
    moved, flag = intervals.move_into_range(1.5, (0.0, 1.0))
    assert moved.shape == flag.shape == ()
    assert float(moved) == 1.0
    assert str(flag) == OUT


# ----------------------------------------------------- elpd pair blocks, by attribute
def _pair_tables(seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    return {n: from_elpd(rng.normal(-1.0, 0.5, 40), blocks="pairs") for n in ("c", "nc")}


def test_from_elpd_marks_its_block_kind():
    assert _pair_tables()["c"].attrs["block_kind"] == "point_pairs"
    folds = from_elpd(np.full(6, -1.0), blocks=[0, 0, 1, 1, 2, 2])
    assert folds.attrs["block_kind"] == "given"


@pytest.mark.parametrize("fmt", ["nc", "csv"])
def test_pair_tables_read_back_from_a_file_still_get_naive_points_only(tmp_path, fmt):
    stored = {}
    for name, table in _pair_tables().items():
        path = tmp_path / f"{name}.{fmt}"
        (to_netcdf if fmt == "nc" else to_csv)(table, path)
        stored[name] = read_table(path)
        assert stored[name].attrs["block_kind"] == "point_pairs"
    assert compare_learners(stored)["method"].values.tolist() == ["naive_points"]
    assert compare_learners(stored, methods="all")["method"].values.tolist() == ["naive_points"]
    with pytest.raises(ValueError, match="consecutive pairs of points"):
        compare_learners(stored, methods=["naive_folds"])


def test_compare_learners_reads_the_block_kind_not_the_prose():
    tables = _pair_tables()
    for table in tables.values():
        table.attrs["blocks"] = "pairs"  # prose reworded: the attribute still says pairs
    assert compare_learners(tables, methods="all")["method"].values.tolist() == ["naive_points"]


def test_a_pair_table_stored_before_block_kind_keeps_its_protection(tmp_path):
    stored = {}
    for name, table in _pair_tables().items():
        table.attrs.pop("block_kind")  # as written by the version without the attribute
        path = tmp_path / f"{name}.nc"
        to_netcdf(table, path)
        stored[name] = read_table(path)
    assert compare_learners(stored, methods="all")["method"].values.tolist() == ["naive_points"]


def test_fold_blocks_from_elpd_get_the_fold_methods():
    rng = np.random.default_rng(2)
    folds = np.repeat(np.arange(5), 8)
    tables = {n: from_elpd(rng.normal(-1.0, 0.5, 40), blocks=folds) for n in ("c", "nc")}
    methods = set(compare_learners(tables, methods="all")["method"].values)
    assert {"naive_points", "naive_folds", "correlated_t"} <= methods


# -------------------------------------------------------------- no negative-zero se
def _constant_csv(tmp_path):
    path = tmp_path / "constant.csv"
    frame = pd.DataFrame({"fold": np.repeat(np.arange(5), 8), "err": np.full(40, 2.5)})
    frame.to_csv(path, index=False)
    return path


def test_constant_losses_give_positive_zero_theta_omega_and_se():
    table = from_arrays(np.full(40, 2.5), np.repeat(np.arange(5), 8))
    theta = variance_estimates(table)["theta"]
    assert float(theta.sel(estimator="theta_omega")) == 0.0
    assert not np.signbit(theta.values).any(), theta.to_series()
    se = cv_intervals(table, methods="all")["se"]
    assert not np.signbit(se.values).any(), se.to_series()


def test_variance_cli_prints_no_negative_se(tmp_path, capsys):
    path = _constant_csv(tmp_path)
    argv = ["variance", str(path), "--block-col", "fold", "--loss-col", "err", "--methods", "all"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(
        i
        for i, line in enumerate(lines)
        if line.split()[:4] == ["estimate", "lower", "upper", "se"]
    )
    end = lines[header].index(" se ") + len(" se")  # pandas right-aligns the numbers
    rows = [line for line in lines[header + 2 :] if line.strip()][:16]
    assert any(line.startswith("theta_omega ") for line in rows)
    for line in rows:
        se = line[:end].split()[-1]
        assert not se.startswith("-"), line
        assert float(se) >= 0, line
    argv += ["--format", "json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert not np.signbit(out["theta_omega"]), out["theta_omega"]
