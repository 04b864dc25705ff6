"""The Bayesian model on the inputs and options users bring, with the default sampler.

Each test reproduces a defect found by a new-user pass over ``bayescv.bayes`` and
``bayescv bayes``. Reference values: the mid-p predictive p-value P(T_rep > T_obs) +
½ P(T_rep = T_obs) recomputed from the replicated draws; joblib's ``effective_n_jobs``.
"""

from __future__ import annotations

import json

import matplotlib
import numpy as np
import pytest

import bayescv
from bayescv.bayes import fit, plot_ppc, predictive_check
from bayescv.bayes.checks import replicated_statistics
from bayescv.cli import main
from bayescv.losses import from_arrays, read_table, to_csv, to_netcdf

pytest.importorskip("pymc")
matplotlib.use("Agg")

BLOCKS = np.repeat(np.arange(5), 30)


def _gamma_table(scheme="random"):
    return from_arrays(np.random.default_rng(0).gamma(2, 1, 150), BLOCKS, scheme=scheme)


def test_n_jobs_has_joblibs_meaning_and_chains_need_two():
    table = _gamma_table()
    reference = fit(table, random_state=0, n_jobs=1)
    every_cpu = fit(table, random_state=0, n_jobs=-1)  # crashed inside nutpie before
    np.testing.assert_array_equal(
        reference.posterior["expected_cv"].values, every_cpu.posterior["expected_cv"].values
    )
    for bad in (0, 1.5, True):  # 0 hung forever; 1.5 failed inside nutpie
        with pytest.raises(ValueError, match="n_jobs must be a non-zero integer"):
            fit(table, n_jobs=bad)
    with pytest.raises(ValueError, match="chains must be at least 2"):
        fit(table, chains=1)


@pytest.mark.parametrize("scheme", ["random", "source"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_perfect_classifier_fits_without_a_sampling_warning(scheme, seed):
    # The default path: 0 errors in 400 points over 8 blocks (divergences at the old 0.95
    # in 5 of 6 such fits under random K-fold). filterwarnings=error makes a
    # SamplingWarning fail this test.
    table = from_arrays(np.zeros(400), np.repeat(np.arange(8), 50), scheme=scheme)
    idata = fit(table, random_state=seed)
    assert idata.sample_stats.attrs["divergences"] == 0
    assert idata.sample_stats.attrs["problems"] == ""


def test_predictive_p_values_of_counts_are_mid_p():
    losses = np.zeros(400)
    losses[350:360] = 1  # all ten errors in block 7; the other blocks have none
    idata = fit(from_arrays(losses, np.repeat(np.arange(8), 50), scheme="random"),
                random_state=0)  # fmt: skip
    check = predictive_check(idata)
    rep = replicated_statistics(idata, "posterior")["mean"][:, 0]
    expected = (rep > 0).mean() + 0.5 * (rep == 0).mean()  # block 0: no errors
    assert check["p_value"].values[0] == pytest.approx(expected)
    assert check["p_value"].values[0] < 1  # P(T_rep ≥ 0) would be 1: read as misfit
    assert check["p_value"].sel(check="mean[7]") < 0.05  # the concentrated errors stand out
    with pytest.raises(ValueError, match="level must be a number in"):
        predictive_check(idata, level=1.5)


def test_predictive_plot_names_folds_under_random_kfold():
    axes = plot_ppc(fit(_gamma_table("random"), random_state=0))
    assert axes[0].get_title() == "mean loss per fold"
    assert axes[2].get_xlabel() == "standard deviation across folds"
    axes = plot_ppc(fit(_gamma_table("source"), random_state=0))
    assert axes[0].get_title() == "mean loss per source"


def _classifier_tables():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] + rng.normal(0, 0.7, 120) > 0).astype(int)
    groups = np.repeat(np.arange(6), 20)
    kw = {"groups": groups, "random_state": 0}
    observed = bayescv.cross_val_losses(LogisticRegression(), X, y, loss="zero_one", **kw)
    boot = bayescv.bootstrap_cv_losses(LogisticRegression(), X, y, loss="brier",
                                       n_bootstrap=3, **kw)  # fmt: skip
    return observed, boot


