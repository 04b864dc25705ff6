"""Calibration of the hierarchical Bayesian model (``bayes_hier``) in the comparison module.

Run from the repository root (the full studies are long; ``--quick`` checks the script)::

    python benchmarks/calibrate_bayes.py --replicates 200 --n-jobs 2 --store /tmp/calib
    python benchmarks/calibrate_bayes.py --n-bootstrap 20 --out-dir /tmp/b20  # -> *_b20.md
    python benchmarks/calibrate_bayes.py --design redrawn --m 10,50,200 --n-jobs 2

B defaults to 50, the default of both ``bootstrap`` and ``bayes_hier``; the B = 20 results in
``results/calibrate_bayes_b20.md`` are the first command with ``--n-bootstrap 20``, renamed.

**Sources fixed** (``--design fixed``, the default): :class:`~bayescv.compare.MultiSourceLogistic`
with K = 10 sources drawn once (``source_seed`` 0) and M = 50 points per source redrawn in
every replicate, unregularised logistic regression, 0-1 loss, leave one source out, 95 %
intervals for ``expected_cv`` = E[μ̂] with the sources fixed. Methods: ``bootstrap``
(B bootstrap-replicated CV runs, ``--n-bootstrap``, normal quantile), ``bootstrap_t`` (the
same interval with Student's t quantile, B − 1 degrees of freedom), ``bootstrap_ties`` and
``bootstrap_ties_t`` (the bootstrap variance less its duplicated-point term, the correction
``bayes_hier`` applies; :func:`bayescv.bayes._stats.tie_term`), these three registered here
with :func:`~bayescv.compare.register_method`; ``theta_B``, ``naive_points`` and
``bayes_hier`` (the collapsed model fitted on the observed table and the same B bootstrap
replicates: one replicated table per data set, shared by every method that uses it). The truth
``expected_cv`` and the true sd of μ̂ come from a separate, larger study of the same scenario
(``--truth-replicates``, other seeds, μ̂ only), so their Monte Carlo error is small against
that of the coverages. Reported per method: coverage with its Monte Carlo standard error,
misses high and low, mean and sd of the width, the centre bias (mean estimate − truth) in units
of the true sd of μ̂, and for the Bayesian row the number of fits flagged ``not_converged``;
and the paired width ratios of the Bayesian interval to three bootstrap rows (mean over data
sets of the per-data-set ratio, with its standard error, and the median).

**Sources redrawn** (``--design redrawn``, the new-source check): every replicate draws 10 new
sources; for each M in ``--m`` a study of ``bayes_hier``, ``theta_B`` and ``naive_points``
reports the coverage of ``ose``, the mean error over new sources (the mean over replicates of
the per-replicate new-source error ``ose_xy``; Geras & Sutton 2013, eq. 3). Intervals built on the variance of
μ̂ with the sources fixed ignore the between-source spread τ²/K: they shrink as M grows and
lose coverage of ``ose``; ``bayes_ose`` (the posterior of μ₀) must not.
``bayes_new_source`` (one new source's error, predictive) is shown for comparison: as an
interval for ``ose`` it over-covers by design.

Output: ``benchmarks/results/calibrate_bayes.{md,json}`` (redrawn design:
``calibrate_bayes_redrawn.{md,json}``), or in ``--out-dir``, with the command line, the wall
time and the machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import sys
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import load_average, machine_info  # house helpers

from bayescv.bayes._stats import collapse
from bayescv.compare import (
    Method,
    MultiSourceLogistic,
    get_method,
    monte_carlo_truths,
    register_method,
    registry,
    run_study,
    summarize,
    unregister_method,
)
from bayescv.intervals import interval_dataset, normal_bounds

RESULTS = Path(__file__).resolve().parent / "results"
K = 10
LEVEL = 0.95
BAYES = "bayes_expected_cv"
PACKAGES = ("numpy", "scikit-learn", "xarray", "pymc", "arviz", "nutpie", "bayescv")
MODULES = {"scikit-learn": "sklearn"}


def bootstrap_t(context: Any, names: Sequence[str], *, n_bootstrap: int = 50) -> xr.Dataset:
    """The ``bootstrap`` interval with Student's t quantile (B − 1 d.f.), same shared table."""
    ds = registry.bootstrap(context, ["bootstrap"], n_bootstrap=n_bootstrap, kind="t")
    return ds.assign_coords(method_name=list(names))


