"""The 0-1 model's log-density and its gradient in numba, cached on disk.

A transcription of the PyMC model of :mod:`bayescv.bayes.binomial_model` (its priors with the
Jacobians of the sampled coordinates, and the binomial likelihood of the block error
counts), written with its gradient by hand, as :mod:`bayescv.bayes._density` is for the
Gaussian model and for the same reason: numba caches these functions on disk, so a later
process loads them in well under a second instead of compiling the PyMC model. The tests
hold both equal to PyMC's ``logp`` and ``dlogp`` at random points, for both schemes.

Coordinates, in order (the unconstrained values PyMC samples): ``level_z`` (the mean block
logit η̄, under Jeffreys' prior), ``tau_z`` (CVS only), ``gamma_sd_z``, ``rho_b_logodds__`` and
``eta_z`` (K). The block logits are η = η̄ + sqrt(d) (z − z̄ 1) with d = τ² + (1 − ρ) s²: their
deviations from their mean, non-centred. α = η̄ − sqrt(e) z̄ (e = d + K ρ s²) does not enter
the density.
"""

from __future__ import annotations

import math
import threading

import numba
import numpy as np

from bayescv.bayes._cache import numba_jit
from bayescv.bayes._callbacks import logp_callbacks
from bayescv.bayes._density import _scatter_term

njit = numba_jit()

__all__ = ["SCALARS", "SCATTER_ROWS", "buffer", "callbacks", "coordinate_slices", "logp_and_grad"]

#: Rows of the per-block array of the bootstrap scatter term, laid out as the Gaussian
#: density's vector array where :func:`bayescv.bayes._density._scatter_term` reads it (rows
#: 0, 5 and 6); row 1 holds q_k = p̃_k (1 − p̃_k), the delta-method factor of block k.
SCATTER_ROWS = ("n", "q", "unused_2", "unused_3", "unused_4", "scatter_nu_factor", "scatter_extra")

#: Scalar data of the packed buffer, in order; the rows ``y`` and ``n`` (K each) follow.
SCALARS = (
    "log_choose",
    "level_loc",
    "level_scale",
    "tau_scale",
    "tau_kappa",
    "gamma_loc",
    "gamma_scale",
    "rho_a",
    "rho_lower",
    "scatter_df",
    "scatter_weight",
    "scatter_const",
)

_LOG_2PI = math.log(2.0 * math.pi)
_LOG_PI = math.log(math.pi)


def coordinate_slices(source: bool, k: int) -> dict[str, slice]:
    """Where each sampled coordinate sits in the flat vector, by PyMC value-variable name.

    Parameters
    ----------
    source : bool
        CVS model (with the between-source scale τ) or CVR model (without).
    k : int
        Number of blocks.

    Returns
    -------
    dict of slice
    """
    names = ["level_z"] + (["tau_z"] if source else []) + ["gamma_sd_z", "rho_b_logodds__"]
    out = {name: slice(i, i + 1) for i, name in enumerate(names)}
    out["eta_z"] = slice(len(names), len(names) + k)
    return out


@njit
def _softplus(z):
    return max(z, 0.0) + math.log1p(math.exp(-abs(z)))


@njit
def _sigmoid(z):
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@njit
def _log1pexp(x):
    """log(1 + e^x) without overflow."""
    if x > 0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


