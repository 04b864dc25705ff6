"""``bayescv demo``: CV of a ridge regression on the Tennessee STAR data, start to end.

CVS (leave-one-school-out) and CVR (10-fold); prints the CV errors, block sizes, per-school
mean losses, closed-form intervals, the hierarchical model's posterior intervals and a small
coverage study. ``--out DIR`` also writes the loss tables (NetCDF) and plots (PNG).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayescv._extras import BAYES_MODULES, DATA_MODULES, missing_extra
from bayescv.cli._checks import (
    bad_n_jobs,
    show_progress,
    target_legend,
    unwritable_dir,
    unwritable_file,
)


def register(subparsers: Any) -> None:
    """Add the ``demo`` subcommand to the ``bayescv`` parser.

    Parameters
    ----------
    subparsers : argparse subparsers action
        What :meth:`argparse.ArgumentParser.add_subparsers` returned.
    """
    demo = subparsers.add_parser(
        "demo",
        help="CVS and CVR on the Tennessee STAR data (79 schools)",
        description=(
            "Run leave-one-school-out CV (CVS) and random 10-fold CV (CVR) of a ridge "
            "regression predicting kindergarten test scores on the Tennessee STAR data, "
            "and print the CV errors, block sizes and per-school mean losses."
        ),
    )
    demo.add_argument(
        "--out", type=Path, help="also write loss tables (NetCDF) and a plot (PNG) here"
    )
    demo.add_argument("--n-splits", type=int, default=10, help="folds for CVR (default: 10)")
    demo.add_argument("--random-state", type=int, default=0, help="random seed (default: 0)")
    demo.add_argument("--n-jobs", type=int, default=None, help="parallel fits (default: 1)")
    demo.add_argument(
        "--no-progress",
        action="store_true",
        help=(
            "hide progress bars (hidden anyway when stderr is not a terminal); without them, "
            "each stage says one line on stderr"
        ),
    )
    demo.add_argument(
        "--no-bayes", action="store_true", help="skip the hierarchical Bayesian model"
    )
    demo.set_defaults(func=_run_demo)


# What ``bayescv demo --out DIR`` writes into DIR (the last two: bayescv.compare.demo_study).
_DEMO_FILES = (
    "losses_cvs.nc",
    "losses_cvr.nc",
    "per_source_losses.png",
    "study.nc",
    "study.png",
)


def _demo_fail(message: str) -> int:
    print(f"bayescv demo: error: {message}", file=sys.stderr)
    return 2


def _demo_problem(args: argparse.Namespace) -> str:
    """Why the demo cannot run as asked (options, packages, --out), or ''; before any work."""
    if args.n_splits < 2:
        return f"--n-splits must be an integer >= 2, got {args.n_splits}"
    if bad_n_jobs(args.n_jobs):
        return bad_n_jobs(args.n_jobs)
    if not 0 <= args.random_state < 2**32:  # scikit-learn's random_state range
        return f"--random-state must be an integer in [0, 2**32), got {args.random_state}"
    missing = [missing_extra(DATA_MODULES, "data", what="the Tennessee STAR data")]
    if not args.no_bayes:
        bayes = missing_extra(BAYES_MODULES, "bayes", what="the hierarchical Bayesian model")
        missing.append(bayes and f"{bayes} (or run with --no-bayes)")
    if any(missing):
        return "; ".join(m for m in missing if m)
    if args.out is not None:
        problem = unwritable_dir(args.out)
        if problem:
            return f"--out {args.out}: {problem}"
        for name in _DEMO_FILES:
            problem = unwritable_file(args.out / name)
            if problem:
                return f"--out {args.out}: {name} {problem}"
    return ""


def _run_demo(args: argparse.Namespace) -> int:
    problem = _demo_problem(args)
    if problem:
        return _demo_fail(problem)
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import KFold

    from bayescv.cv import cross_val_losses
    from bayescv.datasets import load_star
    from bayescv.losses import to_netcdf

    star = load_star(target="total")
    if args.n_splits > len(star.target):
        return _demo_fail(
            f"--n-splits {args.n_splits} is more than the {len(star.target)} pupils of the data"
        )
    model = Ridge(alpha=1.0)
    bar = show_progress(args)
    common = {
        "loss": "squared",
        "random_state": args.random_state,
        "n_jobs": args.n_jobs,
        "progress": bar,
    }
    stage = _stage_line(not bar)
    n_schools = star.groups.nunique()
    print(f"Tennessee STAR kindergarten: {len(star.target)} pupils in {n_schools} schools")
    print(f"model: {model!r}, target: total scaled score (math + reading), loss: squared error\n")
    stage(f"leave-one-school-out CV ({n_schools} fits) and {args.n_splits}-fold CV")
    cvs = cross_val_losses(model, star.data, star.target, groups=star.groups, **common)
    splitter = KFold(args.n_splits, shuffle=True, random_state=args.random_state)
    cvr = cross_val_losses(
        model, star.data, star.target, groups=star.groups, cv=splitter, **common
    )

    print(_overview({"CVS (leave one school out)": cvs, f"CVR ({args.n_splits}-fold)": cvr}))
    print(
        "\nPer-school mean loss (CVS: school held out; CVR: the school's pupils in random folds)"
    )
    print(_per_source(cvs, cvr).to_string(float_format=lambda v: f"{v:,.0f}"))

    print("\nHow much to trust the CV errors: 95% intervals from closed-form variance estimates")
    print(_intervals({"CVS": cvs, f"CVR ({args.n_splits}-fold)": cvr}))

    if not args.no_bayes:
        stage(
            f"hierarchical Bayesian model: {_N_BOOTSTRAP} bootstrap-replicated CV runs "
            f"({_N_BOOTSTRAP * n_schools} fits), then MCMC"
        )
        print(_bayes_section(model, star, cvs, args))

    if args.out is not None:
        _write_outputs(args.out, cvs, cvr, to_netcdf)

    from bayescv.compare import demo_study

    stage(f"coverage study: {_N_STUDY} simulated data sets, 10-fold CV of each")
    print(
        "\n"
        + demo_study(
            random_state=args.random_state,
            n_jobs=args.n_jobs,
            progress=show_progress(args),
            n_replicates=_N_STUDY,
            out=args.out,
        )
    )
    return 0


def _stage_line(show: bool) -> Any:
    """Return a function that announces a stage of the demo on stderr when `show`.

    Without progress bars (``--no-progress``, or stderr not a terminal: a log file, a pipe)
    the demo's minute of work must not look hung: each stage says one line on stderr, and
    stdout is flushed first, so that ``bayescv demo > out.txt`` fills the file as it goes.
    """

    def stage(text: str) -> None:
        sys.stdout.flush()
        if show:
            print(f"bayescv demo: {text}...", file=sys.stderr, flush=True)

    return stage


#: Simulated data sets of the demo's coverage study.
_N_STUDY = 200

#: Bootstrap-replicated CV runs behind the hierarchical model's covariance of school means.
_N_BOOTSTRAP = 20

#: The population rows of the demo's predictive check (``new_sources_{spread,skewness}``).
_SHAPE = ("spread", "skewness")


def _bayes_section(model, star, cvs, args: argparse.Namespace) -> str:
    """Posterior intervals of the hierarchical model on the CVS table, with its diagnostics."""
    # The extra "bayes" was checked before any work (_demo_problem).
    import warnings

    from bayescv._provenance import child_seeds
    from bayescv.bayes import fit, posterior_intervals, predictive_check
    from bayescv.cv import bootstrap_cv_losses

    boot_seed, fit_seed = child_seeds(args.random_state, 2)
    boot = bootstrap_cv_losses(
        model, star.data, star.target, groups=star.groups, loss="squared",
        n_bootstrap=_N_BOOTSTRAP, random_state=boot_seed, n_jobs=args.n_jobs,
        progress=show_progress(args),
    )  # fmt: skip
    with warnings.catch_warnings():
        # a failed diagnostic is printed below and flags the intervals; no second warning
        warnings.filterwarnings("ignore", category=UserWarning, module="bayescv")
        # The default sampler, as users get it: nutpie on the disk-cached model if installed
        idata = fit(cvs, bootstrap=boot, random_state=fit_seed)
    ci = posterior_intervals(idata, level=0.95)
    table = ci[["estimate", "lower", "upper", "target", "flag"]].to_dataframe()
    diag = idata.sample_stats.attrs
    check = predictive_check(idata)
    p_value = {s: float(check["p_value"].sel(check=f"new_sources_{s}")) for s in _SHAPE}
    return "\n".join(
        [
            f"\nThe hierarchical Bayesian model (CVS; {_N_BOOTSTRAP} bootstrap-replicated CV "
            f"runs inform the covariance of the school means; a {diag['population']} "
            "population of schools): "
            "95% posterior intervals",
            table.to_string(float_format=lambda v: f"{v:,.1f}"),
            f"sampler {diag['sampler']}: r-hat max {diag['rhat_max']:.3f}, bulk ESS min "
            f"{diag['ess_bulk_min']:.0f}, {diag['divergences']} divergences "
            f"({diag['problems'] or 'converged'}); {diag['fit_seconds']:.0f} s",
            "expected_cv: these 79 schools; ose: the mean over the population of schools; "
            "new_source: one new school (predictive).",
            f"population check, the 79 school means against sets of new schools: spread p = "
            f"{p_value['spread']:.2f}, skewness p = {p_value['skewness']:.3f} (near 0 or 1: "
            "the schools are not a likely draw from this population).",
        ]
    )


# The demo's intervals: methods defined for unequal block sizes (STAR schools differ in size
# and 5748 pupils do not split into 10 equal folds).
_DEMO_METHODS = {
    "source": ("naive_points", "naive_folds", "theta_A_weighted", "theta_B_weighted"),
    "random": ("naive_points", "naive_folds", "bayle_within", "nadeau_bengio"),
}


def _intervals(tables: dict) -> str:
    from bayescv.classical import cv_intervals

    frames, kinds = [], set()
    for name, table in tables.items():
        ci = cv_intervals(table, _DEMO_METHODS[table.attrs["scheme"]], level=0.95)
        kinds.add(ci.attrs["kind"])
        frame = ci[["estimate", "lower", "upper", "se", "flag"]].to_dataframe()
        frames.append(frame.reset_index().assign(scheme=name).set_index(["scheme", "method_name"]))
    frame = pd.concat(frames)
    # which quantile, the table, then what each target code is, in words
    return (
        f"quantile: {', '.join(sorted(kinds))} (kind='auto'; the degrees of freedom in "
        "cv_intervals' docs)\n"
        + frame.to_string(float_format=lambda v: f"{v:,.1f}")
        + "\n"
        + target_legend(frame["target"])
    )


def _overview(tables: dict) -> str:
    rows = []
    for name, table in tables.items():
        loss = table["loss"].values
        sizes = pd.Series(table["block"].values).value_counts()
        rows.append(
            {
                "scheme": name,
                "blocks": sizes.size,
                "block size min/median/max": f"{sizes.min()} / {sizes.median():g} / {sizes.max()}",
                "CV error (MSE)": f"{loss.mean():,.1f}",
                "RMSE": f"{np.sqrt(loss.mean()):.2f}",
            }
        )
    return pd.DataFrame(rows).set_index("scheme").to_string()


def _per_source(cvs, cvr) -> pd.DataFrame:
    def by_source(table):
        return pd.DataFrame(
            {"source": table["source"].values, "loss": table["loss"].values}
        ).groupby("source")["loss"]

    out = pd.DataFrame(
        {
            "n": by_source(cvs).size(),
            "CVS mean": by_source(cvs).mean(),
            "CVR mean": by_source(cvr).mean(),
        }
    )
    out.index.name = "school"
    return out


def _write_outputs(out: Path, cvs, cvr, to_netcdf) -> None:
    # A figure of its own (no pyplot backend switched): main() may run in a notebook.
    from matplotlib.figure import Figure

    from bayescv.plots import plot_block_losses

    out.mkdir(parents=True, exist_ok=True)
    to_netcdf(cvs, out / "losses_cvs.nc")
    to_netcdf(cvr, out / "losses_cvr.nc")
    fig = Figure(figsize=(12, 4.5), layout="constrained")
    ax = plot_block_losses({"CVS": cvs, "CVR": cvr}, by="source", ax=fig.subplots())
    ax.set_title("Tennessee STAR: CV loss per school (ridge regression, total scaled score)")
    ax.set_xlabel("school (source), sorted by CVS mean loss")
    ax.set_ylabel("mean squared error ± 1 SE (score points²)")
    ax.figure.savefig(out / "per_source_losses.png", dpi=120)
    print(
        f"\nwrote {out / 'losses_cvs.nc'}, {out / 'losses_cvr.nc'} and {out / 'per_source_losses.png'}"
    )