def bootstrap_ties(
    context: Any, names: Sequence[str], *, n_bootstrap: int = 50, kind: str = "normal"
) -> xr.Dataset:
    """The bootstrap variance of μ̂ less the duplicated-point term Σ_k w_k² (1 − 1/n_k) c̄_k/n_k.

    The classical counterpart of what ``bayes_hier`` does with the same table
    (:func:`bayescv.bayes._stats.tie_term`): shown so that the gain of the correction and the
    gain of the model can be told apart. A corrected variance ≤ 0 gives a NaN interval,
    flagged ``negative_variance``.
    """
    s = collapse(context.losses, context.bootstrap_table(n_bootstrap))
    w = s.weights
    variance = w @ s.scatter @ w / s.scatter_df - w**2 @ s.scatter_extra
    estimate = float(w @ s.ybar)
    se, lower, upper, flag = normal_bounds(
        estimate, variance, level=context.level, kind=kind, df=s.scatter_df
    )
    one = lambda x: np.atleast_1d(x)  # noqa: E731
    return interval_dataset(
        list(names), estimate=one(estimate), lower=one(lower), upper=one(upper), se=one(se),
        level=context.level, target="expected_cv", flag=one(flag), kind=kind,
    )  # fmt: skip


EXTRA_METHODS = {
    "bootstrap_t": (bootstrap_t, "bootstrap-replicated CV, t quantile (calibrate_bayes.py)"),
    "bootstrap_ties": (
        bootstrap_ties,
        "bootstrap variance less the duplicated-point term, normal quantile (calibrate_bayes.py)",
    ),
    "bootstrap_ties_t": (
        partial(bootstrap_ties, kind="t"),
        "bootstrap variance less the duplicated-point term, t quantile (calibrate_bayes.py)",
    ),
}


def register_extra_methods() -> None:
    """Register this script's classical comparison rows (replacing earlier registrations)."""
    boot = get_method("bootstrap")
    for name, (function, description) in EXTRA_METHODS.items():
        method = Method(name, function, boot.target, "refit", description=description)
        register_method(method, replace=True)


def scenario(m: int, design: str) -> MultiSourceLogistic:
    return MultiSourceLogistic(
        K, m, design="sources_fixed" if design == "fixed" else "sources_redrawn",
        scheme="source", source_seed=0,
    )  # fmt: skip


def bayes_options(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"n_bootstrap": args.n_bootstrap, "sampler": args.sampler}
    if args.quick:
        out.update(draws=300, tune=300)
    return out


def store_path(args: argparse.Namespace, name: str) -> Path | None:
    if args.store is None:
        return None
    args.store.mkdir(parents=True, exist_ok=True)
    return args.store / f"{name}-R{args.replicates}-s{args.random_state}.nc"


def study(sc, methods, n, args, options, seed, truths, name) -> xr.Dataset:
    return run_study(
        sc, None, methods, n, level=LEVEL, truths=truths, method_options=options,
        random_state=seed, n_jobs=args.n_jobs, store=store_path(args, name),
        batched=True if args.batched else None,
        progress=not args.no_progress, error_score=np.nan,
    )  # fmt: skip


def mean_se(x: np.ndarray) -> tuple[float, float]:
    x = x[np.isfinite(x)]
    if x.size < 2:
        return float(np.mean(x)) if x.size else float("nan"), float("nan")
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size))