@njit
def logp_and_grad(x, source, y, n, scal, svec, scatter):
    """Log-density (priors, Jacobians, binomial likelihood, bootstrap scatter) and gradient.

    Parameters
    ----------
    x : ndarray of shape (n_dim,)
        The coordinates of :func:`coordinate_slices`.
    source : bool
        CVS model or CVR model.
    y, n : ndarray of shape (K,)
        Errors and points per block.
    scal : ndarray of shape (len(SCALARS),)
        The values of :data:`SCALARS`.
    svec : ndarray of shape (7, K)
        The rows of :data:`SCATTER_ROWS`.
    scatter : ndarray of shape (K, K)
        The centred scatter of bootstrap block means (zeros without a bootstrap table).

    Returns
    -------
    logp : float
    grad : ndarray of shape (n_dim,)
    """
    k = y.size
    log_choose, l_loc, l_scale = scal[0], scal[1], scal[2]
    tau_scale, kappa, g_loc, g_scale = scal[3], scal[4], scal[5], scal[6]
    rho_a, rho_lo = scal[7], scal[8]
    grad = np.zeros(x.size)
    at = 0
    level = l_loc + l_scale * x[at]
    at += 1
    # Jeffreys' prior on the logit scale, sqrt(p (1 − p)) / π with p = expit(η̄), and the
    # Jacobian l_scale of η̄ = l_loc + l_scale · level_z.
    logp = -0.5 * (_log1pexp(-level) + _log1pexp(level)) - _LOG_PI + math.log(l_scale)
    grad[0] = l_scale * (0.5 - _sigmoid(level))
    tau = 0.0
    dtau_dt = 0.0
    i_tau = -1
    if source:
        i_tau = at
        t = x[at]
        at += 1
        sig = _sigmoid(t)
        tau = kappa * _softplus(t)
        dtau_dt = kappa * sig
        # HalfNormal(tau_scale) at τ, with the Jacobian κ σ(t) of τ = κ softplus(t).
        logp += (
            0.5 * math.log(2.0 / math.pi)
            - math.log(tau_scale)
            - 0.5 * (tau / tau_scale) ** 2
            + math.log(dtau_dt)
        )
        grad[i_tau] = -tau / tau_scale**2 * dtau_dt + (1.0 - sig)
    i_g = at
    g = x[at]
    at += 1
    s = math.exp(g_loc + g)
    # HalfNormal(g_scale) at s = exp(g_loc + g), with the Jacobian s.
    logp += (
        0.5 * math.log(2.0 / math.pi) - math.log(g_scale) - 0.5 * (s / g_scale) ** 2 + g_loc + g
    )
    grad[i_g] = -((s / g_scale) ** 2) + 1.0
    i_r = at
    r = x[at]
    at += 1
    b = _sigmoid(r)
    rho = rho_lo + (1.0 - rho_lo) * b
    # Beta(rho_a, rho_a) at b, with the Jacobian b (1 − b) of b = expit(r).
    log_b = -_log1pexp(-r)
    log_1mb = -_log1pexp(r)
    logp += rho_a * (log_b + log_1mb) - 2.0 * math.lgamma(rho_a) + math.lgamma(2.0 * rho_a)
    grad[i_r] = rho_a * (1.0 - 2.0 * b)
    # η = η̄ + sqrt(d) (z − z̄), d = τ² + (1 − ρ) s².
    s2 = s * s
    d = tau * tau + (1.0 - rho) * s2
    sd = math.sqrt(d)
    z = x[at : at + k]
    z_bar = 0.0
    for j in range(k):
        z_bar += z[j]
    z_bar /= k
    big_g = 0.0
    gz = 0.0
    for j in range(k):
        eta = level + sd * (z[j] - z_bar)
        logp += -0.5 * z[j] * z[j] - 0.5 * _LOG_2PI
        logp += y[j] * eta - n[j] * _log1pexp(eta)
        gj = y[j] - n[j] * _sigmoid(eta)
        big_g += gj
        gz += gj * (z[j] - z_bar)
        grad[at + j] = -z[j] + sd * gj
    for j in range(k):
        grad[at + j] -= sd * big_g / k
    logp += log_choose
    grad[0] += l_scale * big_g
    dl_dd = gz / (2.0 * sd)
    # d as a function of τ, s and ρ.
    if source:
        grad[i_tau] += dl_dd * 2.0 * tau * dtau_dt
    grad[i_g] += dl_dd * 2.0 * (1.0 - rho) * s * s
    grad[i_r] += -dl_dd * s2 * (1.0 - rho_lo) * b * (1.0 - b)
    if scal[10] > 0.0:
        # Bootstrap block means: the Gaussian model's Wishart-type scatter term with
        # Σ = diag(q² (1 − ρ) s² + f q / n + e) + ρ (s q)(s q)ᵀ, the delta-method image of
        # the binomial covariance at the observed block rates (binomial_model docs).
        sscal = np.zeros(16)
        sscal[12], sscal[13], sscal[15] = scal[9], scal[10], scal[11]
        q = svec[1]
        bar_nu = np.zeros(k)
        bar_s = np.zeros(k)
        value, _, bar_rho = _scatter_term(0.0, q, s * q, rho, svec, sscal, scatter, bar_nu, bar_s)
        logp += value
        ds = 0.0
        for j in range(k):
            ds += bar_s[j] * q[j]
        grad[i_g] += ds * s
        grad[i_r] += bar_rho * (1.0 - rho_lo) * b * (1.0 - b)
    return logp, grad


