"""The several-data-sets model's log-density and its gradient in numba, cached on disk.

A transcription of the PyMC model of :mod:`bayescv.bayes.datasets_model` (the hierarchical
comparison of two learners over several data sets of Corani, Benavoli, Demšar, Mangili &
Zaffalon 2017, *Machine Learning* 106:1817–1837): its uniform and gamma priors with the
Jacobians of PyMC's interval and log transforms, the Student-t of the data sets' mean
differences as a scale mixture (mixing weights λ_i ~ Gamma(ν/2, ν/2), sampled as
w_i = sqrt(ν/2) log λ_i), and the compound-symmetric normal likelihood with δ_i integrated
out, through each data set's mean and centred sum of squares; written with its gradient by
hand, as :mod:`bayescv.bayes._binomial_density` is for the 0-1 model and for the same
reason: numba caches these functions on disk, so a later process loads them instead of
compiling a PyMC model. The tests hold both equal to PyMC's ``logp`` and ``dlogp`` at random
points, and to a direct computation with scipy's distributions and the full J × J
covariance.

Coordinates, in order (the unconstrained values PyMC samples): ``delta0_interval__``,
``std0_interval__``, ``gamma_alpha_interval__``, ``gamma_beta_interval__``,
``nu_minus_one_log__``, ``lambda_w`` (q) and ``sigma_interval__`` (q).
"""

from __future__ import annotations

import math
import threading

import numba
import numpy as np

from bayescv.bayes._cache import numba_jit
from bayescv.bayes._callbacks import logp_callbacks

njit = numba_jit()

__all__ = ["ROWS", "SCALARS", "buffer", "callbacks", "coordinate_slices", "logp_and_grad", "rows"]

#: Scalar data of the packed buffer, in order (:func:`bayescv.bayes.datasets_model.datasets_data`).
SCALARS = (
    "delta_lo",
    "delta_hi",
    "std0_hi",
    "sigma_hi",
    "alpha_lo",
    "alpha_hi",
    "beta_lo",
    "beta_hi",
)

#: Per-data-set rows of the packed buffer: x̄_i, SS_i, J_i, ρ_i and the likelihood's constant
#: J_i log 2π + log J_i + (J_i − 1) log(1 − ρ_i).
ROWS = ("mean", "ss", "n", "rho", "const")

_HEADS = (
    "delta0_interval__",
    "std0_interval__",
    "gamma_alpha_interval__",
    "gamma_beta_interval__",
    "nu_minus_one_log__",
)
_VECTORS = ("lambda_w", "sigma_interval__")
_LOG_2PI = math.log(2.0 * math.pi)


def coordinate_slices(q: int) -> dict[str, slice]:
    """Where each sampled coordinate sits in the flat vector, by PyMC value-variable name.

    Parameters
    ----------
    q : int
        Number of data sets.

    Returns
    -------
    dict of slice
    """
    out = {name: slice(i, i + 1) for i, name in enumerate(_HEADS)}
    head = len(_HEADS)
    out["lambda_w"] = slice(head, head + q)
    out["sigma_interval__"] = slice(head + q, head + 2 * q)
    return out


def rows(data: dict[str, np.ndarray]) -> np.ndarray:
    """Return the (5, q) array of :data:`ROWS` from the model data."""
    n = np.asarray(data["n"], dtype=float)
    rho = np.asarray(data["rho"], dtype=float)
    const = n * _LOG_2PI + np.log(n) + (n - 1.0) * np.log1p(-rho)
    parts = [data["mean"], data["ss"], n, rho, const]
    return np.ascontiguousarray(np.stack([np.asarray(p, dtype=float) for p in parts]))


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
def digamma(x):
    """ψ(x) for x > 0: the recurrence up to x ≥ 8, then the asymptotic series (to ~1e-14)."""
    out = 0.0
    while x < 8.0:
        out -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    tail = f * (
        1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f * (1 / 132 - f * 691 / 32760))))
    )
    return out + math.log(x) - 0.5 / x - tail


@njit
def _interval(y, lo, hi):
    """Map PyMC's interval coordinate y of a Uniform(lo, hi) variable to its value.

    Returns the value, the log-density with the Jacobian, d value / dy and d log-density / dy.
    """
    s = _sigmoid(y)
    value = s * hi + (1.0 - s) * lo
    return value, -_softplus(-y) - _softplus(y), (hi - lo) * s * (1.0 - s), 1.0 - 2.0 * s


