"""The error on new sources: ``bayes_ose`` under a normal and a lognormal population.

Run from the repository root (about 10 minutes per K and population on 2 cores)::

    python benchmarks/ose_population.py --k 10,20 --replicates 200 --n-jobs 2 --store /tmp/ose
    python benchmarks/ose_population.py --scenario linear --k 10 --replicates 200 --n-jobs 2
    python benchmarks/ose_population.py --loss absolute --k 10 --replicates 200 --n-jobs 2
    python benchmarks/ose_population.py --scenario logistic --loss log_loss --k 10

Scenarios, sources redrawn in every data set (Geras & Sutton 2013, §6.1), squared error
(``--loss absolute``: absolute error, STAR only, whose truths hold for any loss), leave one
source out:

* ``star`` (default): :meth:`bayescv.compare.ResampledSources.star`: every data set draws K
  of the 79 Tennessee STAR schools without replacement and resamples each school's pupils
  with replacement; the schools left out are the new sources; ridge regression.
* ``linear``: :class:`bayescv.compare.MultiSourceLinear` with K new sources of 50 points
  (its defaults: coefficients spread by 0.5, intercepts by 0.5, Gaussian noise of sd 1),
  least squares.
* ``student-t``: the same with sources of 20, 30, ... points and Student-t noise of 3
  degrees of freedom (the catalogue's ``multi-source-student-t``): heavy-tailed squared
  errors.
* ``logistic`` (``--loss log_loss`` only): :class:`bayescv.compare.MultiSourceErrorRate`
  with a Bayes error of 0.18 and ``heterogeneity=0.2`` (sources whose error rates differ),
  K new sources of 50 points, its logistic regression, log loss; the truths are its test
  draws' mean losses (2,000 points per new source).

Methods:
``bayes_hier`` (B = 50 bootstrap replicates, sampler ``auto``), once with
``population="normal"`` (μ_k ~ N(μ₀, τ²)) and once with ``population="lognormal"``
(log μ_k ~ N(α, τ²), what ``"auto"``, the default, takes for squared errors), on the same
data sets (the same study seed); ``naive_points`` beside them. Target ``ose``: the mean over
data sets of ``ose_cv``, the fold models' error on the sources left out, each source weighted
equally (the fold models are the K models trained on K − 1 sources, as ``ose`` is defined in
docs/bayes.md).

Reported per K and method: coverage of ``ose`` with its Monte Carlo error, the share of
intervals lying wholly below and wholly above the truth, the centre offset (mean over data
sets of (posterior mean − truth) / posterior sd, with its standard error), the mean width and
the fits flagged ``not_converged``. The ``expected_cv`` rows of the two populations are the
same fits and must agree to the digit (the script checks it).

Output: ``benchmarks/results/ose_population_{scenario}.{md,json}`` (``--name``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import load_average, machine_info, write_results  # house helpers

from bayescv.bayes import Priors
from bayescv.compare import MultiSourceErrorRate, MultiSourceLinear, ResampledSources, run_study

METHODS = ["bayes_hier", "theta_B", "naive_points"]
SCENARIO_TEXT = {
    "star": '`ResampledSources.star(design="sources_redrawn", n_sources=K)`: K of the 79 '
    "STAR schools per data set, pupils resampled within schools, ridge regression.",
    "linear": '`MultiSourceLinear(K, 50, design="sources_redrawn")`: K new sources of 50 '
    "points per data set (coefficients and intercepts spread by 0.5, noise sd 1), least "
    "squares.",
    "student-t": '`MultiSourceLinear(K, [20, 30, ...], noise_df=3, design="sources_redrawn")`: '
    "K new sources of 20, 30, ... points per data set, Student-t noise with 3 degrees of "
    "freedom scaled to sd 1 (squared errors of infinite variance), least squares.",
    "logistic": '`MultiSourceErrorRate(0.18, n_sources=K, points_per_source=50, design="sources_'
    'redrawn", heterogeneity=0.2)`: K new logistic sources of 50 points per data set, their '
    "error rates spread (logit sd about 0.3), logistic regression.",
}
#: How the reports name each loss.
LOSS_TEXT = {"squared": "Squared error", "absolute": "Absolute error", "log_loss": "Log loss"}
ROWS = ("bayes_ose", "bayes_new_source", "naive_points")
PACKAGES = ("numpy", "scikit-learn", "pymc", "nutpie", "arviz", "bayescv")


def study(k: int, population: str, args: argparse.Namespace) -> xr.Dataset:
    """One study of sources redrawn, ``bayes_hier`` with the population named."""
    # named explicitly: the default, population="auto", takes the lognormal one for squared errors
    options: dict[str, Any] = {"bayes_hier": {"population": population}}
    if args.tau_sd is not None:  # a sensitivity check of τ's prior scale, not a default
        options["bayes_hier"]["priors"] = Priors(tau_sd=args.tau_sd)
    store = None
    if args.store is not None:
        args.store.mkdir(parents=True, exist_ok=True)
        suffix = "" if args.loss == "squared" else f"_{args.loss}"
        if args.tau_sd is not None:
            suffix += f"_tau{args.tau_sd:g}".replace(".", "p")
        store = args.store / f"{args.scenario}{suffix}_k{k}_{population}.nc"
    if args.scenario == "star":
        scenario = ResampledSources.star(design="sources_redrawn", n_sources=k)
    elif args.scenario == "logistic":
        scenario = MultiSourceErrorRate(
            0.18, n_sources=k, points_per_source=50, design="sources_redrawn", heterogeneity=0.2
        )
    elif args.scenario == "linear":
        scenario = MultiSourceLinear(k, 50, design="sources_redrawn")
    else:  # the heavy-tail family of the catalogue, "multi-source-student-t", sources redrawn
        sizes = list(range(20, 20 + 10 * k, 10))
        scenario = MultiSourceLinear(k, sizes, noise_df=3.0, design="sources_redrawn")
    st = run_study(
        scenario, methods=METHODS, n_replicates=args.replicates, random_state=args.seed,
        n_jobs=args.n_jobs, store=store, method_options=options or None, loss=args.loss,
        progress=not args.no_progress,
    )  # fmt: skip
    # The time the study itself took, when it ran (a study loaded whole from its store keeps
    # the wall time of the run that wrote it; the report's own wall time is then seconds).
    if store is None:
        st.attrs["study_time_s"] = st.attrs["wall_time_s"]
    else:
        with xr.open_dataset(store) as written:
            st.attrs["study_time_s"] = float(written.attrs["wall_time_s"])
    return st


def rows(st: xr.Dataset) -> dict[str, dict[str, Any]]:
    """Coverage, one-sided misses, centre offset and width of each row against ``ose``."""
    truth = float(np.nanmean(st["truth"].sel(target="ose_cv").values))
    out = {}
    r = st.sizes["replicate"]
    for name in ROWS:
        sel = {"method_name": name}
        est, lo, hi, se = (st[v].sel(sel).values for v in ("estimate", "lower", "upper", "se"))
        cover = float(np.mean((lo <= truth) & (truth <= hi)))
        offset = (est - truth) / se
        flags = st["flag"].sel(sel).values.astype(str)
        out[name] = {
            "coverage": cover,
            "coverage_se": float(np.sqrt(cover * (1 - cover) / r)),
            "below": float(np.mean(hi < truth)),
            "above": float(np.mean(lo > truth)),
            "offset": float(offset.mean()),
            "offset_se": float(offset.std(ddof=1) / np.sqrt(r)),
            "width": float(np.mean(hi - lo)),
            "not_converged": int(sum("not_converged" in f for f in flags)),
        }
    n, total, within = (st[v].values for v in ("block_n", "block_S", "block_W"))
    with np.errstate(divide="ignore", invalid="ignore"):
        # The delta-method standard error of log ē_k: the block's relative standard error.
        log_se = np.sqrt(within / (n - 1) / n) / (total / n)
    return {
        "truth_ose": truth, "replicates": r, "rows": out, "draws": draws(st, truth),
        "log_mean_se": float(np.nanmedian(log_se[np.isfinite(log_se)])),
    }  # fmt: skip


def draws(st: xr.Dataset, truth: float) -> dict[str, dict[str, float]]:
    """What the sources drawn look like where ``bayes_ose`` misses low, misses high, covers.

    Per group of data sets: their number, the median ratio of the plain mean of the drawn
    sources' block means to the truth, and the median standard deviation of the log block
    means (how far apart the drawn sources are).
    """
    sel = {"method_name": "bayes_ose"}
    lo, hi = st["lower"].sel(sel).values, st["upper"].sel(sel).values
    means = (st["block_S"] / st["block_n"]).values
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = np.log(means).std(axis=1, ddof=1)  # NaN for a block mean of 0
    ratio = means.mean(axis=1) / truth
    groups = {"below": hi < truth, "above": lo > truth}
    groups["covered"] = ~(groups["below"] | groups["above"])
    return {
        name: {
            "n": int(mask.sum()),
            "mean_over_truth": float(np.median(ratio[mask])) if mask.any() else float("nan"),
            "sd_log_means": float(np.nanmedian(spread[mask])) if mask.any() else float("nan"),
        }
        for name, mask in groups.items()
    }


def markdown(res: dict[str, Any]) -> str:
    lines = [
        f"# {res['name']}: the error on new sources under a normal and a lognormal population",
        "",
        f"Run on {res['started']} with `{res['command']}`: wall time "
        f"{res['total_runtime_s']:.0f} s ({res['total_runtime_s'] / 60:.1f} min; the studies "
        f"took {sum(c['study_time_s'] for c in res['cells']):.0f} s when they ran); load average "
        f"{res['load_before']:.2f} before, {res['load_after']:.2f} after; "
        + ", ".join(f"{k} {v}" for k, v in res["machine"].items()),
        "",
        SCENARIO_TEXT[res["scenario"]]
        + f" {LOSS_TEXT[res['loss']]}, leave one source out; `bayes_hier` with B = 50 bootstrap "
        "replicates and the population named, on the same data sets under both populations. "
        "Truth `ose`: the mean over data sets of `ose_cv` (the K fold models' error on the "
        "sources left out, sources weighted equally). 95 % intervals."
        + (
            f" Priors(tau_sd={res['tau_sd']:g}) for both populations: a sensitivity check of "
            "τ's prior scale (the default is 2)."
            if res.get("tau_sd") is not None
            else ""
        ),
        "",
        "| K | population | row | coverage of ose % | interval below / above truth % "
        "| centre offset (posterior sd) | mean width | not converged |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for cell in res["cells"]:
        for name, r in cell["rows"].items():
            lines.append(
                f"| {cell['k']} | {cell['population']} | {name} | "
                f"{100 * r['coverage']:.1f} ± {100 * r['coverage_se']:.1f} | "
                f"{100 * r['below']:.1f} / {100 * r['above']:.1f} | "
                f"{r['offset']:+.2f} ± {r['offset_se']:.2f} | {r['width']:.4g} | "
                f"{r['not_converged']} |"
            )
    lines += [
        "",
        "The sources drawn where `bayes_ose` misses: per group of data sets, their number, the "
        "median ratio of the plain mean of the drawn sources' block means to the truth, and the "
        "median standard deviation of the log block means.",
        "",
        "| K | population | interval below truth | above truth | covered |",
        "|---|---|---|---|---|",
    ]
    for cell in res["cells"]:
        parts = [
            f"{g['n']}: {g['mean_over_truth']:.2f}, sd {g['sd_log_means']:.2f}" if g["n"] else "0"
            for g in (cell["draws"][k] for k in ("below", "above", "covered"))
        ]
        lines.append(f"| {cell['k']} | {cell['population']} | " + " | ".join(parts) + " |")
    lines += [
        "",
        "The standard error of one source's log mean (delta method, sqrt(W / (n − 1) / n) / ē), "
        "median over sources and data sets: "
        + "; ".join(
            f"K = {c['k']}: {c['log_mean_se']:.3f}" for c in res["cells"]
            if c["population"] == "normal"
        ) + ".",
    ]  # fmt: skip
    lines += ["", "Truth `ose` per K: " + "; ".join(
        f"K = {c['k']}: {c['truth_ose']:.4g} ({c['replicates']} data sets)"
        for c in res["cells"] if c["population"] == "normal"
    ) + ".", ""]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--k", default="10,20", help="schools per data set, comma-separated")
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--store", type=Path, help="directory for the studies (resumable)")
    parser.add_argument("--scenario", choices=sorted(SCENARIO_TEXT), default="star")
    parser.add_argument(
        "--loss", choices=sorted(LOSS_TEXT), default="squared",
        help="absolute: the STAR scenario only (its truth is each school's mean loss); "
        "log_loss: the logistic scenario only",
    )  # fmt: skip
    parser.add_argument(
        "--tau-sd", type=float, default=None,
        help="Priors(tau_sd=...) for both populations (a sensitivity check; default: 2)",
    )  # fmt: skip
    parser.add_argument("--name", help="default ose_population_{scenario}[_{loss}]")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.loss == "absolute" and args.scenario != "star":
        parser.error("--loss absolute needs --scenario star (exact truths for any loss)")
    if (args.loss == "log_loss") != (args.scenario == "logistic"):
        parser.error("--scenario logistic takes --loss log_loss, and log_loss needs it")
    suffix = "" if args.loss == "squared" else f"_{args.loss}"
    args.name = args.name or f"ose_population_{args.scenario}{suffix}"
    started = time.perf_counter()
    res: dict[str, Any] = {
        "name": args.name,
        "scenario": args.scenario,
        "loss": args.loss,
        "tau_sd": args.tau_sd,
        "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": "python benchmarks/ose_population.py " + " ".join(argv or sys.argv[1:]),
        "load_before": load_average(),
        "machine": machine_info(PACKAGES),
        "cells": [],
    }
    for k in (int(v) for v in args.k.split(",")):
        by_population = {}
        for population in ("normal", "lognormal"):
            st = study(k, population, args)
            by_population[population] = st
            res["cells"].append(
                {"k": k, "population": population, "study_time_s": st.attrs["study_time_s"],
                 **rows(st)}
            )  # fmt: skip
        same = [
            by_population[p]["estimate"].sel(method_name="bayes_expected_cv").values
            for p in ("normal", "lognormal")
        ]
        if not np.array_equal(*same):
            raise RuntimeError(f"K = {k}: the expected_cv rows of the two populations differ")
    write_results(args.name, res, markdown, started)


if __name__ == "__main__":
    main()
