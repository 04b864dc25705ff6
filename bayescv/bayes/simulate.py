"""Loss tables drawn from the model's own generative process.

For recovery tests, coverage checks with a known truth and prior-predictive work:
e_ki = μ_k + u_k + ε_ki with u ~ MVN(0, Γ), Γ = diag(s) [(1 − ρ) I + ρ 11ᵀ] diag(s) and
ε_ki ~ N(0, ν_k), independently per realisation; the μ_k are held fixed (the sources of one
study) unless drawn by the caller.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from bayescv._provenance import resolve_seed
from bayescv.bayes._stats import gamma_matrix
from bayescv.losses import from_arrays

__all__ = ["simulate_losses"]


def simulate_losses(
    sizes: Any,
    *,
    mu: Any,
    nu: Any,
    gamma_sd: Any,
    rho: float,
    n_replicates: int | None = None,
    scheme: str = "source",
    random_state: int | np.random.Generator | None = None,
) -> xr.Dataset:
    """Draw a loss table from the Gaussian block model.

    Parameters
    ----------
    sizes : array-like of int, shape (K,)
        Points per block.
    mu, nu, gamma_sd : array-like of shape (K,) or scalar
        Block mean errors μ_k, within-block variances ν_k and between-block standard
        deviations sqrt(ω_k).
    rho : float
        Common correlation of Γ, in (−1/(K−1), 1).
    n_replicates : int, optional
        Number of independent realisations (same μ_k, fresh u and ε); a ``replicate`` dim
        with ``replicate_kind="independent"``. Default: one table without the dim.
    scheme : {"source", "random"}, default "source"
        The table's scheme; with "source" each block is its own source.
    random_state : None, int or numpy.random.Generator
        Seed.

    Returns
    -------
    xarray.Dataset
        A loss table (:mod:`bayescv.losses`).

    Examples
    --------
    >>> from bayescv.bayes.simulate import simulate_losses
    >>> t = simulate_losses([3, 4], mu=[0.1, 0.2], nu=1.0, gamma_sd=0.1, rho=0.0,
    ...                     random_state=0)
    >>> t.sizes["obs"]
    7
    """
    sizes = np.asarray(sizes, dtype=int)
    k = sizes.size
    mu, nu, gamma_sd = (
        np.broadcast_to(np.asarray(v, dtype=float), (k,)) for v in (mu, nu, gamma_sd)
    )
    rng = np.random.default_rng(resolve_seed(random_state))
    reps = 1 if n_replicates is None else int(n_replicates)
    block = np.repeat(np.arange(k), sizes)
    gam = gamma_matrix(gamma_sd, np.asarray(rho))
    u = rng.multivariate_normal(np.zeros(k), gam, size=reps, method="cholesky")
    eps = rng.standard_normal((reps, block.size)) * np.sqrt(nu[block])
    loss = mu[block] + u[:, block] + eps
    if n_replicates is None:
        return from_arrays(loss[0], block, scheme=scheme, loss_name="simulated")
    return from_arrays(
        loss,
        np.broadcast_to(block, loss.shape),
        scheme=scheme,
        replicate_kind="independent",
        loss_name="simulated",
    )