def test_bootstrap_of_another_loss_is_refused():
    observed, boot_brier = _classifier_tables()
    with pytest.raises(ValueError, match=r"another loss.*set table.attrs\['loss_name'\]"):
        fit(observed, bootstrap=boot_brier)


def test_a_table_read_from_netcdf_writes_to_csv(tmp_path):
    observed, _ = _classifier_tables()
    to_netcdf(observed, tmp_path / "t.nc")
    to_csv(read_table(tmp_path / "t.nc"), tmp_path / "t.csv")  # loss_range came back an array
    assert read_table(tmp_path / "t.csv").identical(read_table(tmp_path / "t.nc"))


def test_cli_takes_bootstrap_replicates_and_labels_random_kfold_targets(tmp_path, capsys):
    table = _gamma_table("random")
    rng = np.random.default_rng(1)
    boot = bayescv.losses.stack_replicates(
        [from_arrays(rng.gamma(2, 1, 150), BLOCKS, scheme="random") for _ in range(5)],
        replicate_kind="bootstrap",
    )
    to_netcdf(table, tmp_path / "t.nc")
    to_netcdf(boot, tmp_path / "b.nc")
    assert main(["bayes", str(tmp_path / "t.nc"), "--bootstrap", str(tmp_path / "b.nc")]) == 0
    out = capsys.readouterr().out
    assert "expected_cv: the CV error of these folds)" in out  # no ose/new_source legend
    assert "ose:" not in out
    assert main(["bayes", str(tmp_path / "t.nc"), "--format", "json"]) == 0
    no_boot = json.loads(capsys.readouterr().out)
    assert main(["bayes", str(tmp_path / "t.nc"), "--bootstrap", str(tmp_path / "b.nc"),
                 "--format", "json"]) == 0  # fmt: skip
    with_boot = json.loads(capsys.readouterr().out)
    assert with_boot["intervals"] != no_boot["intervals"]  # the replicates were used


def test_cli_reads_a_plain_csv_with_repeated_runs(tmp_path, capsys):
    rng = np.random.default_rng(2)
    lines = ["loss,block,replicate"]
    lines += [f"{rng.gamma(2, 1):.6f},{b},{r}" for r in range(2) for b in BLOCKS]
    (tmp_path / "runs.csv").write_text("\n".join(lines) + "\n")
    assert main(["bayes", str(tmp_path / "runs.csv")]) == 2
    assert "--replicate-kind" in capsys.readouterr().err
    assert main(["bayes", str(tmp_path / "runs.csv"), "--replicate-kind", "repeat"]) == 0


@pytest.mark.parametrize("seed", [0, 1])
def test_a_tie_on_one_data_set_does_not_make_the_model_over_data_sets_diverge(seed):
    # Two learners equal on every fold of one data set (its variance is replaced by a small
    # stand-in): at the old default target_accept 0.9, 3 of 4 fits diverged (seeds 0-3).
    from bayescv.bayes import compare_datasets

    x = np.random.default_rng(0).normal(0.02, 0.03, size=(6, 10))
    x[2] = 0.0
    with pytest.warns(UserWarning, match="zero variance") as record:
        res = compare_datasets(x, rope=0.01, random_state=seed)
    assert all("did not converge" not in str(w.message) for w in record)
    assert res.attrs["divergences"] == 0
    assert res.attrs["target_accept"] == 0.99


