"""The whole Proposition-1 family of quadratic CVR estimators, and the moments they combine.

Every quadratic estimator of θ = Var(μ̂) that is invariant to permutations of the points
within and across the K equal blocks is a combination A s1 + B s2 + C s3 of the empirical
moments of Geras & Sutton (2013, §4.2) (:func:`gs_moments`); its bias is
α₁σ² + α₂ω + α₃γ + α₄μ², and Proposition 1 of Geras & Sutton (2013) says which biases are
possible. θ_1…θ_5 of :mod:`bayescv.classical.estimators` are members;
:func:`quadratic_estimator` builds any other.

References
----------
Geras, K. J. & Sutton, C. (2013). Multiple-source cross-validation. ICML, PMLR 28(3),
1292–1300.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from bayescv.classical._block_stats import (
    BlockStats,
    as_result,
    block_stats,
    centred_moments,
    pair_mask,
    require_equal,
    sizes,
)

__all__ = ["gs_moments", "quadratic_estimator"]


@dataclass(frozen=True)
class _QuadraticEstimator:
    """A member of the Proposition-1 family, callable on a loss table; pickles by value."""

    alphas: tuple[float, float, float, float]

    def __post_init__(self) -> None:
        # The instance's own name and docstring, as a function made for it would have.
        object.__setattr__(self, "__name__", "quadratic_estimator")
        object.__setattr__(self, "__doc__", f"Quadratic CVR estimator with bias {self.bias}.")

    @property
    def bias(self) -> str:
        """The bias α₁σ² + α₂ω + α₃γ + α₄μ² as a formula."""
        a1, a2, a3, a4 = self.alphas
        return f"{a1:g} sigma^2 + {a2:g} omega + {a3:g} gamma + {a4:g} mu^2"

    def __repr__(self) -> str:
        return f"quadratic_estimator({', '.join(f'{a:g}' for a in self.alphas)})"

    def __call__(self, losses: xr.Dataset | BlockStats) -> xr.DataArray:
        stats = block_stats(losses)
        require_equal(stats, "quadratic_estimator")
        a1, a2, a3, a4 = self.alphas
        N, M = stats.N, stats.M
        t1, t2, t3 = centred_moments(stats)
        value = (a1 + 1 / N) * t1 + (a2 + (M - 1) / N) * t2 + (a3 + (N - M) / N) * t3
        return as_result(value + a4 * stats.m**2, stats, "theta_quadratic", {"bias": self.bias})


def quadratic_estimator(
    alpha1: float, alpha2: float, alpha3: float, alpha4: float
) -> _QuadraticEstimator:
    """Build the CVR quadratic estimator with bias α₁σ² + α₂ω + α₃γ + α₄μ² (Geras & Sutton 2013, Prop. 1).

    A quadratic estimator with that bias exists if and only if α₁ + α₂ + α₃ − α₄ = −1
    (Geras & Sutton 2013, Proposition 1, whose last bias term, printed α₄μ, multiplies μ²);
    it is A s1 + B s2 + C s3 with A = α₁ + 1/N, B = α₂ + (M−1)/N, C = α₃ + (N−M)/N.
    θ_1…θ_5 are members: θ_5 is ``quadratic_estimator(0, 1, -2, 0)``.

    Parameters
    ----------
    alpha1, alpha2, alpha3, alpha4 : float
        The bias coefficients of σ², ω, γ and μ².

    Returns
    -------
    callable
        ``estimator(losses) -> xarray.DataArray`` (named ``theta_quadratic``, attr ``bias``);
        needs equal block sizes. It pickles, for joblib or Dask.

    Examples
    --------
    >>> from bayescv.classical import theta_5
    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> est = quadratic_estimator(0, 1, -2, 0)
    >>> bool(np.isclose(est(table), theta_5(table)))
    True
    """
    alphas = tuple(float(a) for a in (alpha1, alpha2, alpha3, alpha4))
    if not all(np.isfinite(alphas)):
        raise ValueError(f"the alphas must be finite, got {list(alphas)}")
    a1, a2, a3, a4 = alphas
    if not np.isclose(a1 + a2 + a3 - a4, -1.0, rtol=0, atol=1e-12):
        raise ValueError(
            "Proposition 1 needs alpha1 + alpha2 + alpha3 - alpha4 = -1, "
            f"got {a1 + a2 + a3 - a4:.6g}"
        )
    return _QuadraticEstimator(alphas)


def gs_moments(losses: xr.Dataset | BlockStats) -> xr.Dataset:
    """Compute the empirical moments of Geras & Sutton (2013, §4.2), per block and pooled.

    Parameters
    ----------
    losses : xarray.Dataset or BlockStats
        A loss table, its block moments, or :func:`~bayescv.classical.block_stats`
        of either.

    Returns
    -------
    xarray.Dataset
        ``s_sigma2`` and ``s_omega`` along ``block``; ``s_gamma`` along
        ``(block, block_other)`` (NaN on the diagonal; O(K²) memory); pooled ``s1``,
        ``s2``, ``s3``; a leading ``replicate`` dim when the table has one. Computed with
        each block's own size, so they are defined for unequal sizes too.

    Examples
    --------
    >>> from bayescv.losses import from_arrays
    >>> m = gs_moments(from_arrays([1.0, 3.0, 2.0, 6.0], [0, 0, 1, 1]))
    >>> m["s_sigma2"].values.tolist(), m["s_omega"].values.tolist(), float(m["s3"])
    ([5.0, 20.0], [3.0, 12.0], 8.0)
    """
    stats = block_stats(losses)
    n = sizes(stats)
    e2 = stats.means**2
    s_sigma2 = np.where(stats.present, stats.W / n + e2, np.nan)
    s_omega = np.where(stats.present, e2 - stats.W / (n * (n - 1)), np.nan)
    pair = stats.means[:, :, None] * stats.means[:, None, :]
    s_gamma = np.where(pair_mask(stats), pair, np.nan)
    K = stats.K
    pooled = {
        "s1": np.nanmean(s_sigma2, axis=1),
        "s2": np.nanmean(s_omega, axis=1),
        "s3": stats.m**2 - stats.D / (K * (K - 1)),
    }
    return xr.Dataset(
        {
            "s_sigma2": as_result(s_sigma2, stats, "s_sigma2", dims=("block",)),
            "s_omega": as_result(s_omega, stats, "s_omega", dims=("block",)),
            "s_gamma": as_result(s_gamma, stats, "s_gamma", dims=("block", "block_other")),
            **{name: as_result(value, stats, name) for name, value in pooled.items()},
        },
        coords={"block": stats.labels, "block_other": stats.labels},
    )
