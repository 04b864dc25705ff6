"""Priors of the hierarchical model, scaled to the data.

:class:`Priors` holds a few unit-free multipliers; :meth:`Priors.scaled_to` turns them into
the numbers the model uses, from the scales of the losses at hand, so that the same priors
serve a 0-1 loss and a squared error in score points² alike. Every prior respects the
admissible region of Bengio & Grandvalet (2004): within-block variances are positive and the
between-block covariance Γ is positive semi-definite by construction, so every prior draw is
the covariance of some loss distribution.

The data scales, all computed from the observed table (for independent realisations, from
their pooled statistics):

* ``s_w²``: pooled within-block variance, Σ_k W_k / Σ_k (n_k − 1);
* ``s_b``: the scale of the block means, sqrt(var(ē_k) + s_w² / n̄), never 0;
* ``m`` and ``s_tot``: mean and standard deviation of all losses;
* ``N``: the number of points of one realisation.

Why each prior (see also ``docs/bayes.md``):

* ``mu0 ~ Normal(m, (mu0_sd · s_tot)²)``: the mean error of the sources lies within a few
  loss standard deviations of the observed mean; wide enough that it is always the data, not
  the prior, that place it.
* ``tau ~ HalfNormal(tau_sd · s_b)``: the spread of the source means is of the order of the
  spread of the observed block means; a half-normal on the standard deviation (Gelman 2006,
  doi:10.1214/06-BA117A) lets τ go to 0 (identical sources) without a spike there.
* ``nu_k ~ InverseGamma(within_shape, (within_shape − 1) · s_w²)``: prior mean s_w²; the
  inverse gamma vanishes at 0, so a block whose losses are all equal (W_k = 0, for example a
  source without errors under a 0-1 loss) still has a proper posterior, which a half-normal
  on the standard deviation would not give (the χ² likelihood then grows without bound as
  ν_k → 0).
* ``sqrt(omega_k) ~ HalfStudentT(gamma_df, gamma_sd · s_w / sqrt(N))``: the variance that a
  block's mean error owes to the training set is put on the scale of the test-set sampling
  variance of the overall mean, s_w² / N, the scale under which θ_B of Geras & Sutton (2013)
  is nearly unbiased; the Student-t tail lets bootstrap or independent replicates override it.
  With one realisation this prior, not the data, sets the between-block covariance and so θ
  (Bengio & Grandvalet's theorem in Bayesian form).
* ``rho = −1/(K−1) + K/(K−1) · b``, ``b ~ Beta(rho_beta, rho_beta)``: the common correlation of
  the training-set effects, uniform-ish over its admissible range (−1/(K−1), 1), where
  Γ = diag(s) [(1 − ρ) I + ρ 11ᵀ] diag(s) is positive definite; the Beta(2, 2) keeps it off the
  singular ends.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Priors"]


@dataclass(frozen=True)
class Priors:
    """Unit-free prior settings of the hierarchical CV-error model.

    Each field multiplies a scale computed from the data (see the module docstring), so the
    defaults suit any loss. Change a field with :func:`dataclasses.replace` or by passing
    keywords: ``Priors(gamma_sd=2.0)``.

    Parameters
    ----------
    mu0_sd : float, default 2.5
        Prior standard deviation of the mean source error μ₀ (CVR: of the common mean μ),
        in units of the standard deviation of all losses; centred at their mean. Unused by
        the 0-1 model (:mod:`bayescv.bayes.binomial_model`), whose level has Jeffreys' prior.
    tau_sd : float, default 2.0
        Half-normal scale of the between-source standard deviation τ, in units of the
        scale of the block means ``s_b``. Unused by the CVR model.
    within_shape : float, default 2.0
        Shape α > 1 of the inverse-gamma prior of each within-block variance ν_k; its scale
        is (α − 1) s_w², so that the prior mean is the pooled within-block variance.
    gamma_sd : float, default 1.0
        Half-Student-t scale of each between-block standard deviation sqrt(ω_k), in units
        of s_w / sqrt(N), the standard error of the overall mean from test-set sampling.
    gamma_df : float, default 3.0
        Degrees of freedom of that half-Student-t.
    rho_beta : float, default 2.0
        Both parameters of the Beta prior on the rescaled common correlation of Γ.

    Examples
    --------
    >>> from bayescv.bayes import Priors
    >>> Priors(gamma_sd=2.0).gamma_sd
    2.0
    >>> Priors(within_shape=1.0)
    Traceback (most recent call last):
    ...
    ValueError: within_shape must be > 1 (a finite prior mean), got 1.0
    """

    mu0_sd: float = 2.5
    tau_sd: float = 2.0
    within_shape: float = 2.0
    gamma_sd: float = 1.0
    gamma_df: float = 3.0
    rho_beta: float = 2.0

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{field.name} must be a number, got {value!r}")
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{field.name} must be finite and positive, got {value!r}")
        if self.within_shape <= 1:
            raise ValueError(
                f"within_shape must be > 1 (a finite prior mean), got {self.within_shape!r}"
            )

    def scaled_to(self, scales: Mapping[str, float], n_blocks: int) -> dict[str, Any]:
        """Numeric prior parameters for data with the given scales.

        Parameters
        ----------
        scales : mapping
            ``mean``, ``sd_total``, ``sd_within``, ``sd_between`` and ``n_points`` of the
            data, as computed by :func:`bayescv.bayes.model.collapse`.
        n_blocks : int
            Number of blocks K (at least 2).

        Returns
        -------
        dict
            ``mu0_loc``, ``mu0_scale``, ``tau_scale``, ``nu_alpha``, ``nu_beta``,
            ``gamma_scale``, ``gamma_df``, ``rho_a``, ``rho_lower`` (the admissible lower
            bound −1/(K−1)), all floats.

        Examples
        --------
        >>> p = Priors().scaled_to(
        ...     {"mean": 0.3, "sd_total": 0.5, "sd_within": 0.4, "sd_between": 0.1,
        ...      "n_points": 400}, n_blocks=5)
        >>> p["gamma_scale"], p["rho_lower"]
        (0.02, -0.25)
        """
        if n_blocks < 2:
            raise ValueError(f"the model needs at least two blocks, got {n_blocks}")
        sd_within = float(scales["sd_within"])
        if not sd_within > 0:
            raise ValueError(
                "all losses are equal within every block: there is no variance to model"
            )
        return {
            "mu0_loc": float(scales["mean"]),
            "mu0_scale": self.mu0_sd * float(scales["sd_total"]),
            "tau_scale": self.tau_sd * float(scales["sd_between"]),
            "nu_alpha": float(self.within_shape),
            "nu_beta": (self.within_shape - 1.0) * sd_within**2,
            "gamma_scale": self.gamma_sd * sd_within / math.sqrt(float(scales["n_points"])),
            "gamma_df": float(self.gamma_df),
            "rho_a": float(self.rho_beta),
            "rho_lower": -1.0 / (n_blocks - 1),
        }

    def draw(
        self,
        scaled: Mapping[str, float],
        n_blocks: int,
        size: int,
        rng: np.random.Generator,
        *,
        scheme: str = "source",
    ) -> dict[str, np.ndarray]:
        """Draw parameters from the prior with numpy.

        Parameters
        ----------
        scaled : mapping
            Output of :meth:`scaled_to`.
        n_blocks : int
            Number of blocks K.
        size : int
            Number of draws.
        rng : numpy.random.Generator
            Source of randomness.
        scheme : {"source", "random"}, default "source"
            The CVS model (per-block ν_k, ω_k and a hierarchy over sources) or the CVR model
            (one ν, one ω, one common mean).

        Returns
        -------
        dict of ndarray
            ``mu0`` and ``tau`` (CVR: ``mu`` only) of shape (size,), ``nu`` and
            ``gamma_sd`` of shape (size, K) (CVR: (size,)), ``rho`` of shape (size,).
        """
        per = (size, n_blocks) if scheme == "source" else (size,)
        out: dict[str, np.ndarray] = {}
        loc = rng.normal(scaled["mu0_loc"], scaled["mu0_scale"], size)
        if scheme == "source":
            out["mu0"] = loc
            out["tau"] = np.abs(rng.normal(0.0, scaled["tau_scale"], size))
        else:
            out["mu"] = loc
        out["nu"] = scaled["nu_beta"] / rng.gamma(scaled["nu_alpha"], 1.0, per)
        out["gamma_sd"] = np.abs(scaled["gamma_scale"] * rng.standard_t(scaled["gamma_df"], per))
        b = rng.beta(scaled["rho_a"], scaled["rho_a"], size)
        out["rho"] = scaled["rho_lower"] + (1.0 - scaled["rho_lower"]) * b
        return out