def test_a_fit_of_one_table_that_did_not_converge_points_to_the_bootstrap():
    # ess_min above any attainable ESS forces the warning: its advice is the point here.
    table = _gamma_table("source")
    with pytest.warns(
        bayescv.bayes.SamplingWarning, match=r"bootstrap=bayescv\.bootstrap_cv_losses"
    ):
        fit(table, random_state=0, ess_min=1e9)
    rng = np.random.default_rng(3)
    boot = bayescv.losses.stack_replicates(
        [from_arrays(rng.gamma(2, 1, 150), BLOCKS, scheme="source") for _ in range(5)],
        replicate_kind="bootstrap",
    )
    with pytest.warns(bayescv.bayes.SamplingWarning) as caught:
        fit(table, bootstrap=boot, random_state=0, ess_min=1e9)
    assert "bootstrap" not in str(caught[0].message)  # replicates were given


def test_cli_passes_target_accept_to_the_fit(tmp_path, capsys):
    to_netcdf(_gamma_table(), tmp_path / "t.nc")
    assert main(["bayes", str(tmp_path / "t.nc"), "--target-accept", "1.5"]) == 2
    assert "--target-accept must be in (0, 1), got 1.5" in capsys.readouterr().err
    assert main(["bayes", str(tmp_path / "t.nc"), "--target-accept", "0.9", "--format",
                 "json"]) == 0  # fmt: skip
    payload = json.loads(capsys.readouterr().out)
    assert payload["diagnostics"]["target_accept"] == 0.9


def test_the_ess_message_lists_only_the_sizes_that_fall_short():
    from bayescv.bayes._diagnostics import ess_problem

    # "ESS bulk 113, tail 595 < 400" read as if the tail ESS failed too.
    assert ess_problem(113, 595, 400, names=("gamma_sd", "tau")) == "ESS bulk 113 (gamma_sd) < 400"
    assert ess_problem(113, 350, 400) == "ESS bulk 113, tail 350 < 400"
    assert ess_problem(500, 401, 400) == ""
    with pytest.warns(bayescv.bayes.SamplingWarning, match=r"ESS bulk \d+ \(\w+\), tail"):
        fit(_gamma_table(), random_state=0, ess_min=1e9)


def test_cli_warning_names_the_commands_options(monkeypatch, tmp_path, capsys):
    # The Python advice (target_accept, fit(..., bootstrap=...)) is no option of the command.
    real_fit = bayescv.bayes.fit
    monkeypatch.setattr(bayescv.bayes, "fit", lambda *a, **k: real_fit(*a, **k, ess_min=1e9))
    to_netcdf(_gamma_table("source"), tmp_path / "t.nc")
    assert main(["bayes", str(tmp_path / "t.nc")]) == 0
    err = capsys.readouterr().err
    assert "--draws, --tune or a higher --target-accept" in err
    assert "--bootstrap FILE" in err
    assert "fit(" not in err
    assert "target_accept" not in err


def test_diagnostics_name_the_block_of_a_per_block_problem():
    # On STAR one school (30) held the whole problem; "(gamma_sd)" did not say which.
    import xarray as xr

    from bayescv.bayes._diagnostics import _element

    ess = xr.Dataset(
        {"gamma_sd": ("block", [5000.0, 200.0, 4000.0]), "tau": ((), 1200.0)},
        coords={"block": ["a", "school 30", "c"]},
    )
    assert _element(ess, "gamma_sd", np.nanargmin) == "gamma_sd of block school 30"
    assert _element(ess, "gamma_sd", np.nanargmax) == "gamma_sd of block a"
    assert _element(ess, "tau", np.nanargmin) == "tau"
    table = _gamma_table("source")
    with pytest.warns(
        bayescv.bayes.SamplingWarning, match=r"ESS bulk \d+ \(\w+( of block \w+)?\)"
    ):
        idata = fit(table, random_state=0, ess_min=1e9)
    assert idata.sample_stats.attrs["worst"] in {"mu0", "tau", "nu", "gamma_sd", "rho", "theta",
                                                 "expected_cv", "new_source"}  # fmt: skip
