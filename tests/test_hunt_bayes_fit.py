"""Defects found by a new-user pass over ``bayescv.bayes.fit`` on users' own loss tables.

Each test reproduces one defect with default arguments (the default sampler). Reference
values: a 0-1 loss lies in [0, 1] (:func:`bayescv.losses.effective_range`, which the
closed-form intervals already use), and a warning points at the caller's line
(``warnings.warn``'s `stacklevel`).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from bayescv.losses import from_arrays, to_netcdf

pytest.importorskip("arviz")


def _binary_replicates(seed=2, reps=5):
    rng = np.random.default_rng(seed)
    block = np.repeat(np.arange(6), [30, 40, 50, 20, 35, 45])
    errors = (rng.random((reps, block.size)) < 0.02).astype(float)
    return from_arrays(
        errors, np.broadcast_to(block, errors.shape), scheme="source", replicate_kind="independent"
    )


def test_gaussian_fit_of_a_zero_one_table_keeps_its_bounds_in_the_unit_interval():
    # Before: independent replicates of a 0-1 table without a declared range go to the normal
    # model (likelihood="auto"); the range recorded was loss_range's (-inf, inf), so the
    # new_source interval reached -0.019 and was not flagged, where cv_intervals keeps every
    # bound of the same table in [0, 1].
    from bayescv.bayes import fit, posterior_intervals

    idata = fit(_binary_replicates(), random_state=0)
    assert idata.sample_stats.attrs["likelihood"] == "gaussian"
    ci = posterior_intervals(idata)
    assert (ci["lower"].values >= 0).all()
    assert (ci["upper"].values <= 1).all()
    row = ci.sel(method_name="bayes_new_source")
    assert "truncated_to_range" in str(row["flag"].values)


def test_binomial_sampling_warning_points_at_the_callers_line():
    # Before: the binomial path has one more private frame (_fit_binomial), so the
    # SamplingWarning of a short 0-1 fit pointed at bayescv/bayes/fit.py, not at the caller.
    from bayescv.bayes import SamplingWarning, fit

    rng = np.random.default_rng(6)
    table = from_arrays((rng.random(240) < 0.2).astype(float), np.repeat(np.arange(6), 40))
    with pytest.warns(SamplingWarning) as record:
        fit(table, draws=30, tune=30, random_state=0)
    assert {w.filename for w in record if w.category is SamplingWarning} == {__file__}


def _squared_table(seed=3):
    rng = np.random.default_rng(seed)
    sizes = [30, 40, 50, 20, 35]
    block = np.repeat([f"s{i}" for i in range(5)], sizes)
    losses = rng.normal(1.0, 0.3, block.size) ** 2
    return from_arrays(losses, block, scheme="source", loss_name="squared"), rng


def _resampled_rows(block, rng, reps):
    """Rows of `reps` bootstrap replicates that resample each block's points (CVS)."""
    labels = np.unique(block)
    return np.stack(
        [
            np.concatenate(
                [rng.choice(np.flatnonzero(block == b), (block == b).sum()) for b in labels]
            )
            for _ in range(reps)
        ]
    )


def test_bootstrap_table_that_names_no_loss_is_accepted():
    # Before: bootstrap replicates built with from_arrays (loss_name "unknown", its default)
    # were refused as "of another loss ('unknown') than the observed table ('squared')".
    from bayescv.bayes import fit

    table, rng = _squared_table()
    block = table["block"].values
    idx = _resampled_rows(block, rng, reps=20)
    boot = from_arrays(
        table["loss"].values[idx],
        np.broadcast_to(block, idx.shape),
        index=idx,
        scheme="source",
        replicate_kind="bootstrap",
    )
    idata = fit(table, bootstrap=boot, random_state=0)
    assert idata.sample_stats.attrs["replicate_kind"] == "bootstrap"


