"""Variance of the importance-weighted risk R_W and of its control-variate version R_β.

Reproduces the message of Kouw & Loog, "A control variate for evaluation under covariate
shift": the variance of the importance-weighted estimate of the target risk grows quickly
with the shift between domains, and the control variate ``β (w - 1)`` takes a growing share
of it away. Run from the repository root::

    python benchmarks/shift_variance.py

Setting: :class:`bayescv.shift.GaussianShift` (source x ~ N(0, 1), target N(δ, 1), label
y = x + ε, a fixed model with slope error 0.5, squared loss), exact density ratios, shifts
δ = 0 ... 1.5 (in units of the common standard deviation). For each shift and sample size
n ∈ {200, 1000}, 4000 independent source samples (one numpy array, replicates × points)
give Monte Carlo (MC) estimates of

* ``n · Var`` of R_W, of R_β with the cross-fitted β̂ (the package default), with the
  plug-in β̂, and with the oracle β* (known coefficient), each with its MC standard error
  ``sqrt((m4 - V²) / R)`` (m4 the fourth central moment over the R replicates);
* the ratio Var(R_β) / Var(R_W), with a delta-method MC error from the paired replicates;
* the bias (mean minus the exact target risk, with its MC error) and the coverage of the
  nominal 95% normal intervals;

against the exact values ``n Var(R_W) = Var_S(l w)`` and ``n Var(R_β*) = Var_S(l w)(1 - ρ²)``.
A smaller arm repeats this with weights *estimated* by the cross-fitted logistic domain
classifier (300 replicates, 200 target points) at three shifts.

Writes ``benchmarks/results/shift_variance.png``, ``.json`` and ``.md``; about a minute and a
half on two cores.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import time
from pathlib import Path
from typing import Any

import matplotlib as mpl

mpl.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import machine_info  # house helpers

from bayescv.shift import (
    GaussianShift,
    control_variate_risk,
    density_ratio_weights,
    importance_weighted_risk,
)

RESULTS = Path(__file__).resolve().parent / "results"
SEED = 20240617
SHIFTS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5)
SIZES = (200, 1000)
REPLICATES = 4000
ESTIMATED_SHIFTS = (0.25, 0.5, 1.0)
ESTIMATED_REPLICATES = 300
ESTIMATED_N, ESTIMATED_TARGET = 200, 200
QUIET = {"min_ess_fraction": 0.0}  # ESS is recorded separately; no warning per replicate
ESTIMATORS = {
    "iw": "R_W (importance weighting)",
    "cv_crossfit": "R_β, cross-fitted β̂ (default)",
    "cv_plugin": "R_β, plug-in β̂",
    "cv_oracle": "R_β, oracle β*",
}


def variance_with_error(est: np.ndarray, n: int) -> tuple[float, float]:
    """n · Var over replicates and its MC standard error sqrt((m4 - V²) / R) · n."""
    centred = est - est.mean()
    var = np.mean(centred**2)
    m4 = np.mean(centred**4)
    return float(n * var * est.size / (est.size - 1)), float(n * np.sqrt((m4 - var**2) / est.size))


def ratio_with_error(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Var(b) / Var(a) and its delta-method MC standard error (paired replicates)."""
    va, vb = a.var(), b.var()
    influence = (b - b.mean()) ** 2 / vb - (a - a.mean()) ** 2 / va
    ratio = vb / va
    return float(ratio), float(ratio * influence.std(ddof=1) / np.sqrt(a.size))


