"""``bayescv bayes LOSSES.csv``: fit the hierarchical model to a loss table from a CSV file.

The CSV is long-format, one row per test point, with a loss column and a block column (and
optionally a source column). The command prints the posterior summary (ArviZ), the
convergence diagnostics and the posterior intervals of ``expected_cv`` (the sources at hand),
``ose`` (the mean error over new sources) and ``new_source`` (the error of one new source); with
``--plot DIR`` it also writes the predictive-check, posterior and (CVS) population-check
figures there. A CVS fit also prints its population check: the p-values of the spread and
skewness of the source means against sets of new sources from the fitted population. Bad input
gives a one-line error and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from pathlib import Path
from typing import Any

from bayescv._extras import BAYES_MODULES, import_quietly, missing_extra
from bayescv.cli._checks import (
    add_loss_range,
    add_replicate_kind,
    read_losses,
    show_progress,
    unwritable_dir,
    with_loss_range,
)

__all__ = ["register"]

_SUMMARY_VARS = [
    "expected_cv", "ose", "new_source", "theta", "mu0", "mu", "alpha", "tau", "rho",
    "log_mu0", "log_tau",
]  # fmt: skip


def register(subparsers: Any) -> None:
    """Add the ``bayes`` subcommand to the ``bayescv`` parser.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The subparsers of the main parser.
    """
    p = subparsers.add_parser(
        "bayes",
        help="fit the hierarchical Bayesian model to a loss table (CSV)",
        description=(
            "Fit the collapsed hierarchical model of CV errors (bayescv.bayes) to a long-format "
            "loss table and print the posterior summary and the intervals for the mean error "
            "of the sources at hand (expected_cv), the mean error over new sources (ose) and "
            "the error of one new source (new_source)."
        ),
    )
    p.add_argument("losses", type=Path, help="CSV file, one row per test point")
    p.add_argument("--loss-col", default="loss", help="loss column (default: loss)")
    p.add_argument(
        "--block-col", default="block", help="block (fold/source) column (default: block)"
    )
    p.add_argument("--source-col", default=None, help="source column (default: none)")
    p.add_argument(
        "--scheme",
        choices=["source", "random"],
        default=None,
        help=(
            "CVS model (hierarchy over sources) or CVR model (exchangeable folds); default "
            "'source' when --source-col gives one source per block, else 'random'"
        ),
    )
    p.add_argument(
        "--likelihood",
        choices=["auto", "binomial", "gaussian"],
        default="auto",
        help=(
            "binomial: error counts of 0-1 losses (bounds inside [0, 1]); gaussian: any "
            "loss; default auto, binomial when every loss is 0 or 1"
        ),
    )
    p.add_argument(
        "--population",
        choices=["auto", "normal", "lognormal"],
        default="auto",
        help=(
            "population of the source error levels behind ose and new_source (Gaussian "
            "likelihood, CVS): lognormal for losses whose spread grows with their level, "
            "such as squared errors; default auto, lognormal when the losses' range is "
            "[0, inf) (a table that names its loss, or --loss-range 0,inf), else normal"
        ),
    )
    add_replicate_kind(p)
    p.add_argument(
        "--bootstrap",
        type=Path,
        default=None,
        metavar="FILE",
        help=(
            "bootstrap replicates of the same CV (bayescv.bootstrap_cv_losses, written with "
            "bayescv.to_netcdf or to_csv): they inform the fold effects, which one table "
            "alone leaves to the prior"
        ),
    )
    add_loss_range(p, also=" (the posterior intervals and the flag truncated_to_range)")
    p.add_argument("--draws", type=int, default=1000, help="draws per chain (default: 1000)")
    p.add_argument("--tune", type=int, default=1000, help="tuning steps per chain (default: 1000)")
    p.add_argument("--chains", type=int, default=4, help="chains (default: 4)")
    p.add_argument(
        "--target-accept",
        type=float,
        default=None,
        help="NUTS' target acceptance rate, in (0, 1); higher means smaller steps, for a fit "
        "that did not converge (default: 0.8, 0.98 for the binomial likelihood)",
    )
    p.add_argument(
        "--sampler",
        choices=["auto", "pymc", "nutpie", "numpyro"],
        default="auto",
        help="NUTS implementation (default: auto, nutpie if installed, else pymc)",
    )
    p.add_argument("--level", type=float, default=0.95, help="interval level (default: 0.95)")
    p.add_argument(
        "--kind",
        choices=["eti", "hdi"],
        default="eti",
        help="interval kind: equal-tailed or highest-density (default: eti)",
    )
    p.add_argument("--random-state", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--plot", type=Path, default=None, metavar="DIR", help="write figures here")
    p.add_argument(
        "--format",
        choices=["table", "json"],
        default="table",
        dest="fmt",
        help="output (default: table)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="hide the sampler's progress bar (hidden anyway when stderr is not a terminal)",
    )
    p.set_defaults(func=_run)


def _cli_advice(message: str) -> str:
    """Name the command line's options as a warning's ways out, where it names Python's."""
    from bayescv.bayes._diagnostics import BOOTSTRAP_ADVICE, SETTINGS_ADVICE
    from bayescv.tails import LOG_INTERVAL_ADVICE

    return (
        message.replace(SETTINGS_ADVICE, "--draws, --tune or a higher --target-accept")
        .replace(BOOTSTRAP_ADVICE, "--bootstrap FILE, written from bayescv.bootstrap_cv_losses")
        .replace(
            LOG_INTERVAL_ADVICE,
            "Prefer `bayescv variance FILE --methods theta_B_weighted --kind log` (with "
            "--loss-range 0,inf for a plain CSV; docs, 'When normal intervals fail')",
        )
    )


