import json
import warnings

import numpy as np
import pytest
import xarray as xr

from bayescv.compare import (
    BatesLogistic,
    Method,
    check_design,
    decompose,
    monte_carlo_truths,
    register_method,
    run_study,
    summarize,
    summary_table,
    unregister_method,
)


def toy_study(design: str = "sources_fixed") -> xr.Dataset:
    """Four replicates, two methods, one per-replicate truth; values chosen by hand."""
    rm = ("replicate", "method_name")
    nan = np.nan
    return xr.Dataset(
        {
            "lower": (rm, [[0.25, 0.10], [0.44, 0.20], [0.44, nan], [0.50, 0.30]]),
            "upper": (rm, [[0.35, 0.50], [0.55, 0.60], [0.55, nan], [0.58, 0.70]]),
            "estimate": (rm, [[0.30, 0.30], [0.50, 0.40], [0.50, nan], [0.54, 0.50]]),
            "theta_hat": (rm, [[0.01, 0.04], [0.01, 0.04], [0.01, 0.04], [0.02, 0.04]]),
            "runtime": (rm, [[0.001, 0.5], [0.001, 0.5], [0.003, 0.5], [0.001, 0.5]]),
            "flag": (rm, [["", ""], ["", ""], ["", "error: X"], ["", ""]]),
            "truth": (("replicate", "target"), [[0.30], [0.40], [0.50], [0.60]]),
            "mu_hat": ("replicate", [0.30, 0.50, 0.50, 0.54]),
        },
        coords={
            "replicate": np.arange(4),
            "method_name": ["naive_points", "wide"],
            "target": ["err_xy"],
            "method_target": ("method_name", ["err_xy", "ose"]),
            "method_cost": ("method_name", ["losses", "refit"]),
            "design": ("replicate", [design] * 4),
            "scheme": ("replicate", ["source"] * 4),
        },
        attrs={"level": 0.9, "scenario": "toy"},
    )


def test_coverage_against_hand_computed_values():
    s = summarize(toy_study())
    cov = s.sel(method_name="naive_points")
    # err_xy (per replicate): covered in replicates 0 and 2; 1: truth 0.40 < lower 0.44
    # (miss high); 3: truth 0.60 > upper 0.58 (miss low). MC s.e. sqrt(p(1 − p)/R).
    e = cov.sel(target="err_xy")
    assert e["coverage"].item() == 0.5
    assert e["coverage_se"].item() == pytest.approx(0.25)
    assert e["miss_high"].item() == 0.25
    assert e["miss_low"].item() == 0.25
    assert e["miss_high_se"].item() == pytest.approx(np.sqrt(0.25 * 0.75 / 4))
    # err = mean err_xy = 0.45: low miss in 0 (upper 0.35), high in 3 (lower 0.50)
    e = cov.sel(target="err")
    assert (e["coverage"].item(), e["miss_high"].item(), e["miss_low"].item()) == (0.5, 0.25, 0.25)
    # expected_cv = mean μ̂ = 0.46: covered in 1 and 2 only
    assert cov["coverage"].sel(target="expected_cv").item() == 0.5
    # "wide" is undefined in replicate 2: coverage over the 3 defined replicates
    wide = s.sel(method_name="wide")
    assert wide["coverage"].sel(target="err_xy").item() == 1.0
    assert wide["n_valid"].sel(target="err_xy").item() == 3
    assert wide["undefined"].item() == 0.25
    assert wide["n_errors"].item() == 1
    # widths: naive 0.10, 0.11, 0.11, 0.08; wide 0.4 (ratios 4, 40/11, 5 where defined)
    assert cov["mean_width"].item() == pytest.approx(0.1)
    assert wide["width_ratio"].item() == pytest.approx((4 + 40 / 11 + 5) / 3)
    # estimate − err_xy: 0, 0.1, 0, −0.06
    assert cov["estimate_bias"].item() == pytest.approx(0.01)
    assert json.loads(s.attrs["truths"]) == pytest.approx({"err": 0.45, "expected_cv": 0.46})