def summarise(ds_list: dict[str, Any], sc: GaussianShift, n: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    truth = sc.target_risk
    iw = ds_list["iw"]["estimate"].values[:, 0]
    for name, ds in ds_list.items():
        est = ds["estimate"].values[:, 0]
        nvar, nvar_se = variance_with_error(est, n)
        covered = (ds["lower"].values[:, 0] <= truth) & (truth <= ds["upper"].values[:, 0])
        entry = {
            "n_var": nvar,
            "n_var_mc_se": nvar_se,
            "bias": float(est.mean() - truth),
            "bias_mc_se": float(est.std(ddof=1) / np.sqrt(est.size)),
            "n_mse": float(n * np.mean((est - truth) ** 2)),
            "mean_n_se2": float(np.mean(ds["se"].values[:, 0] ** 2) * n),
            "coverage": float(covered.mean()),
            "coverage_mc_se": float(np.sqrt(covered.mean() * (1 - covered.mean()) / est.size)),
        }
        if name != "iw":
            entry["ratio_to_iw"], entry["ratio_mc_se"] = ratio_with_error(iw, est)
        out[name] = entry
    return out


def exact_arm() -> list[dict[str, Any]]:
    rows = []
    seeds = np.random.SeedSequence(SEED).spawn(len(SHIFTS) * len(SIZES))
    k = 0
    for n in SIZES:
        for shift in SHIFTS:
            sc = GaussianShift(shift=shift)
            _, loss, w = sc.sample_source((REPLICATES, n), rng=np.random.default_rng(seeds[k]))
            k += 1
            beta_star = sc.optimal_beta if sc.var_weights > 0 else 0.0
            results = {
                "iw": importance_weighted_risk(loss, w, **QUIET),
                "cv_crossfit": control_variate_risk(loss, w, **QUIET),
                "cv_plugin": control_variate_risk(loss, w, beta="plugin", **QUIET),
                "cv_oracle": control_variate_risk(loss, w, beta=beta_star, **QUIET),
            }
            ess = results["iw"]["ess_fraction"].values[:, 0]
            rows.append(
                {
                    "n": n,
                    "shift": shift,
                    "target_risk": sc.target_risk,
                    "exact_n_var_iw": sc.var_weighted_loss,
                    "exact_n_var_cv": sc.var_control_variate(),
                    "exact_ratio": sc.variance_ratio,
                    "optimal_beta": None if sc.var_weights == 0 else sc.optimal_beta,
                    "plugin_bias_first_order": (
                        None if sc.var_weights == 0 else sc.plugin_beta_bias(n)
                    ),
                    "ess_fraction_limit": sc.ess_fraction,
                    "ess_fraction_mean": float(ess.mean()),
                    "ess_fraction_below_0.1": float((ess < 0.1).mean()),
                    "estimators": summarise(results, sc, n),
                }
            )
            print(
                f"n={n:5d} δ={shift:4.2f}: ratio exact {sc.variance_ratio:.3f}, cross-fitted "
                f"{rows[-1]['estimators']['cv_crossfit']['ratio_to_iw']:.3f}",
                flush=True,
            )
    return rows


def estimated_arm() -> list[dict[str, Any]]:
    rows = []
    seeds = np.random.SeedSequence(SEED + 1).spawn(len(ESTIMATED_SHIFTS))
    for shift, seed in zip(ESTIMATED_SHIFTS, seeds, strict=True):
        sc = GaussianShift(shift=shift)
        rng = np.random.default_rng(seed)
        x, loss, _ = sc.sample_source((ESTIMATED_REPLICATES, ESTIMATED_N), rng=rng)
        xt, _ = sc.sample_target((ESTIMATED_REPLICATES, ESTIMATED_TARGET), rng=rng)
        w_hat = np.stack(
            [
                density_ratio_weights(x[r][:, None], xt[r][:, None], random_state=int(r)).values
                for r in range(ESTIMATED_REPLICATES)
            ]
        )
        results = {
            "iw": importance_weighted_risk(loss, w_hat, **QUIET),
            "cv_crossfit": control_variate_risk(loss, w_hat, **QUIET),
        }
        rows.append(
            {
                "n": ESTIMATED_N,
                "n_target": ESTIMATED_TARGET,
                "shift": shift,
                "target_risk": sc.target_risk,
                "exact_n_var_iw": sc.var_weighted_loss,
                "exact_n_var_cv": sc.var_control_variate(),
                "mean_weight": float(w_hat.mean()),
                "estimators": summarise(results, sc, ESTIMATED_N),
            }
        )
        print(f"estimated weights δ={shift}: done", flush=True)
    return rows


def figure(rows: list[dict[str, Any]], path: Path) -> None:
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.3), constrained_layout=True)
    fine = np.linspace(0, max(SHIFTS), 200)
    exact_iw = [GaussianShift(shift=d).var_weighted_loss for d in fine]
    exact_cv = [GaussianShift(shift=d).var_control_variate() for d in fine]
    exact_ratio = [GaussianShift(shift=d).variance_ratio for d in fine]

    ax = axes[0]
    ax.plot(fine, exact_iw, color="C0", label="exact, $R_W$")
    ax.plot(fine, exact_cv, color="C1", label=r"exact, $R_\beta$ with $\beta^*$")
    sel = [r for r in rows if r["n"] == SIZES[0]]
    shifts = np.array([r["shift"] for r in sel])
    for name, color, marker, dx in (
        ("iw", "C0", "o", -0.015),
        ("cv_crossfit", "C1", "s", 0.0),
        ("cv_plugin", "C2", "^", 0.015),
    ):
        label = ESTIMATORS[name] + (" (biased)" if name == "cv_plugin" else "")
        y = [r["estimators"][name]["n_var"] for r in sel]
        err = [2 * r["estimators"][name]["n_var_mc_se"] for r in sel]
        ax.errorbar(
            shifts + dx, y, yerr=err, fmt=marker, color=color, ms=4, capsize=2,
            label=f"MC, {label}",
        )  # fmt: skip
    ax.set_yscale("log")
    ax.set_xlabel(r"shift $\delta/s$ (target mean − source mean, in feature SDs)")
    ax.set_ylabel(r"$n \cdot \mathrm{Var}$ of the estimate (squared-loss units$^2$)")
    ax.set_title(f"(a) variance, n = {SIZES[0]}, {REPLICATES} replicates")
    ax.legend(fontsize=7)

    ax = axes[1]
    ax.plot(fine, exact_ratio, color="k", label=r"exact $1-\rho^2$ (oracle $\beta^*$)")
    for n, color, dx in ((SIZES[0], "C1", -0.01), (SIZES[1], "C3", 0.01)):
        sel = [r for r in rows if r["n"] == n and r["shift"] > 0]
        shifts = np.array([r["shift"] for r in sel])
        y = [r["estimators"]["cv_crossfit"]["ratio_to_iw"] for r in sel]
        err = [2 * r["estimators"]["cv_crossfit"]["ratio_mc_se"] for r in sel]
        ax.errorbar(
            shifts + dx, y, yerr=err, fmt="s", color=color, ms=4, capsize=2,
            label=f"MC, cross-fitted β̂, n = {n}",
        )  # fmt: skip
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_xlabel(r"shift $\delta/s$ (in feature SDs)")
    ax.set_ylabel(r"$\mathrm{Var}(R_\beta)\,/\,\mathrm{Var}(R_W)$ (unitless)")
    ax.set_title("(b) variance ratio")
    ax.legend(fontsize=7)

    ax = axes[2]
    for name, color, marker in (("iw", "C0", "o"), ("cv_crossfit", "C1", "s")):
        for n, ls in ((SIZES[0], "-"), (SIZES[1], "--")):
            sel = [r for r in rows if r["n"] == n]
            ax.plot(
                [r["shift"] for r in sel],
                [r["estimators"][name]["coverage"] for r in sel],
                marker=marker, color=color, ls=ls, ms=4,
                label=f"{ESTIMATORS[name].split(',')[0].split(' (')[0]}"
                + (", cross-fitted" if name != "iw" else "") + f", n = {n}",
            )  # fmt: skip
    ax.axhline(0.95, color="grey", lw=0.8, ls=":")
    ax.set_ylim(0.75, 1.0)
    ax.set_xlabel(r"shift $\delta/s$ (in feature SDs)")
    ax.set_ylabel("coverage of nominal 95% normal interval (fraction)")
    ax.set_title("(c) interval coverage")
    ax.legend(fontsize=7)
    fig.suptitle(
        "Importance-weighted risk vs control variate, two Gaussians "
        "(GaussianShift: misfit 0.5, noise 1, squared loss)",
        fontsize=10,
    )
    fig.savefig(path, dpi=130)
    plt.close(fig)