def _fail(message: str) -> int:
    print(f"bayescv bayes: error: {message}", file=sys.stderr)
    return 2


def _run(args: argparse.Namespace) -> int:
    problem = missing_extra(BAYES_MODULES, "bayes", what="the hierarchical model")
    if not problem and args.sampler == "nutpie":
        problem = missing_extra(["nutpie"], "bayes", what="--sampler nutpie")
    if not problem and args.sampler == "numpyro":
        problem = missing_extra(["numpyro", "jax"], "bayes-fast", what="--sampler numpyro")
    if problem:
        return _fail(problem)
    if not 0 < args.level < 1:
        return _fail(f"--level must be in (0, 1), got {args.level}")
    for name in ("draws", "tune", "chains"):
        if getattr(args, name) < 1:
            return _fail(f"--{name} must be a positive integer")
    if args.target_accept is not None and not 0 < args.target_accept < 1:
        return _fail(f"--target-accept must be in (0, 1), got {args.target_accept}")
    if args.plot is not None:
        problem = unwritable_dir(args.plot)
        if problem:
            return _fail(f"--plot {args.plot}: {problem}")
    try:
        table = read_losses(args.losses, args)
        bootstrap = None if args.bootstrap is None else _read_bootstrap(args, table)
    except (OSError, ValueError, TypeError) as err:
        return _fail(str(err).splitlines()[0] if str(err) else type(err).__name__)

    from bayescv.bayes import fit, posterior_intervals

    try:
        with warnings.catch_warnings(record=True) as caught:
            # The fit's own warnings (sampling, heavy tails, the blocks read as sources)
            # become "warning:" lines, not Python's file:line reports.
            warnings.simplefilter("always", UserWarning)
            idata = fit(
                table,
                bootstrap=bootstrap,
                scheme=args.scheme,
                likelihood=args.likelihood,
                population=args.population,
                draws=args.draws,
                tune=args.tune,
                chains=args.chains,
                target_accept=args.target_accept,
                sampler=args.sampler,
                random_state=args.random_state,
                progress=show_progress(args),
            )
    except (ValueError, ImportError) as err:
        return _fail(str(err).splitlines()[0])
    for w in caught:
        if issubclass(w.category, UserWarning):
            print(f"warning: {_cli_advice(str(w.message))}", file=sys.stderr)
        else:  # a dependency's deprecation notice, say: as Python would show it
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    intervals = posterior_intervals(idata, level=args.level, kind=args.kind)
    diag = dict(idata.sample_stats.attrs)
    if args.population == "auto" and _undeclared_nonnegative(table, diag):
        print(f"note: {_RANGE_NOTE}", file=sys.stderr)
    summary = _summary(idata, args.level)
    population = _population_check(idata)
    if args.fmt == "json":
        payload = _finite_or_null(_as_json(table, summary, intervals, diag))
        payload["population_check"] = population
        print(json.dumps(_finite_or_null(payload), indent=2, allow_nan=False))
    else:
        _print_table(table, summary, intervals, diag)
        _print_population_check(population, diag)
    if args.plot is not None:
        # In JSON mode stdout holds the JSON document alone.
        stream = sys.stderr if args.fmt == "json" else sys.stdout
        _plots(idata, args.plot, stream, n_population=len(population))
    return 0


