"""The ``bayescv`` command: one module per subcommand.

Each module listed in ``_SUBCOMMAND_MODULES`` has a ``register(subparsers)`` function that
adds its parser and sets ``func``. Bad options, a missing optional package and an output that
cannot be written give a one-line error and exit status 2 before any work.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from bayescv._provenance import package_version

__all__ = ["build_parser", "main"]

# Modules that each add one subcommand through ``register(subparsers)``.
_SUBCOMMAND_MODULES: tuple[str, ...] = (
    "bayescv.cli.demo",
    "bayescv.cli.variance",
    "bayescv.cli.bayes",
    "bayescv.cli.nested",
    "bayescv.cli.study",
    "bayescv.cli.compare",
)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``bayescv`` command.

    Returns
    -------
    argparse.ArgumentParser
        The parser, with one subparser per subcommand.

    Examples
    --------
    >>> args = build_parser().parse_args(["variance", "losses.csv", "--level", "0.9"])
    >>> args.command, args.level, args.kind, args.format
    ('variance', 0.9, 'auto', 'table')
    """
    parser = argparse.ArgumentParser(
        prog="bayescv",
        description="How much to trust a cross-validation error estimate.",
    )
    parser.add_argument("--version", action="version", version=f"bayescv {package_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    for name in _SUBCOMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``bayescv`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status.

    Examples
    --------
    ``bayescv variance`` on a loss CSV, its JSON report captured:

    >>> import contextlib, io, json, pathlib, tempfile
    >>> from bayescv.losses import from_arrays, to_csv
    >>> table = from_arrays([0.1, 0.4, 0.2, 0.3, 0.5, 0.2], [0, 0, 1, 1, 2, 2])
    >>> out = io.StringIO()
    >>> with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(out):
    ...     path = pathlib.Path(folder) / "losses.csv"
    ...     to_csv(table, path)
    ...     status = main(["variance", str(path), "--methods", "theta_B", "--format", "json"])
    >>> report = json.loads(out.getvalue())
    >>> status, report["K"], [round(bound, 3) for bound in report["intervals"]["theta_B"]]
    (0, 3, [-0.159, 0.725])
    """
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        # The reader went away (`bayescv variance x.csv | head`): stop quietly, as Unix tools
        # do, and keep Python from reporting the failed flush of stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
