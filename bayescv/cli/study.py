"""``bayescv study``: run a coverage study, or summarise a stored one."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from bayescv._extras import missing_extra
from bayescv.cli._checks import (
    bad_n_jobs,
    comma_list,
    show_progress,
    unwritable_dir,
    unwritable_file,
)

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the ``study`` subcommand to the ``bayescv`` parser.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of the ``bayescv`` command.
    """
    parser = sub.add_parser(
        "study",
        help="coverage study of the interval methods on a scenario with known truth",
        description=(
            "Draw replicates of a scenario with known truth, run every selected interval "
            "method on each, and print coverage (with Monte Carlo errors), miscoverage high "
            "and low, widths and the bias of the variance estimates. With --out the study is "
            "written as it runs and resumes from what is there. --summary PATH prints the "
            "summary of a stored study."
        ),
    )
    parser.add_argument(
        "--scenario", default="bates-logistic", help="scenario name (bates-logistic; --list)"
    )
    parser.add_argument("--n-replicates", type=int, default=100, help="replicates (100)")
    parser.add_argument("--methods", default="all", help="'all', 'closed_form' or names a,b,c")
    parser.add_argument(
        "--learner", help="learner name, as --list shows them (default: the scenario's)"
    )
    parser.add_argument("--design", choices=("sources_fixed", "sources_redrawn"))
    parser.add_argument("--scheme", choices=("source", "random"), help="multi-source CV scheme")
    parser.add_argument("--level", type=float, default=0.95, help="nominal coverage (0.95)")
    parser.add_argument("--random-state", type=int, default=0, help="random seed (0)")
    parser.add_argument("--n-jobs", type=int, default=None, help="parallel workers (joblib)")
    parser.add_argument("--backend", choices=("joblib", "dask"), default="joblib")
    parser.add_argument("--scheduler", help="Dask scheduler address (default: a local cluster)")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="METHOD.KEY=VALUE",
        help="method option, e.g. nested_cv.n_repeats=20 (repeatable)",
    )
    parser.add_argument("--out", type=Path, help="store (.nc or .zarr): written as it runs")
    parser.add_argument("--summary", type=Path, metavar="PATH", help="summarise a stored study")
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="hide the progress bar (hidden anyway when stderr is not a terminal)",
    )
    parser.add_argument("--list", action="store_true", help="list scenarios, learners, methods")
    parser.set_defaults(func=_run)


def _fail(message: str) -> int:
    print(f"bayescv study: error: {message}", file=sys.stderr)
    return 2


# A value that starts like a JSON object, array, string or number must parse as JSON.
_LOOKS_LIKE_JSON = re.compile(r'\s*([\[{"]|[-+]?\.?\d)')