def method_rows(st: xr.Dataset, summary: xr.Dataset, target: str, truth: float, sd: float):
    """Per method: coverage of `target`, misses, widths, centre bias, flags."""
    rows = {}
    for m in st["method_name"].values.tolist():
        one = st.sel(method_name=m)
        width = (one["upper"] - one["lower"]).values
        bias, bias_se = mean_se((one["estimate"].values - truth) / sd)
        flags = one["flag"].values.astype(str)
        s = summary.sel(method_name=m, target=target)
        rows[m] = {
            "target": str(one["method_target"].values),
            "coverage": float(s["coverage"]),
            "coverage_se": float(s["coverage_se"]),
            "miss_high": float(s["miss_high"]),
            "miss_low": float(s["miss_low"]),
            "n_valid": int(s["n_valid"]),
            "mean_width": float(np.nanmean(width)),
            "sd_width": float(np.nanstd(width, ddof=1)) if width.size > 1 else float("nan"),
            "centre_bias_sd": bias,
            "centre_bias_sd_se": bias_se,
            "not_converged": int((flags == "not_converged").sum()),
            "errors": int(np.char.startswith(flags, "error").sum()),
            "runtime_mean_s": float(one["runtime"].mean()),
        }
    return rows


def width_ratio(st: xr.Dataset, a: str, b: str) -> dict[str, float]:
    """Paired ratio of widths a / b per data set: mean with its s.e., and median."""
    w = lambda m: (st["upper"] - st["lower"]).sel(method_name=m).values  # noqa: E731
    ratio = w(a) / w(b)
    mean, se = mean_se(ratio)
    return {"mean": mean, "se": se, "median": float(np.nanmedian(ratio))}


def run_fixed(args: argparse.Namespace) -> dict[str, Any]:
    m = args.m[0]
    register_extra_methods()
    try:
        sc = scenario(m, "fixed")
        # The truth: μ̂ over many more data sets from the same fixed sources, other seeds.
        truth_st = study(sc, ["naive_points"], args.truth_replicates, args, {},
                         args.random_state + 1, [], "truth")  # fmt: skip
        mc = monte_carlo_truths(truth_st)
        truth = float(mc["truth"].sel(target="expected_cv"))
        truth_se = float(mc["truth_se"].sel(target="expected_cv"))
        sd = float(np.sqrt(mc["theta"]))
        methods = ["bootstrap", *EXTRA_METHODS, "theta_B", "naive_points", "bayes_hier"]
        options = {
            "bootstrap": {"n_bootstrap": args.n_bootstrap},
            **{name: {"n_bootstrap": args.n_bootstrap} for name in EXTRA_METHODS},
            "bayes_hier": bayes_options(args),
        }
        st = study(sc, methods, args.replicates, args, options, args.random_state, [], "fixed")
    finally:
        for name in EXTRA_METHODS:
            unregister_method(name)
    summary = summarize(st, targets=["expected_cv"], truths={"expected_cv": truth})
    return {
        "scenario": sc.params(),
        "m": m,
        "replicates": int(st.sizes["replicate"]),
        "truth_replicates": int(truth_st.sizes["replicate"]),
        "truth_expected_cv": truth,
        "truth_expected_cv_se": truth_se,
        "true_sd_mu_hat": sd,
        "sd_mu_hat_in_study": float(st["mu_hat"].std(ddof=1)),
        "mean_mu_hat_in_study": float(st["mu_hat"].mean()),
        "methods": method_rows(st, summary, "expected_cv", truth, sd),
        "width_ratio": {
            "bayes/bootstrap": width_ratio(st, BAYES, "bootstrap"),
            "bayes/bootstrap_t": width_ratio(st, BAYES, "bootstrap_t"),
            "bayes/bootstrap_ties_t": width_ratio(st, BAYES, "bootstrap_ties_t"),
        },
        "options": options,
        "study_wall_s": float(st.attrs["wall_time_s"]),
        "truth_wall_s": float(truth_st.attrs["wall_time_s"]),
        "replicates_loaded": int(st.attrs["replicates_loaded"]),
    }


def run_redrawn(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"by_m": {}, "options": {"bayes_hier": bayes_options(args)}}
    for m in args.m:
        sc = scenario(m, "redrawn")
        st = study(sc, ["theta_B", "naive_points", "bayes_hier"], args.replicates, args,
                   out["options"], args.random_state, ["ose_xy"], f"redrawn-M{m}")  # fmt: skip
        summary = summarize(st, targets=["ose", "ose_xy"])
        mc = monte_carlo_truths(st)
        truth = float(mc["truth"].sel(target="ose"))
        sd = float(np.std(st["truth"].sel(target="ose_xy").values, ddof=1))
        rows = method_rows(st, summary, "ose", truth, sd)
        for name, row in rows.items():
            s = summary.sel(method_name=name, target="ose_xy")
            row["coverage_ose_xy"] = float(s["coverage"])
            row["coverage_ose_xy_se"] = float(s["coverage_se"])
        out["by_m"][str(m)] = {
            "scenario": sc.params(),
            "replicates": int(st.sizes["replicate"]),
            "truth_ose": truth,
            "truth_ose_se": float(mc["truth_se"].sel(target="ose")),
            "sd_ose_xy": sd,
            "methods": rows,
            "study_wall_s": float(st.attrs["wall_time_s"]),
        }
        print(f"M = {m}: {st.attrs['wall_time_s']:.0f} s", flush=True)
    return out


