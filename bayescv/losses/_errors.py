"""The structured error of loss-table reading and validation.

Re-exported by :mod:`bayescv.losses`.
"""

from __future__ import annotations

from os import PathLike

__all__ = ["TableFormatError", "with_path"]


class TableFormatError(ValueError):
    """A loss table or file lacks a column or attribute it needs, or has one it cannot hold.

    A :class:`ValueError` whose message is the one a user reads; its attributes tell a
    program which of these it is, so that a caller (such as the command line, which turns
    them into its options) need not match the text.

    Parameters
    ----------
    message : str
        The message.
    missing_column : (str, str), optional
        The role (``"loss"``, ``"block"``, ``"source"``, ...) and the name of a column that
        a file lacks.
    missing_attribute : str, optional
        The name of a table attribute that is needed and absent (``"replicate_kind"`` for
        a table with a ``replicate`` dimension).
    extra_attribute : str, optional
        The name of an attribute given for a table that cannot hold it
        (``"replicate_kind"`` for a table of one run).
    advice : str, default ""
        The way out that the message already gives, beyond naming the problem; ``""`` when
        it gives none.

    Examples
    --------
    >>> from bayescv.losses import TableFormatError, from_arrays
    >>> try:
    ...     from_arrays([[1.0, 2, 3, 4], [1, 2, 3, 4]], [0, 0, 1, 1])
    ... except TableFormatError as error:
    ...     print(error.missing_attribute)
    replicate_kind
    """

    def __init__(
        self,
        message: str,
        *,
        missing_column: tuple[str, str] | None = None,
        missing_attribute: str | None = None,
        extra_attribute: str | None = None,
        advice: str = "",
    ) -> None:
        super().__init__(message)
        self.missing_column = missing_column
        self.missing_attribute = missing_attribute
        self.extra_attribute = extra_attribute
        self.advice = advice


def with_path(path: str | PathLike[str], error: ValueError) -> ValueError:
    """Return `error` with its message led by ``"{path}: "``, of the same kind.

    A :class:`TableFormatError` keeps its attributes; any other error becomes a plain
    :class:`ValueError`, as the readers raised before.
    """
    message = f"{path}: {error}"
    if not isinstance(error, TableFormatError):
        return ValueError(message)
    return TableFormatError(
        message,
        missing_column=error.missing_column,
        missing_attribute=error.missing_attribute,
        extra_attribute=error.extra_attribute,
        advice=error.advice,
    )