def test_theta_bias_against_hand_computed_values():
    s = summarize(toy_study())
    # true θ = sample variance of μ̂ = (0.16² + 0.04² + 0.04² + 0.08²)/3
    v = (0.0256 + 0.0016 + 0.0016 + 0.0064) / 3
    assert s["theta_true"].item() == pytest.approx(v)
    naive = s.sel(method_name="naive_points")
    assert naive["theta_bias"].item() == pytest.approx(0.0125 - v)
    assert naive["theta_rel_bias"].item() == pytest.approx(0.0125 / v - 1)
    th = np.array([0.01, 0.01, 0.01, 0.02])
    assert naive["theta_rmse"].item() == pytest.approx(np.sqrt(np.mean((th - v) ** 2)))
    # influence-function s.e.: sd of θ̂_r − (μ̂_r − mean)² R/(R − 1), over sqrt(R)
    z = th - np.array([0.0256, 0.0016, 0.0016, 0.0064]) * 4 / 3
    assert naive["theta_bias_se"].item() == pytest.approx(z.std(ddof=1) / 2)


def test_theta_bias_over_the_replicates_where_the_method_gave_a_theta():
    # naive_points' θ̂ fails in replicate 1: its bias is over replicates 0, 2, 3, against
    # (μ̂_r − mean)² R/(R − 1) over the same replicates (mean over all four, 0.46).
    study = toy_study()
    study["theta_hat"][1, 0] = np.nan
    naive = summarize(study).sel(method_name="naive_points")
    d = np.array([0.0256, 0.0016, 0.0064]) * 4 / 3  # replicates 0, 2, 3
    th = np.array([0.01, 0.01, 0.02])
    assert naive["theta_n_valid"].item() == 3
    assert naive["theta_bias"].item() == pytest.approx(th.mean() - d.mean())
    assert naive["theta_rel_bias"].item() == pytest.approx(th.mean() / d.mean() - 1)
    assert naive["theta_bias_se"].item() == pytest.approx((th - d).std(ddof=1) / np.sqrt(3))
    assert summarize(toy_study())["theta_n_valid"].sel(method_name="naive_points").item() == 4


def test_design_rules():
    fixed = toy_study("sources_fixed")
    with pytest.raises(ValueError, match="not meaningful under design 'sources_fixed'"):
        summarize(fixed, targets=["ose"])
    redrawn = toy_study("sources_redrawn")
    assert "expected_cv" not in summarize(redrawn)["target"].values
    with pytest.raises(ValueError, match="not meaningful"):
        summarize(redrawn, targets=["expected_cv"])
    with pytest.raises(ValueError, match="no truth for"):
        summarize(redrawn, targets=["ose"])  # the toy study has no ose_xy
    mixed = xr.concat([fixed, redrawn.assign_coords(replicate=np.arange(4, 8))], "replicate")
    with pytest.raises(ValueError, match="mixes designs"):
        summarize(mixed)
    assert check_design(fixed) == ("sources_fixed", "source")


def test_known_truths_replace_monte_carlo_ones():
    s = summarize(toy_study(), truths={"err": 0.7}, targets=["err"])
    # 0.7 lies above every naive interval: all low misses
    assert s["miss_low"].sel(method_name="naive_points", target="err").item() == 1.0
    mc = monte_carlo_truths(toy_study())
    assert mc["truth"].sel(target="err").item() == pytest.approx(0.45)
    assert mc["truth_se"].sel(target="err").item() == pytest.approx(
        np.std([0.3, 0.4, 0.5, 0.6], ddof=1) / 2
    )


def test_summary_table_text():
    text = summary_table(summarize(toy_study()))
    assert "50.0 ± 25.0" in text  # naive_points coverage of its target err_xy
    assert "n/a" in text  # "wide" declares ose, not meaningful with the sources fixed
    assert "coverage % of every target" in text


def _always_fails(context, names):
    raise RuntimeError("boom")


def test_a_method_that_failed_on_every_replicate_summarizes_without_warnings():
    # Its estimates are all NaN while naive_points has finite ones: a mean over no value
    # ("Mean of empty slice") must not warn, the CLI would print it.
    register_method(Method("always_fails", _always_fails, "err_xy", "losses"))
    try:
        study = run_study(BatesLogistic(n=40, p=3, n_splits=4),
                          methods=["naive_points", "always_fails"], n_replicates=3,
                          random_state=0, error_score=np.nan)  # fmt: skip
    finally:
        unregister_method("always_fails")
    assert np.isnan(study["estimate"].sel(method_name="always_fails")).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = summarize(study)
        text = summary_table(s)
    failed = s.sel(method_name="always_fails")
    assert np.isnan(failed["estimate_bias"].item())
    assert np.isnan(failed["mean_width"].item())
    assert np.isnan(failed["coverage"]).all()
    assert failed["undefined"].item() == 1.0
    assert failed["n_errors"].item() == 3
    assert np.isfinite(s["estimate_bias"].sel(method_name="naive_points").item())
    assert "always_fails" in text


