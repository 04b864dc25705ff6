"""Checks that the ``bayescv`` subcommands run before any long work.

Each returns the reason a request cannot be served, as a phrase for a one-line error
(``bayescv <sub>: error: <message>``, exit status 2), or ``""`` when all is well: an output
path that cannot be written, an ``--n-jobs`` that joblib rejects. Missing optional packages
are named by :func:`bayescv._extras.missing_extra`.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "REPLICATE_KINDS",
    "add_loss_range",
    "add_replicate_kind",
    "bad_n_jobs",
    "comma_list",
    "parse_loss_range",
    "read_losses",
    "show_progress",
    "target_legend",
    "unknown_methods",
    "unwritable_dir",
    "unwritable_file",
    "with_loss_range",
]


#: What each estimand (:data:`bayescv.ESTIMANDS`) is, in words, for the text the commands print.
TARGET_WORDS = {
    "expected_cv": "the expected CV error with these sources fixed, new data drawn within them",
    "ose": "the mean error over the population of sources (Geras & Sutton 2013, eq. 3)",
    "new_source": "the error of one new source",
    "err": "the expected error of a model trained on this many points (Bates et al.'s Err)",
    "err_xy": "the error of the model fitted on these data (Bates et al.'s Err_XY)",
    "kfold_test_error": "the mean error of the K fitted fold models (Bayle et al. 2020)",
    "target_risk": "the expected loss on the shifted target domain",
}


def target_legend(targets: Any) -> str:
    """Say in one line what each distinct target of the printed intervals is.

    Parameters
    ----------
    targets : iterable of str
        The ``target`` of each printed row.

    Returns
    -------
    str
        ``"targets: err = ...; kfold_test_error = ..."`` in order of first appearance, or
        ``""`` for none.

    Examples
    --------
    >>> target_legend(["err", "err", "err_xy"])[:28]
    'targets: err = the expected '
    """
    seen = list(dict.fromkeys(str(t) for t in targets if str(t)))
    said = [f"{t} = {TARGET_WORDS.get(t, 'see bayescv.ESTIMANDS')}" for t in seen]
    return f"targets: {'; '.join(said)}" if said else ""


def comma_list(text: str) -> list[str]:
    """Split an option's ``"a,b"`` or ``"a, b"``: a space after a comma is no part of a name.

    Parameters
    ----------
    text : str
        The option's value.

    Returns
    -------
    list of str
    """
    return [part.strip() for part in text.split(",")]


def show_progress(args: Any) -> bool:
    """Whether to draw progress bars: unless ``--no-progress``, or stderr is not a terminal.

    A bar redrawn into a log file or a pipe (CI, ``2>&1 | tee``) writes every update as
    text; tqdm's own rule hides it there.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options with ``no_progress``.

    Returns
    -------
    bool
    """
    return not args.no_progress and sys.stderr.isatty()


def unwritable_dir(path: Path) -> str:
    """Say why files cannot be written into the directory `path`, created if missing.

    Parameters
    ----------
    path : pathlib.Path
        The directory.

    Returns
    -------
    str
        ``""`` when a temporary file could be created there, else the reason.
    """
    if path.exists() and not path.is_dir():
        return "exists and is not a directory"
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError as err:
        return f"cannot write there ({err.strerror or type(err).__name__})"
    return ""


def unwritable_file(path: Path) -> str:
    """Say why the file `path` cannot be written; its directory is created if missing.

    Parameters
    ----------
    path : pathlib.Path
        The file.

    Returns
    -------
    str
        ``""`` when it can be written (or overwritten), else the reason.
    """
    if path.is_dir():
        return "is a directory, not a file"
    problem = unwritable_dir(path.parent)
    if problem:
        return f"directory {path.parent}: {problem}"
    if path.exists() and not os.access(path, os.W_OK):
        return "exists and cannot be overwritten (permission denied)"
    return ""


def bad_n_jobs(n_jobs: int | None) -> str:
    """Say why `n_jobs` is not a joblib worker count (None or a non-zero integer)."""
    if n_jobs is None or n_jobs != 0:
        return ""
    return (
        "--n-jobs must be a non-zero integer (-1 for all cores, -2 for all but one, "
        f"as in joblib), got {n_jobs}"
    )


def unknown_methods(methods: list[str] | str | None, paired: bool = False) -> str:
    """Say why ``bayescv variance --methods`` names a method it cannot run, or ``""``.

    ``bootstrap`` reads bootstrap-replicated CV runs beside the observed run, which a loss
    CSV does not carry: it is refused here with the Python way to run it, and left out of
    the methods the command lists as known.

    Parameters
    ----------
    methods : list of str, "all" or None
        The parsed option.
    paired : bool, default False
        Whether ``--paired`` was given: :func:`bayescv.paired_comparison` has no bootstrap
        interval at all.

    Returns
    -------
    str

    Examples
    --------
    >>> unknown_methods(["naive_points", "theta_B"]), unknown_methods("all")
    ('', '')
    >>> unknown_methods(["theta_b"])[-25:]
    "(did you mean 'theta_B'?)"
    """
    from bayescv._names import did_you_mean
    from bayescv.classical import INTERVAL_METHODS

    if methods is None or methods == "all":
        return ""
    if "bootstrap" in methods and paired:
        return (
            "--methods bootstrap is not available with --paired: the paired comparison has "
            "no bootstrap interval"
        )
    if "bootstrap" in methods:
        return (
            "--methods bootstrap needs bootstrap-replicated CV runs beside the observed run, "
            "which `bayescv variance` does not read; in Python: bayescv.cv_intervals(observed, "
            "['bootstrap'], bootstrap=bayescv.cv.bootstrap_cv_losses(...))"
        )
    unknown = [m for m in methods if m not in INTERVAL_METHODS]
    if not unknown:
        return ""
    return (
        f"unknown interval method(s) {unknown} in --methods; known: "
        f"{', '.join(INTERVAL_METHODS)}, or 'all'{did_you_mean(unknown[0], INTERVAL_METHODS)}"
    )


def read_losses(path: Any, args: Any) -> Any:
    """Read the loss table a subcommand was given, in any format the package writes.

    One reader for every subcommand (:func:`bayescv.losses.read_table`: CSV with or without
    its header line, or NetCDF), with the column options ``--loss-col``, ``--block-col``,
    ``--source-col``, ``--scheme`` and, where the subcommand has it, ``--replicate-kind``
    of `args`.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    args : argparse.Namespace
        The subcommand's options.

    Returns
    -------
    xarray.Dataset
        The loss table.

    Raises
    ------
    ValueError
        One line naming the file and the problem.
    """
    from bayescv.losses import TableFormatError, read_table

    if path.is_dir():
        raise ValueError(f"{path}: is a directory, not a loss-table file")
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    kind = getattr(args, "replicate_kind", None)
    try:
        table = read_table(
            path,
            loss=args.loss_col,
            block=args.block_col,
            source=args.source_col,
            scheme=args.scheme,
            replicate_kind=kind,
        )
    except TableFormatError as error:
        raise ValueError(_as_options(path, error, args)) from None
    except ValueError as error:
        message = str(error)
        if message.endswith("has no 'loss' variable") and _is_study(path):
            message += (
                ": it is a coverage study, not a loss table; summarise it with "
                f"`bayescv study --summary {path}`"
            )
        raise ValueError(message) from None
    return with_loss_range(table, getattr(args, "loss_range", None), path)


def _as_options(path: Path, error: Any, args: Any) -> str:
    """Say the reader's refusal of a column or an attribute in terms of the CLI's options."""
    message = str(error)
    if error.missing_attribute == "replicate_kind":
        # a plain CSV with a 'replicate' column: an attribute is no CLI user's way out
        return f"{path}: the file has a 'replicate' column (of CV runs); " + (
            "say what its runs are with --replicate-kind repeat, bootstrap or independent"
            if hasattr(args, "replicate_kind")
            else "this command reads one run: keep the rows of one run, without that column"
        )
    if error.extra_attribute == "replicate_kind":
        return (
            f"{path}: --replicate-kind {args.replicate_kind} is for a file of several CV "
            "runs, and this one has no 'replicate' column (one run): leave the option out"
        )
    role = (error.missing_column or ("", ""))[0]
    # --source-col has no default: the user named it; a message with advice keeps its own
    if role in ("loss", "block") and not error.advice:
        return f"{message}; name the {role} column with --{role}-col"
    return message


def _is_study(path: Path) -> bool:
    """Whether `path` is a NetCDF file that :func:`bayescv.compare.run_study` wrote."""
    import xarray as xr

    try:
        with xr.open_dataset(path) as data:
            return data.attrs.get("title") == "bayescv coverage study"
    except (OSError, ValueError):
        return False


#: What the runs of a file of several CV runs can be (``--replicate-kind``).
REPLICATE_KINDS = ("repeat", "bootstrap", "independent")


def add_replicate_kind(parser: Any, also: str = "") -> None:
    """Add ``--replicate-kind`` to a subcommand's parser (read by :func:`read_losses`).

    A table written by ``bayescv.to_csv`` or ``to_netcdf`` carries its kind; a plain CSV
    with a ``replicate`` column needs the option, and :func:`read_losses` says so.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    also : str, optional
        More help text, after the common part.
    """
    parser.add_argument(
        "--replicate-kind",
        choices=REPLICATE_KINDS,
        default=None,
        help=f"what the runs of a plain CSV with a 'replicate' column are{also}",
    )


def add_loss_range(parser: Any, also: str = "") -> None:
    """Add ``--loss-range LOW,HIGH`` to a subcommand's parser (read by :func:`read_losses`).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    also : str, optional
        More help text, after the common part.
    """
    parser.add_argument(
        "--loss-range",
        metavar="LOW,HIGH",
        help=(
            "the values the loss can take, e.g. 0,1 or 0,inf (a plain CSV declares none): "
            f"bounds are kept inside it{also}"
        ),
    )


def with_loss_range(table: Any, text: str | None, path: Any) -> Any:
    """Set ``--loss-range`` on a table read from `path` and check its losses lie inside it.

    Parameters
    ----------
    table : xarray.Dataset
        The loss table.
    text : str or None
        The option's value; None leaves the table as read.
    path : pathlib.Path
        The file, for the message.

    Returns
    -------
    xarray.Dataset
        The table.

    Raises
    ------
    ValueError
        One line naming the file, for a malformed range or a loss outside it.
    """
    if text is None:
        return table
    from bayescv.losses import validate

    table.attrs["loss_range"] = parse_loss_range(text)
    try:
        validate(table)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    return table


def parse_loss_range(text: str) -> list[float]:
    """Parse ``LOW,HIGH`` into two floats (``inf`` allowed for HIGH), or a one-line error.

    Parameters
    ----------
    text : str
        The option's value.

    Returns
    -------
    list of float

    Raises
    ------
    ValueError
        When it is not two numbers with LOW < HIGH.
    """
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise ValueError(f"--loss-range must be LOW,HIGH (e.g. 0,inf), got {text!r}") from None
    if not low < high:
        raise ValueError(f"--loss-range must have LOW < HIGH, got {text!r}")
    return [low, high]