def _read_bootstrap(args: argparse.Namespace, table: Any) -> Any:
    """Read ``--bootstrap FILE`` as the observed table was read.

    The column options and ``--scheme`` apply to it as to the losses, except that a
    self-describing file (NetCDF, or a CSV written by :func:`bayescv.to_csv`) names its own
    columns. A plain CSV names no loss (its ``loss_name`` is its loss column's name), so when
    either file is one, the bootstrap table takes the observed table's loss name instead of
    being refused as replicates of another loss.
    """
    from bayescv.losses import TableFormatError, read_table
    from bayescv.losses._io import self_describing

    path = args.bootstrap
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    plain = not self_describing(path)
    columns = {"loss": args.loss_col, "block": args.block_col, "source": args.source_col}
    try:
        bootstrap = read_table(
            path, **(columns if plain else {}), scheme=args.scheme, replicate_kind="bootstrap"
        )
    except TableFormatError as error:
        if error.extra_attribute != "replicate_kind":
            raise
        raise ValueError(
            f"{path}: --bootstrap needs a file of several bootstrap runs (a 'replicate' "
            "column, as bayescv.bootstrap_cv_losses writes), and this one holds one CV run"
        ) from None
    plain_losses = not self_describing(args.losses)
    if plain or plain_losses:
        bootstrap.attrs["loss_name"] = table.attrs.get("loss_name", "unknown")
    theirs, mine = bootstrap.attrs.get("scheme"), table.attrs.get("scheme")
    if plain_losses and args.scheme is None and theirs != mine:  # the losses' was a default
        raise ValueError(
            f"{path} holds replicates of {theirs!r} CV, but {args.losses} was read as "
            f"{mine!r} CV: pass --scheme {theirs}"
        )
    return with_loss_range(bootstrap, args.loss_range, path)


def _summary(idata, level: float):
    az = import_quietly("arviz")
    names = [v for v in _SUMMARY_VARS if v in idata.posterior.data_vars]
    return az.summary(idata, var_names=names, kind="all", round_to="none", hdi_prob=level)