def _block_study(sigma2, omega, gamma, K=3, M=4, R=3000, seed=0):
    """Losses with Var e = σ², Cov within a block ω, across blocks γ (Geras & Sutton 2013, §2)."""
    rng = np.random.default_rng(seed)
    shared = rng.normal(0, np.sqrt(gamma), (R, 1, 1))
    block = rng.normal(0, np.sqrt(omega - gamma), (R, K, 1))
    e = 0.3 + shared + block + rng.normal(0, np.sqrt(sigma2 - omega), (R, K, M))
    S = e.sum(axis=2)
    W = ((e - e.mean(axis=2, keepdims=True)) ** 2).sum(axis=2)
    rb = ("replicate", "block")
    return xr.Dataset(
        {
            "block_S": (rb, S), "block_W": (rb, W), "block_n": (rb, np.full((R, K), float(M))),
            "block_label": (rb, np.tile(np.array(["a", "b", "c"]), (R, 1))),
            "mu_hat": ("replicate", S.sum(axis=1) / (K * M)),
        },
        coords={"design": ("replicate", ["iid"] * R), "scheme": ("replicate", ["random"] * R)},
    )  # fmt: skip


def test_decomposition_recovers_known_moments():
    study = _block_study(1.0, 0.3, 0.1)
    dec = decompose(study)
    assert dec["sigma2_mean"].item() == pytest.approx(1.0, abs=0.05)
    assert dec["omega_mean"].item() == pytest.approx(0.3, abs=0.04)
    assert dec["gamma_mean"].item() == pytest.approx(0.1, abs=0.04)
    # the terms add up exactly to the sample variance of μ̂ (an identity)
    total = dec["sigma2_term"] + dec["omega_term"] + dec["gamma_term"]
    assert total.item() == pytest.approx(study["mu_hat"].var(ddof=1).item(), rel=1e-10)
    # and estimate Geras & Sutton (2013, eq. 2): σ²/N + (M − 1)ω/N + (K − 1)γ/K = 0.225
    assert dec["theta"].item() == pytest.approx(1 / 12 + 3 * 0.3 / 12 + 2 * 0.1 / 3, rel=0.1)
    assert dec["block_label"].values.tolist() == ["a", "b", "c"]
    with pytest.raises(ValueError, match="at least 3"):
        decompose(study.isel(replicate=slice(0, 2)))


def test_table_prints_an_exact_bound_where_the_monte_carlo_error_is_zero():
    # "wide" covers err_xy in all 3 defined replicates: sqrt(p(1 − p)/n) is 0 there, so the
    # table prints the one-sided 95 % Clopper–Pearson bound 0.05^(1/3) = 36.8 % (and
    # 1 − 0.05^(1/3) = 63.2 % for its misses), not "100.0 ± 0.0".
    study = toy_study().assign_coords(method_target=("method_name", ["err_xy", "err_xy"]))
    s = summarize(study)
    assert s["coverage_se"].sel(method_name="wide", target="err_xy").item() == 0.0
    row = next(line for line in summary_table(s).splitlines() if line.startswith("wide"))
    assert "100.0 (≥ 36.8)" in row
    assert row.count("0.0 (≤ 63.2)") == 2
    assert "± 0.0" not in row
    naive = next(line for line in summary_table(s).splitlines() if line.startswith("naive_points"))
    assert "50.0 ± 25.0" in naive


def test_stacked_studies_with_repeated_replicate_labels_are_refused():
    # The same study twice would count every replicate twice (coverage se too small by √2).
    study = toy_study()
    stacked = xr.concat([study, study], dim="replicate")
    with pytest.raises(ValueError, match=r"replicate label\(s\) \[0, 1, 2, 3\] appear more"):
        summarize(stacked)
    renumbered = stacked.assign_coords(replicate=np.arange(8))
    assert summarize(renumbered)["n_valid"].sel(method_name="naive_points", target="err_xy") == 8


def test_table_states_the_nominal_level_unrounded():
    # A 97.5 % study read "nominal coverage 98%" (":.0f").
    study = toy_study()
    study.attrs["level"] = 0.975
    assert "nominal coverage 97.5%" in summary_table(summarize(study))