@njit
def logp_and_grad(x, rows, scal):
    """Log-density (priors, Jacobians, mixing weights, marginal likelihood) and gradient.

    Parameters
    ----------
    x : ndarray of shape (5 + 2 q,)
        The coordinates of :func:`coordinate_slices`.
    rows : ndarray of shape (5, q)
        The rows of :data:`ROWS`.
    scal : ndarray of shape (len(SCALARS),)
        The values of :data:`SCALARS`.

    Returns
    -------
    logp : float
    grad : ndarray of shape (5 + 2 q,)
    """
    q = rows.shape[1]
    grad = np.zeros(x.size)
    d0, logp, dd0, g = _interval(x[0], scal[0], scal[1])
    grad[0] = g
    s0, lp, ds0, g = _interval(x[1], 0.0, scal[2])
    logp += lp
    grad[1] = g
    al, lp, dal, g = _interval(x[2], scal[4], scal[5])
    logp += lp
    grad[2] = g
    be, lp, dbe, g = _interval(x[3], scal[6], scal[7])
    logp += lp
    grad[3] = g
    # ν − 1 = m = exp(y) ~ Gamma(α, β) (β a rate), with the Jacobian m.
    ym = x[4]
    m = math.exp(ym)
    log_be = math.log(be)
    logp += al * log_be - math.lgamma(al) + al * ym - be * m
    grad[4] = al - be * m
    grad[2] += (log_be - digamma(al) + ym) * dal
    grad[3] += (al / be - m) * dbe
    # Mixing weights λ_i ~ Gamma(k, k), k = ν / 2, sampled as w_i = sqrt(k) log λ_i:
    # log p(w) = (k − ½) log k − log Γ(k) + sqrt(k) w − k λ.
    k = 0.5 * (1.0 + m)
    sk = math.sqrt(k)
    c_k = (k - 0.5) * math.log(k) - math.lgamma(k)
    dc_k = math.log(k) + 1.0 - 0.5 / k - digamma(k)
    d_k = 0.0
    g_d0 = 0.0
    g_s0 = 0.0
    s02 = s0 * s0
    head = 5
    for i in range(q):
        w = x[head + i]
        lam = math.exp(w / sk)
        logp += c_k + sk * w - k * lam
        grad[head + i] = sk * (1.0 - lam)
        d_k += dc_k + w / (2.0 * sk) - lam + lam * w / (2.0 * sk)
        # Data set i with δ_i ~ N(δ0, τ²), τ² = std0² / λ_i, integrated out:
        # x̄_i ~ N(δ0, V), V = τ² + σ² c2 / J, and the residuals' SS_i ~ σ² c1 χ²(J − 1).
        sg, lp, dsg, g_sg = _interval(x[head + q + i], 0.0, scal[3])
        n, rho = rows[2, i], rows[3, i]
        c1 = 1.0 - rho
        c2 = 1.0 + (n - 1.0) * rho
        s2 = sg * sg
        tau2 = s02 / lam
        v = tau2 + s2 * c2 / n
        r = rows[0, i] - d0
        logp += lp - 0.5 * (
            rows[4, i]
            + math.log(v)
            + r * r / v
            + (n - 1.0) * math.log(s2)
            + rows[1, i] / (s2 * c1)
        )
        g_v = 0.5 * (r * r / v - 1.0) / v
        g_d0 += r / v
        g_s0 += g_v * 2.0 * s0 / lam
        grad[head + i] -= g_v * tau2 / sk
        d_k += g_v * tau2 * w / (2.0 * k * sk)
        dl_dsg = g_v * 2.0 * sg * c2 / n - (n - 1.0) / sg + rows[1, i] / (s2 * sg * c1)
        grad[head + q + i] = g_sg + dl_dsg * dsg
    grad[0] += g_d0 * dd0
    grad[1] += g_s0 * ds0
    grad[4] += d_k * 0.5 * m
    return logp, grad


def buffer(data: dict[str, np.ndarray], source: object = None) -> np.ndarray:
    """One contiguous float64 buffer of the model data, read by the C callbacks.

    Parameters
    ----------
    data : dict of ndarray
        The model data (:func:`bayescv.bayes.datasets_model.datasets_data`).
    source : object, optional
        Ignored: the place where the other densities take their scheme, so that
        :func:`bayescv.bayes._samplers.nutpie_model` serves this density unchanged.

    Returns
    -------
    ndarray of shape (3 + len(SCALARS) + 5 q,)
        ``[n_dim, 0, q, scalars..., rows (5 q)...]``.
    """
    q = int(np.size(data["mean"]))
    n_dim = coordinate_slices(q)["sigma_interval__"].stop
    head = np.array([n_dim, 0.0, q])
    scal = np.array([float(data[name]) for name in SCALARS])
    return np.ascontiguousarray(np.concatenate([head, scal, rows(data).ravel()]))


_HEAD = 3 + len(SCALARS)


def _logp_callback(dim, x_ptr, grad_ptr, logp_ptr, user_data):
    head = numba.carray(user_data, (3,), np.float64)
    n_dim, q = int(head[0]), int(head[2])
    if dim != n_dim:
        return -1
    buf = numba.carray(user_data, (_HEAD + 5 * q,), np.float64)
    scal = buf[3:_HEAD]
    data_rows = buf[_HEAD:].reshape((5, q))
    x = numba.carray(x_ptr, (n_dim,))
    grad = numba.carray(grad_ptr, (n_dim,))
    logp = numba.carray(logp_ptr, (1,))
    value, g = logp_and_grad(x, data_rows, scal)
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