def _options(items: list[str]) -> dict[str, dict[str, Any]]:
    """Parse ``METHOD.KEY=VALUE`` items: VALUE as JSON, else (a bare word) as a string."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        method, dot, name = key.partition(".")
        if not (sep and dot and method and name):
            raise ValueError(f"--option must look like METHOD.KEY=VALUE, got {item!r}")
        if not raw.strip():
            raise ValueError(f"--option {key} has no value")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as error:
            if _LOOKS_LIKE_JSON.match(raw):
                raise ValueError(
                    f"--option {key}: {raw!r} is not valid JSON ({error.msg}, column "
                    f"{error.colno}); quote a string as '\"text\"'"
                ) from None
            value = raw  # a bare word: kind=t
        if name in out.get(method, {}):
            raise ValueError(f"--option {key} given twice; give each option once")
        out.setdefault(method, {})[name] = value
    return out


def _listing() -> str:
    from bayescv.compare import available_methods, get_method, unavailable_methods
    from bayescv.compare.catalog import SCENARIOS
    from bayescv.cv.learners import LEARNERS

    lines = ["scenarios: " + ", ".join(SCENARIOS), "learners: " + ", ".join(LEARNERS), "methods:"]
    for name in available_methods():
        m = get_method(name)
        lines.append(f"  {name:18s} {m.cost:9s} {m.description}")
    for name, reason in unavailable_methods().items():
        lines.append(f"  {name:18s} (unavailable: {reason})")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    from bayescv.compare import load_study, resolve_methods, run_study, summarize, summary_table
    from bayescv.compare._store import StoreInUseError, StudyStore, check_store_name
    from bayescv.compare.catalog import make_scenario
    from bayescv.compare.registry import check_method_options
    from bayescv.cv.learners import make_learner

    if args.list:
        print(_listing())
        return 0
    if args.summary is not None:
        if not args.summary.exists():
            return _fail(f"{args.summary}: no such file")
        ignored = [
            flag for flag, value, default in (
                ("--scenario", args.scenario, "bates-logistic"),
                ("--n-replicates", args.n_replicates, 100), ("--methods", args.methods, "all"),
                ("--learner", args.learner, None), ("--design", args.design, None),
                ("--scheme", args.scheme, None), ("--out", args.out, None),
                ("--option", args.option, []), ("--level", args.level, 0.95),
                ("--random-state", args.random_state, 0), ("--n-jobs", args.n_jobs, None),
                ("--backend", args.backend, "joblib"), ("--scheduler", args.scheduler, None),
            )
            if value != default
        ]  # fmt: skip
        if ignored:
            print(
                f"note: {', '.join(ignored)} ignored: --summary reads the study as stored",
                file=sys.stderr,
            )
        try:
            table = summary_table(summarize(load_study(args.summary)))
        except (ValueError, OSError, KeyError) as error:
            message = str(error).splitlines()[0]
            # the store's advice on resuming a run; --summary only reads
            message = message.replace(
                "; move it away or use another path",
                ": --summary reads a study that `bayescv study --out` wrote (.nc or .zarr)",
            )
            return _fail(f"{args.summary}: {message}")
        print(table)
        return 0
    problem = bad_n_jobs(args.n_jobs)
    if not problem and args.scheduler and args.backend != "dask":
        problem = (
            f"--scheduler {args.scheduler} is the address of a Dask scheduler: give "
            "--backend dask with it, or leave it out (joblib runs here)"
        )
    if not problem and args.backend == "dask":
        problem = missing_extra(["dask", "distributed"], "dask", what="--backend dask")
    if not problem and args.out is not None:
        try:  # x.csv was written as NetCDF under that name
            check_store_name(args.out)
        except ValueError as error:
            return _fail(f"--out {args.out}: {error}")
        # A .zarr store is a directory (an existing one is resumed); a .nc one a file.
        if args.out.suffix == ".zarr":
            where = unwritable_dir(args.out.parent)
        else:
            where = unwritable_file(args.out)
        problem = where and f"--out {args.out}: {where}"
    if problem:
        return _fail(problem)
    try:
        if args.n_replicates < 1:
            raise ValueError(f"--n-replicates must be positive, got {args.n_replicates}")
        # before the note on the costly methods, which would announce a run that never starts
        if not 0 < args.level < 1:
            raise ValueError(f"--level must be a number in (0, 1), got {args.level}")
        if not 0 <= args.random_state < 2**63:
            raise ValueError(f"--random-state must be in [0, 2**63), got {args.random_state}")
        scenario = make_scenario(args.scenario, design=args.design, scheme=args.scheme)
        learner = None if args.learner is None else make_learner(args.learner, task=scenario.task)
        methods_arg = args.methods.strip()
        names = methods_arg if methods_arg in ("all", "closed_form") else comma_list(methods_arg)
        methods = resolve_methods(names)
        options = check_method_options(methods, _options(args.option))
        if args.n_replicates == 1:
            raise ValueError(
                "--n-replicates 1: a coverage study needs at least 2 replicates (coverage "
                "and its Monte Carlo error are rates over data sets)"
            )
        # the replicates stored in --out are read, not computed: they cost no time
        stored = set() if args.out is None else StudyStore(args.out).stored_replicates()
    except (ValueError, ImportError) as error:
        return _fail(str(error).splitlines()[0])
    to_run = len(set(range(args.n_replicates)) - stored)
    costly = [m for m in methods if m.cost != "losses"]
    if costly and to_run:
        # "all" is the default: say up front which methods dominate the run time
        print(_cost_note(costly, to_run), file=sys.stderr)
    kwargs = {
        "level": args.level, "random_state": args.random_state, "n_jobs": args.n_jobs,
        "backend": args.backend, "store": args.out, "progress": show_progress(args),
        "method_options": options, "error_score": float("nan"),
    }  # fmt: skip
    try:
        if args.backend == "dask":
            study = _with_dask(
                args, lambda: run_study(scenario, learner, names, args.n_replicates, **kwargs)
            )
        else:
            study = run_study(scenario, learner, names, args.n_replicates, **kwargs)
    except (ValueError, StoreInUseError) as error:
        return _fail(str(error).splitlines()[0])
    failed = study["flag"].str.startswith("error")
    errors = int(failed.sum())
    if errors == failed.size:
        first = str(study["flag"].values.flat[0])
        where = "" if args.out is None else f" (study written to {args.out})"
        print(
            f"bayescv study: every method run failed ({errors} of {errors}){where}; "
            f"first: {first}",
            file=sys.stderr,
        )
        return 1
    print(summary_table(summarize(study)))
    if errors:
        print(f"\n{errors} method run(s) failed; see the 'flag' variable of the study")
    if args.out is not None:
        print(f"\nwrote {args.out} ({study.attrs['wall_time_s']:.1f} s)")
    return 0


def _cost_note(costly: list[Any], n_replicates: int) -> str:
    """Two lines: what the costly methods do, and how to run a study that takes less time.

    `n_replicates` counts the replicates to compute (those stored in ``--out`` are read).

    No time is promised for them (it depends on the learner, the scenario and the machine);
    ``--methods closed_form`` took 9 to 26 s for 100 replicates of the default settings of
    bates-logistic, multi-source-student-t and multi-source-error-rate on one core.
    """
    # the descriptions without their options (bayescv study --list shows those)
    what = "; ".join(f"{m.name}: {m.description.split(' (options')[0]}" for m in costly)
    names = ", ".join(m.name for m in costly)
    return (
        f"note: {what}.\n"
        f"note: {names} {'dominates' if len(costly) == 1 else 'dominate'} the run time of "
        f"the {n_replicates} replicate{'' if n_replicates == 1 else 's'} to run; "
        "`--methods closed_form` (one CV run per replicate) takes seconds to minutes, "
        "and --n-replicates N runs fewer."
    )


def _with_dask(args: argparse.Namespace, run: Any) -> Any:
    from distributed import Client, LocalCluster

    if args.scheduler:
        with Client(args.scheduler):
            return run()
    with (
        # dashboard_address=None means Dask's default, :8787; ":0" takes any free port
        LocalCluster(
            n_workers=args.n_jobs or 1, threads_per_worker=1, dashboard_address=":0"
        ) as cluster,
        Client(cluster),
    ):
        return run()
