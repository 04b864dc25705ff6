"""A covariate-shift example with exact answers: two Gaussians and a misfit linear model.

Source features ``x ~ N(0, s²)``, target features ``x ~ N(δ, s²)``; the same labelling
``y = x + σ ε`` in both (covariate shift), ``ε ~ N(0, 1)``; a fixed model ``h(x) = (1 - c) x``
that misses the slope by ``c``, scored with the squared loss, so that

``l(x, y) = (c x + σ ε)²``,   ``E[l | x] = c² x² + σ²``,
``E[l² | x] = c⁴ x⁴ + 6 c² σ² x² + 3 σ⁴``.

The density ratio is ``w(x) = N(x; δ, s²) / N(x; 0, s²) = exp(δ x / s² - δ² / (2 s²))``, and
``w^k p_S = exp(k (k - 1) δ² / (2 s²)) N(x; kδ, s²)``, so every moment the importance-weighting estimators
need is a Gaussian moment (``E[x²] = m² + s²``, ``E[x⁴] = m⁴ + 6 m² s² + 3 s⁴`` under
``N(m, s²)``):

* ``R_T = E_T[l] = c² (δ² + s²) + σ²`` (``= E_S[l w]``);
* ``Var_S(w) = exp(δ² / s²) - 1``;
* ``E_S[l w²] = exp(δ² / s²) E_{N(2δ, s²)}[l]``, ``E_S[l² w²] = exp(δ² / s²) E_{N(2δ, s²)}[l²]``.

The tests check these closed forms against numerical integration.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["GaussianShift"]

# exp(3 δ²/s²) (E_S[w³], in plugin_beta_bias) must stay below the float64 maximum, e^709.
_MAX_TILT = 700 / 3


def _check_size(size: Any) -> None:
    sizes = size if isinstance(size, tuple) else (size,)
    if not all(
        isinstance(k, int | np.integer) and not isinstance(k, bool) and k >= 0 for k in sizes
    ):
        raise ValueError(f"size must be a non-negative int or a tuple of them, got {size!r}")


@dataclass(frozen=True)
class GaussianShift:
    """Two Gaussian domains, a misfit linear model, squared loss: exact target risk and variances.

    Parameters
    ----------
    shift : float, default 1.0
        Distance ``δ`` between the source mean (0) and the target mean.
    scale : float, default 1.0
        Common standard deviation ``s`` of the features in both domains.
    misfit : float, default 0.5
        Slope error ``c`` of the model, so the loss grows with ``|x|``.
    noise : float, default 1.0
        Label noise standard deviation ``σ``.

    Examples
    --------
    >>> scenario = GaussianShift(shift=1.0)
    >>> scenario.target_risk, round(scenario.variance_ratio, 3)
    (1.5, 0.631)
    >>> x, loss, w = scenario.sample_source(5, rng=0)
    >>> x.shape, loss.shape, w.shape
    ((5,), (5,), (5,))
    """

    shift: float = 1.0
    scale: float = 1.0
    misfit: float = 0.5
    noise: float = 1.0

    def __post_init__(self) -> None:
        for name in ("shift", "scale", "misfit", "noise"):
            value = getattr(self, name)
            if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
                raise ValueError(f"{name} must be a real number, got {value!r}")
            if not np.isfinite(value):
                raise ValueError(f"{name} must be finite, got {value}")
        if not self.scale > 0:
            raise ValueError(f"scale must be positive, got {self.scale}")
        if self.noise < 0:
            raise ValueError(f"noise must be non-negative, got {self.noise}")
        if (self.shift / self.scale) ** 2 > _MAX_TILT:
            raise ValueError(
                f"shift / scale = {self.shift / self.scale:.3g} is too large: the weights' "
                f"moments exp(k δ²/s²), k ≤ 3, overflow float64; keep |shift / scale| ≤ "
                f"{np.sqrt(_MAX_TILT):.1f}"
            )

    # --- sampling ------------------------------------------------------------------------

    def density_ratio(self, x: Any) -> np.ndarray:
        """Return the true ``w(x) = p_T(x) / p_S(x) = exp(δ x / s² - δ² / (2 s²))``.

        Parameters
        ----------
        x : array-like
            Feature values.

        Returns
        -------
        ndarray
            The density ratio at `x`.
        """
        x = np.asarray(x, dtype=float)
        s2 = self.scale**2
        return np.exp(self.shift * x / s2 - self.shift**2 / (2 * s2))

    def sample_source(
        self, size: int | tuple[int, ...], rng: int | np.random.Generator | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Draw source points: features, their losses and their true weights.

        Parameters
        ----------
        size : int or tuple of int
            Output shape, for example ``(n_replicates, n)`` for a vectorised Monte Carlo.
        rng : None, int or numpy.random.Generator
            Random source.

        Returns
        -------
        x, loss, weight : ndarray of shape `size`
        """
        _check_size(size)
        rng = np.random.default_rng(rng)
        x = rng.normal(0.0, self.scale, size)
        return x, self.loss(x, rng), self.density_ratio(x)

    def sample_target(
        self, size: int | tuple[int, ...], rng: int | np.random.Generator | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Draw target points: features and their losses (labels a user would not have).

        Parameters
        ----------
        size : int or tuple of int
            Output shape.
        rng : None, int or numpy.random.Generator
            Random source.

        Returns
        -------
        x, loss : ndarray of shape `size`
        """
        _check_size(size)
        rng = np.random.default_rng(rng)
        x = rng.normal(self.shift, self.scale, size)
        return x, self.loss(x, rng)

    def loss(self, x: Any, rng: int | np.random.Generator | None = None) -> np.ndarray:
        """Squared loss ``(c x + σ ε)²`` of the misfit model at `x`, with fresh label noise.

        Parameters
        ----------
        x : array-like
            Feature values.
        rng : None, int or numpy.random.Generator
            Random source for the label noise.

        Returns
        -------
        ndarray
            One loss per value of `x`.
        """
        rng = np.random.default_rng(rng)
        x = np.asarray(x, dtype=float)
        return (self.misfit * x + self.noise * rng.standard_normal(x.shape)) ** 2

    # --- exact moments -------------------------------------------------------------------

    def _loss_moments(self, mean: float) -> tuple[float, float]:
        """``E[l]`` and ``E[l²]`` for ``x ~ N(mean, s²)``."""
        c, sigma, s2 = self.misfit, self.noise, self.scale**2
        x2 = mean**2 + s2
        x4 = mean**4 + 6 * mean**2 * s2 + 3 * s2**2
        return c**2 * x2 + sigma**2, c**4 * x4 + 6 * c**2 * sigma**2 * x2 + 3 * sigma**4

    @property
    def _tilt(self) -> float:
        """``E_S[w²] = exp(δ² / s²)``."""
        return float(np.exp(self.shift**2 / self.scale**2))

    @property
    def target_risk(self) -> float:
        """``R_T = E_T[l] = E_S[l w]``."""
        return self._loss_moments(self.shift)[0]

    @property
    def var_weights(self) -> float:
        """``Var_S(w) = exp(δ² / s²) - 1``."""
        return self._tilt - 1.0

    @property
    def var_weighted_loss(self) -> float:
        """``Var_S(l w) = E_S[l² w²] - R_T²``: ``n`` times the variance of ``R_W``."""
        return self._tilt * self._loss_moments(2 * self.shift)[1] - self.target_risk**2

    @property
    def cov_weighted_loss_weight(self) -> float:
        """``Cov_S(l w, w) = E_S[l w²] - R_T``."""
        return self._tilt * self._loss_moments(2 * self.shift)[0] - self.target_risk

    @property
    def optimal_beta(self) -> float:
        """``β* = Cov(l w, w) / Var(w)`` (NaN without shift)."""
        if self.var_weights == 0:
            return float("nan")
        return self.cov_weighted_loss_weight / self.var_weights

    def var_control_variate(self, beta: float | None = None) -> float:
        """``n Var(R_β) = Var(l w) - 2 β Cov(l w, w) + β² Var(w)``; ``beta=None`` means β*.

        Parameters
        ----------
        beta : float, optional
            The fixed coefficient; default the optimal one.

        Returns
        -------
        float
            The variance of one term ``l w - β (w - 1)``.
        """
        if beta is None:
            if self.var_weights == 0:
                return self.var_weighted_loss
            return self.var_weighted_loss - self.cov_weighted_loss_weight**2 / self.var_weights
        cov, var_w = self.cov_weighted_loss_weight, self.var_weights
        return self.var_weighted_loss - 2 * beta * cov + beta**2 * var_w

    def _weighted_moment(self, k: int) -> float:
        """``E_S[l w^k] = exp(k (k - 1) δ² / (2 s²)) E_{N(kδ, s²)}[l]``."""
        tilt = np.exp(k * (k - 1) * self.shift**2 / (2 * self.scale**2))
        return float(tilt * self._loss_moments(k * self.shift)[0])

    def plugin_beta_bias(self, n: int) -> float:
        """First-order bias of ``R_β`` with the plug-in β̂ from the same ``n`` points.

        ``R_β = mean(a) - β̂ (mean(w) - 1)`` with ``a = l w`` is the regression estimator
        of survey sampling; expanding ``β̂ - β* ≈ Σ e_i (w_i - 1) / (n Var(w))`` with the
        residual ``e = a - R_T - β* (w - 1)`` gives the bias
        ``-Cov(β̂, mean(w)) ≈ -E[e (w - 1)²] / (n Var(w))``, of order 1/n. Cross-fitting
        β removes it. Needs ``E_S[l w³]`` and ``E_S[w³] = exp(3 δ² / s²)``.

        Parameters
        ----------
        n : int
            Number of source points.

        Returns
        -------
        float
            The leading term of the bias (NaN without shift).
        """
        if self.var_weights == 0:
            return float("nan")
        e_w = [np.exp(k * (k - 1) * self.shift**2 / (2 * self.scale**2)) for k in range(4)]
        lw = [self._weighted_moment(k) for k in range(4)]
        e_lw_w1sq = lw[3] - 2 * lw[2] + lw[1]  # E[l w (w - 1)²]
        e_w1_cubed = e_w[3] - 3 * e_w[2] + 3 * e_w[1] - 1  # E[(w - 1)³]
        e_resid = e_lw_w1sq - self.target_risk * self.var_weights - self.optimal_beta * e_w1_cubed
        return float(-e_resid / (n * self.var_weights))

    @property
    def variance_ratio(self) -> float:
        """``Var(R_β*) / Var(R_W) = 1 - ρ²``, ρ the correlation of ``l w`` and ``w``."""
        return self.var_control_variate() / self.var_weighted_loss

    @property
    def ess_fraction(self) -> float:
        """Large-sample effective sample size per point, ``1 / E_S[w²] = exp(-δ² / s²)``."""
        return 1.0 / self._tilt