def _finite_or_null(value: Any) -> Any:
    """Return the JSON payload with NaN and infinities as null (JSON has no such numbers)."""
    if isinstance(value, dict):
        return {k: _finite_or_null(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite_or_null(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _as_json(table, summary, intervals, diag) -> dict[str, Any]:
    keys = (
        "rhat_max", "ess_bulk_min", "ess_tail_min", "divergences", "problems", "sampler",
        "likelihood", "population", "target_accept",
    )  # fmt: skip
    return {
        "n_points": int(table.sizes["obs"]),
        "scheme": table.attrs["scheme"],
        "diagnostics": {k: diag[k] for k in keys},
        "intervals": {
            str(intervals["method_name"].values[i]): {
                "target": str(intervals["target"].values[i]),
                **{v: float(intervals[v].values[i]) for v in ("estimate", "lower", "upper", "se")},
                "flag": str(intervals["flag"].values[i]),
            }
            for i in range(intervals.sizes["method_name"])
        },
        "level": intervals.attrs["level"],
        "kind": intervals.attrs["kind"],
        "summary": {
            str(i): {c: float(v) for c, v in row.items()} for i, row in summary.iterrows()
        },
    }


_RANGE_NOTE = (
    "every loss is >= 0, but the file declares no range, so the normal population of sources "
    "was fitted (its new_source bounds can fall below 0); if the losses cannot be negative "
    "(squared or absolute errors, log loss), give --loss-range 0,inf for the lognormal "
    "population (docs: 'A lognormal population of sources')"
)


def _undeclared_nonnegative(table, diag) -> bool:
    """Whether `auto` fitted the normal population to CVS losses >= 0 of no declared range."""
    import numpy as np

    from bayescv.losses import effective_range

    fitted_normal = diag.get("likelihood") == "gaussian" and diag.get("population") == "normal"
    if not fitted_normal or table.attrs.get("scheme") != "source":
        return False
    return effective_range(table) == (-np.inf, np.inf) and bool(table["loss"].min() >= 0)


def _population(diag) -> str:
    """`` (lognormal population of sources)`` when asked for; nothing for the default."""
    population = diag.get("population", "normal")
    return "" if population == "normal" else f" ({population} population of sources)"


def _print_table(table, summary, intervals, diag) -> None:
    import pandas as pd

    print(
        f"{table.sizes['obs']} losses, scheme {table.attrs['scheme']!r}; "
        f"{diag['likelihood']} likelihood{_population(diag)}; sampler {diag['sampler']}, "
        f"{diag['sampling_seconds']:.1f} s sampling"
    )
    status = diag["problems"] or "ok"
    print(
        f"diagnostics: r-hat max {diag['rhat_max']:.3f}, ESS bulk min {diag['ess_bulk_min']:.0f}, "
        f"tail min {diag['ess_tail_min']:.0f}, divergences {diag['divergences']} ({status})\n"
    )
    # HDI columns (at the interval level) only for --kind hdi: beside equal-tailed intervals
    # they would print a second, slightly different interval for the same target.
    kind_hdi = str(intervals.attrs.get("kind", "")).endswith("hdi")
    hdi = [c for c in summary.columns if c.startswith("hdi_")] if kind_hdi else []
    cols = ["mean", "sd", *hdi, "ess_bulk", "ess_tail", "r_hat"]
    with pd.option_context("display.width", 120, "display.max_rows", 200):
        print(
            summary[[c for c in cols if c in summary.columns]].to_string(
                float_format="{:.4g}".format
            )
        )
    if diag.get("population") == "lognormal":
        print(
            "(mu0, tau: the normal model's, behind theta and expected_cv; the lognormal "
            "population of sources is log_mu0, log_tau, with ose = exp(log_mu0 + log_tau²/2))"
        )
    frame = intervals[["estimate", "lower", "upper", "se", "flag"]].to_dataframe()
    meaning = {
        "expected_cv": "the sources at hand" if table.attrs["scheme"] == "source"
        else "the CV error of these folds",
        "ose": "the mean over new sources",
        "new_source": "one new source",
    }  # fmt: skip
    targets = [str(t) for t in intervals["target"].values]
    legend = "; ".join(f"{t}: {meaning[t]}" for t in targets if t in meaning)
    print(f"\n{100 * intervals.attrs['level']:g}% intervals ({intervals.attrs['kind']}; {legend})")
    from bayescv.bayes._posterior import reports_median

    if any(reports_median(diag.get("population"), t) for t in targets):
        # the summary above gives the mean of every draw; say why the estimates differ
        print("(estimate: the posterior median for ose and new_source, the mean for expected_cv)")
    print(frame.to_string(float_format="{:.5g}".format))


def _population_check(idata) -> dict[str, dict[str, float]]:
    """Return the population rows of the predictive check: {statistic: observed, p_value}."""
    from bayescv.bayes import predictive_check
    from bayescv.bayes.checks import POPULATION_STATISTICS

    check = predictive_check(idata)
    rows = [c for c in POPULATION_STATISTICS if c in check["check"].values]
    return {
        row: {v: float(check[v].sel(check=row)) for v in ("observed", "p_value")} for row in rows
    }


def _print_population_check(population: dict, diag: dict) -> None:
    """Print whether the sources look like draws from the fitted population (CVS fits)."""
    if not population:
        return
    names = {"new_sources_spread": "spread", "new_sources_skewness": "skewness"}
    parts = ", ".join(f"{names[k]} p = {v['p_value']:.3f}" for k, v in population.items())
    print(
        f"\npopulation check (the source means against sets of new sources from the "
        f"{diag.get('population', 'normal')} population): {parts}"
    )
    if any(not 0.01 <= v["p_value"] <= 0.99 for v in population.values()):
        fitted = diag.get("population", "normal")
        if fitted == "lognormal":
            hint = " (see the docs, 'A lognormal population of sources', for its limits)"
        elif fitted != "normal":  # the binomial model's: --population does not apply
            hint = f" (the {fitted} population is the binomial model's only one)"
        elif any(v["p_value"] < 0.01 for v in population.values()):
            # Sources more spread or more right-skewed than normal ones: what a lognormal
            # population makes. Less spread or left-skewed ones it would fit worse.
            hint = " (for positive losses skewed to the right, try --population lognormal)"
        else:
            hint = " (the sources are closer together or less right-skewed than its draws)"
        print(
            "  a p-value below 0.01 or above 0.99: the observed sources do not look like a "
            "draw from this population" + hint
        )


def _plots(idata, out: Path, stream: Any, n_population: int) -> None:
    # Figures of their own (no pyplot): the CLI may run in-process, in a notebook whose
    # backend must not change.
    from matplotlib.figure import Figure

    from bayescv.bayes import plot_population_check, plot_ppc, plot_targets

    n_targets = sum(v in idata.posterior.data_vars for v in ("expected_cv", "ose", "new_source"))
    n_targets += "theta" in idata.posterior.data_vars
    layouts = {"ppc.png": (plot_ppc, 3, (13, 4)), "posterior.png": (plot_targets, n_targets, None)}
    if n_population:  # the population check's rows, one panel each
        layouts["population.png"] = (plot_population_check, n_population, None)
    for name, (draw, ncols, size) in layouts.items():
        fig = Figure(figsize=size or (4.3 * ncols, 3.6), layout="constrained")
        axes = fig.subplots(1, ncols)
        draw(idata, axes=axes if ncols > 1 else [axes])
        fig.savefig(out / name, dpi=110)
    names = [str(out / name) for name in layouts]
    print(f"\nwrote {', '.join(names[:-1])} and {names[-1]}", file=stream)