def fmt(value: float, err: float, digits: int = 3) -> str:
    return f"{value:.{digits}f} ± {err:.{digits}f}"


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    lines = [
        "# shift_variance",
        "",
        f"Run on {results['date']} with `python benchmarks/shift_variance.py` "
        f"({results['runtime_s']:.0f} s). Python {m['python']}, numpy {m['numpy']}, "
        f"scikit-learn {m['scikit-learn']}, bayescv {m['bayescv']} (git {m['git_commit']}). "
        f"Seed {results['seed']}.",
        "",
        "Setting: `GaussianShift` (source x ~ N(0, 1), target N(δ, 1), y = x + ε, model slope "
        "error 0.5, squared loss), exact weights, "
        f"{results['replicates']} replicates per row. `n·Var` is n times the Monte Carlo "
        "variance of the estimate (± one MC standard error); `ratio` is Var(R_β)/Var(R_W) "
        "(± MC error, paired replicates); bias is mean minus the exact target risk; coverage of "
        "the nominal 95% normal interval (MC error about 0.003).",
        "",
        "![variance of R_W and R_β vs shift](shift_variance.png)",
        "",
        "## Exact weights",
        "",
        "| n | δ | exact n·Var R_W | MC n·Var R_W | exact n·Var R_β* | MC n·Var R_β "
        "(cross-fit) | exact ratio 1−ρ² | MC ratio cross-fit | MC ratio oracle β* | "
        "MC ratio plug-in | bias R_W | bias R_β cross-fit | bias R_β plug-in "
        "(first-order formula) | coverage R_W / R_β | mean ESS/n |",
        "|" + "---|" * 15,
    ]
    for r in results["exact_weights"]:
        e = r["estimators"]
        cf, pl, orc = e["cv_crossfit"], e["cv_plugin"], e["cv_oracle"]
        first = r["plugin_bias_first_order"]
        lines.append(
            f"| {r['n']} | {r['shift']:.2f} | {r['exact_n_var_iw']:.2f} | "
            f"{fmt(e['iw']['n_var'], e['iw']['n_var_mc_se'], 2)} | {r['exact_n_var_cv']:.2f} | "
            f"{fmt(cf['n_var'], cf['n_var_mc_se'], 2)} | {r['exact_ratio']:.3f} | "
            f"{fmt(cf['ratio_to_iw'], cf['ratio_mc_se'])} | "
            f"{fmt(orc['ratio_to_iw'], orc['ratio_mc_se'])} | "
            f"{fmt(pl['ratio_to_iw'], pl['ratio_mc_se'])} | "
            f"{fmt(e['iw']['bias'], e['iw']['bias_mc_se'], 4)} | "
            f"{fmt(cf['bias'], cf['bias_mc_se'], 4)} | "
            f"{fmt(pl['bias'], pl['bias_mc_se'], 4)} "
            f"({'—' if first is None else f'{first:.4f}'}) | "
            f"{e['iw']['coverage']:.3f} / {cf['coverage']:.3f} | {r['ess_fraction_mean']:.2f} |"
        )
    lines += [
        "",
        "## Estimated weights (cross-fitted logistic domain classifier)",
        "",
        f"{ESTIMATED_REPLICATES} replicates of {ESTIMATED_N} labelled source and "
        f"{ESTIMATED_TARGET} unlabelled target points; weights from "
        "`density_ratio_weights` (5 folds).",
        "",
        "| δ | exact n·Var R_W | MC n·Var R_W | exact n·Var R_β* | MC n·Var R_β | MC ratio | "
        "bias R_W | bias R_β | coverage R_W / R_β | mean weight |",
        "|" + "---|" * 10,
    ]
    for r in results["estimated_weights"]:
        e = r["estimators"]
        iw, cf = e["iw"], e["cv_crossfit"]
        lines.append(
            f"| {r['shift']:.2f} | {r['exact_n_var_iw']:.2f} | {fmt(iw['n_var'], iw['n_var_mc_se'], 2)} "
            f"| {r['exact_n_var_cv']:.2f} | {fmt(cf['n_var'], cf['n_var_mc_se'], 2)} | "
            f"{fmt(cf['ratio_to_iw'], cf['ratio_mc_se'])} | {fmt(iw['bias'], iw['bias_mc_se'], 4)} "
            f"| {fmt(cf['bias'], cf['bias_mc_se'], 4)} | {iw['coverage']:.3f} / "
            f"{cf['coverage']:.3f} | {r['mean_weight']:.3f} |"
        )
    lines += ["", "## Reading", "", *results["reading"], ""]
    return "\n".join(lines)