def pct(p: float, se: float | None = None) -> str:
    if not np.isfinite(p):
        return "n/a"
    return f"{100 * p:.1f}" + ("" if se is None or not np.isfinite(se) else f" ± {100 * se:.1f}")


def header(out: dict[str, Any], title: str) -> list[str]:
    mach = out["machine"]
    versions = ", ".join(
        f"{k} {mach[k]}"
        for k in ("numpy", "scikit-learn", "pymc", "nutpie", "arviz", "bayescv")
        if mach.get(k)
    )
    return [
        f"# {title}",
        "",
        f"Run on {out['date']} with `{out['command']}`: wall time {out['wall_s']:.0f} s "
        f"({out['wall_s'] / 60:.1f} min) on {mach.get('usable_cores')} usable cores "
        f"({mach.get('cpu', '')}; load average {out['load_before']:.2f} before, "
        f"{out['load_after']:.2f} after); Python {mach['python']}, {versions}; git "
        f"{mach['git_commit']}."
        + (
            " **Quick run** (a handful of replicates, short chains): it checks the "
            "script, its numbers mean nothing."
            if out["quick"]
            else ""
        ),
        "",
    ]


def markdown_fixed(out: dict[str, Any]) -> str:
    r = out["fixed"]
    lines = header(out, "calibrate_bayes: sources fixed")
    lines += [
        f"MultiSourceLogistic, K = {K} sources fixed (source_seed 0), M = {r['m']} points per "
        "source redrawn per replicate, unregularised logistic regression, 0-1 loss, leave one "
        f"source out; {r['replicates']} replicates; {100 * LEVEL:.0f} % intervals; B = "
        f"{out['args']['n_bootstrap']} bootstrap replicates shared by the bootstrap rows and "
        f"bayes_hier (sampler {out['args']['sampler']}).",
        "",
        f"Truth: `expected_cv` = {r['truth_expected_cv']:.4f} ± {r['truth_expected_cv_se']:.4f}"
        f", the mean of μ̂ over {r['truth_replicates']} other data sets from the same sources; "
        f"the true sd of μ̂ there {r['true_sd_mu_hat']:.4f} (in this study "
        f"{r['sd_mu_hat_in_study']:.4f}).",
        "",
        "| method | coverage % | miss high % | miss low % | mean width | sd of width "
        "| centre bias (sd of μ̂) | not converged | errors |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for m, row in r["methods"].items():
        lines.append(
            f"| {m} | {pct(row['coverage'], row['coverage_se'])} | {pct(row['miss_high'])} | "
            f"{pct(row['miss_low'])} | {row['mean_width']:.4f} | {row['sd_width']:.4f} | "
            f"{row['centre_bias_sd']:+.3f} ± {row['centre_bias_sd_se']:.3f} | "
            f"{row['not_converged']} | {row['errors']} |"
        )
    lines += ["", "Paired width ratios (per data set, then averaged):", ""]
    for name, q in r["width_ratio"].items():
        lines.append(
            f"- {name}: mean {q['mean']:.3f} ± {q['se']:.3f} (s.e. over replicates), "
            f"median {q['median']:.3f}"
        )
    lines += [
        "",
        "Coverage ± Monte Carlo standard error sqrt(p(1 − p)/R). The bayes_ose and "
        "bayes_new_source rows target new-source quantities; with the sources fixed their "
        "coverage of `expected_cv` is shown only for completeness. The bootstrap table is "
        "built once per replicate by the first method that needs it, so per-method run times "
        "are not comparable and are left out.",
        "",
    ]
    return "\n".join(lines)


def markdown_redrawn(out: dict[str, Any]) -> str:
    r = out["redrawn"]
    lines = header(out, "calibrate_bayes: sources redrawn (the new-source check)")
    lines += [
        f"MultiSourceLogistic, K = {K} new sources per replicate, M points per source, "
        "unregularised logistic regression, 0-1 loss, leave one source out; "
        f"{100 * LEVEL:.0f} % intervals; bayes_hier with B = {out['args']['n_bootstrap']} "
        f"bootstrap replicates (sampler {out['args']['sampler']}). Target `ose`: the mean over "
        "replicates of `ose_xy`, the error of the replicate's model on new sources "
        "(Geras & Sutton 2013, eq. 3).",
        "",
        "| M | method | coverage of ose % | coverage of ose_xy % | mean width | centre bias "
        "(sd of ose_xy) | not converged |",
        "|---|---|---|---|---|---|---|",
    ]
    for m, res in r["by_m"].items():
        for name, row in res["methods"].items():
            lines.append(
                f"| {m} | {name} | {pct(row['coverage'], row['coverage_se'])} | "
                f"{pct(row['coverage_ose_xy'], row['coverage_ose_xy_se'])} | "
                f"{row['mean_width']:.4f} | {row['centre_bias_sd']:+.3f} | "
                f"{row['not_converged']} |"
            )
    lines += [
        "",
        "Truths per M: "
        + "; ".join(
            f"M = {m}: ose = {res['truth_ose']:.4f} ± {res['truth_ose_se']:.4f} "
            f"({res['replicates']} replicates)"
            for m, res in r["by_m"].items()
        )
        + ".",
        "",
    ]
    return "\n".join(lines)


def parse_m(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"--m needs integers, got {text!r}") from err
    if not values or min(values) < 2:
        raise argparse.ArgumentTypeError(f"--m needs integers >= 2, got {text!r}")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--store", type=Path, help="directory for the studies (resumable)")
    parser.add_argument("--sampler", default="auto", choices=["auto", "pymc", "nutpie"])
    parser.add_argument("--quick", action="store_true", help="4 replicates, short chains")
    parser.add_argument("--design", choices=["fixed", "redrawn"], default="fixed")
    parser.add_argument(
        "--m", type=parse_m, default=None, help="points per source (comma list; redrawn "
        "default 10,50,200, fixed 50)",
    )  # fmt: skip
    parser.add_argument("--n-bootstrap", type=int, default=50)
    parser.add_argument("--truth-replicates", type=int, default=2000)
    parser.add_argument("--random-state", type=int, default=0)
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument(
        "--batched", action="store_true",
        help="batch the logistic fits of the CV and bootstrap tables (run_study(batched=True))",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.m is None:
        args.m = [50] if args.design == "fixed" else [10, 50, 200]
    if args.design == "fixed" and len(args.m) != 1:
        parser.error("--design fixed takes one M")
    if args.quick:
        args.replicates = min(args.replicates, 4)
        args.truth_replicates = min(args.truth_replicates, 40)
    for name in ("replicates", "n_bootstrap", "truth_replicates"):
        if getattr(args, name) < 2:
            parser.error(f"--{name.replace('_', '-')} must be at least 2")
    command = "python benchmarks/calibrate_bayes.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    load_before = load_average()
    started = time.perf_counter()
    result = run_fixed(args) if args.design == "fixed" else run_redrawn(args)
    out = {
        "date": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "command": command,
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "quick": args.quick,
        "wall_s": time.perf_counter() - started,
        "load_before": load_before,
        "load_after": load_average(),
        "machine": machine_info(
            [p for p in PACKAGES if importlib.util.find_spec(MODULES.get(p, p))], cpu=True
        ),
        args.design: result,
    }
    name = "calibrate_bayes" if args.design == "fixed" else "calibrate_bayes_redrawn"
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / f"{name}.json").write_text(
        json.dumps(out, indent=2, default=float) + "\n", encoding="utf-8"
    )
    text = markdown_fixed(out) if args.design == "fixed" else markdown_redrawn(out)
    (args.out_dir / f"{name}.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
