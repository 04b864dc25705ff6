"""The machinery shared by the estimators of :mod:`bayescv.classical.estimators`.

:class:`Estimator` pairs an estimator's core on :class:`BlockStats` with its bias and the
assumption under which it is unbiased; :func:`document` completes the docstring of a public
function of a loss table from that specification.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from inspect import cleandoc
from typing import TypeVar

import numpy as np
import xarray as xr

from bayescv.classical._block_stats import BlockStats, as_result, block_stats

__all__ = ["THETA", "Estimator", "document"]


@dataclass(frozen=True)
class Estimator:
    """An estimator of θ: its core on :class:`BlockStats`, bias and when it is unbiased.

    Callable on a loss table, as the public function of the same name; it pickles.
    """

    name: str
    func: Callable[[BlockStats], np.ndarray]
    bias: str
    assumption: str
    equal_sizes: bool

    def __call__(self, losses: xr.Dataset | BlockStats) -> xr.DataArray:
        stats = block_stats(losses)
        attrs = {"bias": self.bias, "assumption": self.assumption}
        return as_result(self.func(stats), stats, self.name, attrs)


_F = TypeVar("_F", bound=Callable)

#: The Returns text of every function that returns an estimate of θ.
THETA = (
    "The estimate of θ = Var(μ̂): 0-d, or along ``replicate`` when the table has one;\n"
    "    attrs ``bias`` and ``assumption``."
)

_EXAMPLES = "\n\nExamples\n--------\n"


def document(returns: str, specs: Mapping[str, Estimator] | None = None) -> Callable[[_F], _F]:
    """Complete the docstring of a function of a loss table, returning the function itself.

    Appends the bias and assumption of the estimator of the same name in `specs` (if any)
    and the numpydoc sections shared by every estimator, before the function's own
    Examples section (if any).
    """

    def decorate(func: _F) -> _F:
        doc, _, examples = cleandoc(func.__doc__ or "").partition(_EXAMPLES)
        spec = (specs or {}).get(func.__name__)
        if spec is not None:
            sizes_note = (
                " Needs equal block sizes (raises ValueError otherwise)."
                if spec.equal_sizes
                else ""
            )
            doc += f"\n\nUnbiased if {spec.assumption}. Bias: ``{spec.bias}``.{sizes_note}"
        func.__doc__ = (
            f"{doc}\n\nParameters\n----------\nlosses : xarray.Dataset or BlockStats\n"
            "    A loss table, its block moments, or :func:`block_stats` of either.\n\n"
            f"Returns\n-------\nxarray.DataArray\n    {returns}\n"
        )
        if examples:
            func.__doc__ += f"\n{_EXAMPLES.lstrip()}{examples}\n"
        return func

    return decorate