def reading(rows: list[dict[str, Any]]) -> list[str]:
    """A few sentences computed from the numbers, so they stay true when rerun."""
    at = {(r["n"], r["shift"]): r for r in rows}
    n0, n1 = SIZES
    one, one_big = at[(n0, 1.0)], at[(n1, 1.0)]
    e, e_big = one["estimators"], one_big["estimators"]
    top = max(SHIFTS)
    far = at[(n0, top)]["estimators"]
    z = [
        (r["estimators"][name]["n_var"] - r[exact]) / r["estimators"][name]["n_var_mc_se"]
        for r in rows
        for name, exact in (("iw", "exact_n_var_iw"), ("cv_oracle", "exact_n_var_cv"))
    ]
    return [
        f"- From δ = 0 to δ = {top}, n·Var(R_W) grows from {at[(n0, 0.0)]['exact_n_var_iw']:.2f} "
        f"to {at[(n0, top)]['exact_n_var_iw']:.0f} (exact): weighting costs more and more as the "
        "domains separate. The MC variances of R_W and of the oracle R_β* agree with the exact "
        f"ones: the largest of {len(z)} deviations is {max(np.abs(z)):.1f} MC standard errors "
        "(about 2.2 is expected for the largest of that many normal deviates).",
        f"- With the oracle β* the measured variance ratio matches 1 − ρ² (δ = 1: "
        f"{e['cv_oracle']['ratio_to_iw']:.3f} ± {e['cv_oracle']['ratio_mc_se']:.3f} against "
        f"{one['exact_ratio']:.3f}). With the cross-fitted β̂ (the default) part of the gain "
        f"goes to estimating β: {e['cv_crossfit']['ratio_to_iw']:.3f} at n = {n0} and "
        f"{e_big['cv_crossfit']['ratio_to_iw']:.3f} at n = {n1}. The loss shrinks with n, but "
        "slowly at large shifts, where β̂ depends on high moments of the weights "
        "(E[w⁴] = exp(6δ²)).",
        f"- The cross-fitted R_β is unbiased (δ = 1, n = {n0}: bias "
        f"{e['cv_crossfit']['bias']:.4f} ± {e['cv_crossfit']['bias_mc_se']:.4f}); the plug-in "
        f"β̂ is biased ({e['cv_plugin']['bias']:.4f} ± {e['cv_plugin']['bias_mc_se']:.4f}) and "
        f"its standard error too small (coverage {e['cv_plugin']['coverage']:.3f} against "
        f"{e['cv_crossfit']['coverage']:.3f}), yet in mean squared error it wins here "
        f"(n·MSE {e['cv_plugin']['n_mse']:.1f} against {e['cv_crossfit']['n_mse']:.1f}; at "
        f"δ = {top}: {far['cv_plugin']['n_mse']:.1f} against {far['cv_crossfit']['n_mse']:.1f}): "
        "the in-sample fit of β absorbs the extreme weights.",
        f"- Coverage of the normal interval falls with the shift (δ = 1, n = {n0}: R_W "
        f"{e['iw']['coverage']:.3f}, cross-fitted R_β {e['cv_crossfit']['coverage']:.3f}; "
        f"n = {n1}: {e_big['iw']['coverage']:.3f}, {e_big['cv_crossfit']['coverage']:.3f}) "
        "because l·w is strongly right-skewed. With the oracle β* it stays near 95% even at "
        f"δ = {top} ({far['cv_oracle']['coverage']:.3f}): the skew runs along w, and the "
        "noise of an estimated β, multiplied by the largest weights, brings it back.",
    ]


def main() -> None:
    start = time.perf_counter()
    RESULTS.mkdir(exist_ok=True)
    rows = exact_arm()
    estimated = estimated_arm()
    results = {
        "date": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "seed": SEED,
        "replicates": REPLICATES,
        "machine": machine_info(["numpy", "scikit-learn", "bayescv"], cores=False),
        "scenario": "GaussianShift(scale=1, misfit=0.5, noise=1), shift varied",
        "exact_weights": rows,
        "estimated_weights": estimated,
        "reading": reading(rows),
    }
    figure(rows, RESULTS / "shift_variance.png")
    results["runtime_s"] = time.perf_counter() - start
    (RESULTS / "shift_variance.json").write_text(json.dumps(results, indent=2) + "\n")
    (RESULTS / "shift_variance.md").write_text(markdown(results))
    print(f"wrote {RESULTS}/shift_variance.{{png,json,md}} in {results['runtime_s']:.0f} s")


if __name__ == "__main__":
    main()