def buffer(data: dict[str, np.ndarray], source: bool) -> np.ndarray:
    """One contiguous float64 buffer of the model data, read by the C callbacks.

    Parameters
    ----------
    data : dict of ndarray
        The model data (:func:`bayescv.bayes.binomial_model.binomial_data`).
    source : bool
        CVS or CVR model.

    Returns
    -------
    ndarray of shape (3 + len(SCALARS) + 9 K + K²,)
        ``[n_dim, source, K, scalars..., y, n, scatter rows (7 K)..., scatter (K²)...]``.
    """
    y = np.asarray(data["y"], dtype=float)
    k = y.size
    n_dim = coordinate_slices(source, k)["eta_z"].stop
    head = np.array([n_dim, float(source), k])
    scal = np.array([float(data[name]) for name in SCALARS])
    parts = [head, scal, y, np.asarray(data["n"], dtype=float), scatter_rows(data).ravel()]
    parts.append(np.asarray(data["scatter"], dtype=float).ravel())
    return np.ascontiguousarray(np.concatenate(parts))


def scatter_rows(data: dict[str, np.ndarray]) -> np.ndarray:
    """Return the (7, K) array of :data:`SCATTER_ROWS` from the model data."""
    k = int(np.size(data["y"]))
    rows = [
        np.broadcast_to(np.asarray(data.get(name, 0.0), dtype=float), (k,))
        for name in SCATTER_ROWS
    ]
    return np.ascontiguousarray(np.stack(rows))


# The data travel as one float64 buffer at `user_data` (see `buffer`); the callback has the
# signature nutpie calls, that of the Gaussian density's (_density._LOGP_SIG).
_HEAD = 3 + len(SCALARS)


def _logp_callback(dim, x_ptr, grad_ptr, logp_ptr, user_data):
    head = numba.carray(user_data, (3,), np.float64)
    n_dim, source, k = int(head[0]), head[1] != 0.0, int(head[2])
    if dim != n_dim:
        return -1
    buf = numba.carray(user_data, (_HEAD + 9 * k + k * k,), np.float64)
    scal = buf[3:_HEAD]
    y = buf[_HEAD : _HEAD + k]
    n = buf[_HEAD + k : _HEAD + 2 * k]
    svec = buf[_HEAD + 2 * k : _HEAD + 9 * k].reshape((7, k))
    scatter = buf[_HEAD + 9 * k :].reshape((k, k))
    x = numba.carray(x_ptr, (n_dim,))
    grad = numba.carray(grad_ptr, (n_dim,))
    logp = numba.carray(logp_ptr, (1,))
    value, g = logp_and_grad(x, source, y, n, scal, svec, scatter)
    logp[0] = value
    grad[:] = g
    if not np.all(np.isfinite(g)):
        return 3
    if not np.isfinite(value):
        return 4
    return 0


_CALLBACKS: dict = {}
_LOCK = threading.Lock()


def callbacks() -> dict:
    """Return the compiled C callbacks, loaded from the disk cache or compiled on first use.

    Returns
    -------
    dict
        ``logp`` and ``expand`` (``numba.cfunc`` objects) and ``seconds``, the time this
        process spent compiling or loading them.
    """
    return logp_callbacks(_CALLBACKS, _LOCK, _logp_callback)