def _cli_files(tmp_path):
    """A plain observed CSV (column ``school``) and its bootstrap replicates in three files."""
    table, rng = _squared_table(seed=4)
    block, losses = table["block"].values, table["loss"].values
    pd.DataFrame({"school": block, "loss": losses}).to_csv(tmp_path / "obs.csv", index=False)
    reps = 20
    idx = _resampled_rows(block, rng, reps)
    boot = losses[idx] * rng.normal(1.0, 0.05, (reps, 1))
    plain = pd.DataFrame(
        {"replicate": np.repeat(np.arange(reps), idx.shape[1]), "school": np.tile(block, reps)}
    )
    plain["loss"], plain["index"] = boot.ravel(), idx.ravel()
    plain.to_csv(tmp_path / "boot_plain.csv", index=False)
    described = from_arrays(
        boot,
        np.broadcast_to(block, idx.shape),
        index=idx,
        scheme="source",
        replicate_kind="bootstrap",
        loss_name="squared",  # as bayescv.bootstrap_cv_losses records it
    )
    to_netcdf(described, tmp_path / "boot.nc")


@pytest.mark.parametrize(
    "boot",
    [
        # Before: --scheme was not applied to the bootstrap file, which was read as random
        # K-fold and refused as "of another CV scheme ('random')".
        "boot_plain.csv",
        # Before: --block-col school was applied to the self-describing NetCDF, refused with
        # "the block column 'school' is not one of them"; and once read, its loss name
        # 'squared' was refused against the plain CSV's column name 'loss'.
        "boot.nc",
    ],
)
def test_cli_reads_the_bootstrap_file_as_it_reads_the_losses(tmp_path, capsys, boot):
    from bayescv.cli import main

    _cli_files(tmp_path)
    argv = ["bayes", str(tmp_path / "obs.csv"), "--block-col", "school", "--scheme", "source"]
    assert main([*argv, "--bootstrap", str(tmp_path / boot), "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["intervals"]) == {"bayes_expected_cv", "bayes_ose", "bayes_new_source"}


def test_cli_takes_a_bayescv_csv_of_another_loss_name_beside_a_plain_csv(tmp_path, capsys):
    # Before: a plain CSV's loss name is its loss column's ('loss'); bootstrap replicates
    # written by bayescv.to_csv as bootstrap_cv_losses names them ('squared') were refused
    # as "of another loss ('squared') than the observed table ('loss')".
    from bayescv.cli import main
    from bayescv.losses import read_table, to_csv

    _cli_files(tmp_path)
    frame = pd.read_csv(tmp_path / "obs.csv").rename(columns={"school": "block"})
    frame.to_csv(tmp_path / "obs_block.csv", index=False)
    to_csv(read_table(tmp_path / "boot.nc"), tmp_path / "boot.csv")
    argv = ["bayes", str(tmp_path / "obs_block.csv"), "--scheme", "source", "--format", "json"]
    assert main([*argv, "--bootstrap", str(tmp_path / "boot.csv")]) == 0
    assert json.loads(capsys.readouterr().out)["diagnostics"]["problems"] == ""


@pytest.mark.parametrize(
    ("losses", "hint"),
    [(np.zeros(4), "from_arrays"), (pd.DataFrame({"loss": [0.0, 1.0]}), "from_frame")],
)
def test_fit_of_something_else_than_a_loss_table_names_the_builders(losses, hint):
    # Before: an array gave AttributeError "'numpy.ndarray' object has no attribute 'attrs'",
    # a DataFrame "scheme must be one of ('source', 'random'), got None".
    from bayescv.bayes import fit

    with pytest.raises(TypeError, match=f"loss table \\(xarray.Dataset\\).*{hint}"):
        fit(losses)


def test_cli_says_to_pass_the_scheme_the_bootstrap_file_records(tmp_path, capsys):
    # A plain losses CSV without --scheme is read as random K-fold; the NetCDF replicates
    # record leave-one-source-out. Refused before too, but by the fit, without the way out.
    from bayescv.cli import main

    _cli_files(tmp_path)
    argv = ["bayes", str(tmp_path / "obs.csv"), "--block-col", "school"]
    assert main([*argv, "--bootstrap", str(tmp_path / "boot.nc")]) == 2
    err = capsys.readouterr().err
    assert "holds replicates of 'source' CV" in err
    assert err.strip().endswith("pass --scheme source")


def test_cli_states_the_level_unrounded(tmp_path, capsys):
    # --level 0.975 printed "98% intervals".
    from bayescv.cli import main

    _cli_files(tmp_path)
    argv = ["bayes", str(tmp_path / "obs.csv"), "--block-col", "school", "--scheme", "source"]
    assert main([*argv, "--bootstrap", str(tmp_path / "boot.nc"), "--level", "0.975"]) == 0
    assert "97.5% intervals" in capsys.readouterr().out
