"""The model's log-density and its gradient in numba, cached on disk.

This is a transcription of the PyMC model of :mod:`bayescv.bayes.model` (its priors, with
the Jacobians of the sampled coordinates, and the three potentials of
:func:`bayescv.bayes.model.loglik_graph`), written once by hand with its reverse-mode
gradient. The tests check that both agree with PyMC's compiled ``logp`` and ``dlogp`` to
rounding at random points, for both schemes and every replicate kind, so the PyMC model
stays the specification.

Why not let nutpie compile the PyMC model: the C callback nutpie builds around PyTensor's
numba code uses dynamic globals, which numba refuses to cache, so every process paid
30-100 s of compiling before its first draw, and the compiled gradient took 20 µs per call
at K = 10. These functions are plain ``@njit(cache=True)`` functions of a real source
file: numba stores their machine code on disk (:mod:`bayescv.bayes._cache` says where)
and a later process loads it in well under a second; a call costs O(K) flops, plus O(K²)
for a scatter term, and a few microseconds of dispatch.

Coordinates, in order (the unconstrained values PyMC samples): ``loc_z`` (``mu0_z``, CVR
``mu_z``), ``tau_z`` (CVS only), ``nu_z`` (K, CVR 1), ``gamma_sd_z`` (K, CVR 1) and
``rho_b_logodds__``.
"""

from __future__ import annotations

import math
import threading
import time

import numba
import numpy as np

from bayescv.bayes._cache import numba_jit, use_disk_cache

njit = numba_jit()

__all__ = [
    "SCALARS",
    "VECTORS",
    "buffer",
    "callbacks",
    "coordinate_slices",
    "logp_and_grad",
    "pack",
]

#: Per-block data rows of the packed array, in order.
VECTORS = ("n", "ybar", "W", "dof", "w_const", "scatter_nu_factor", "scatter_extra")
#: Scalar data of the packed array, in order; the nu_loc and nu_scale rows follow them in
#: the vector array (per block for CVS, one value for CVR, broadcast).
SCALARS = (
    "ybar_count",
    "mu0_loc",
    "mu0_scale",
    "tau_scale",
    "tau_kappa",
    "nu_alpha",
    "nu_beta",
    "gamma_scale",
    "gamma_df",
    "gamma_loc",
    "rho_a",
    "rho_lower",
    "scatter_df",
    "scatter_weight",
    "scatter_tau",
    "scatter_const",
)

_LOG_2PI = math.log(2.0 * math.pi)


def pack(data: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pack the model data (:func:`bayescv.bayes.model.model_data`) for :func:`logp_and_grad`.

    Parameters
    ----------
    data : dict of ndarray
        The model data of one fit.

    Returns
    -------
    vec : ndarray of shape (9, K)
        The rows of :data:`VECTORS`, then ``nu_loc`` and ``nu_scale`` broadcast to K.
    scal : ndarray of shape (16,)
        The values of :data:`SCALARS`.
    scatter : ndarray of shape (K, K)
        The centred scatter of replicated block means (zeros without replicates).
    """
    k = int(np.size(data["n"]))
    rows = [np.broadcast_to(np.asarray(data[name], float), (k,)) for name in VECTORS]
    rows += [
        np.broadcast_to(np.asarray(data[name], float), (k,)) for name in ("nu_loc", "nu_scale")
    ]
    vec = np.ascontiguousarray(np.stack(rows))
    scal = np.array([float(data[name]) for name in SCALARS])
    scatter = np.ascontiguousarray(np.asarray(data["scatter"], float).reshape(k, k))
    return vec, scal, scatter


def coordinate_slices(source: bool, k: int) -> dict[str, slice]:
    """Where each sampled coordinate sits in the flat vector, by PyMC value-variable name.

    Parameters
    ----------
    source : bool
        CVS model (per-block ν and ω, and τ) or CVR model (one ν, one ω, no τ).
    k : int
        Number of blocks.

    Returns
    -------
    dict of slice
    """
    per = k if source else 1
    names = ["mu0_z" if source else "mu_z"] + (["tau_z"] if source else [])
    out, at = {}, 0
    for name in names:
        out[name] = slice(at, at + 1)
        at += 1
    for name in ("nu_z", "gamma_sd_z"):
        out[name] = slice(at, at + per)
        at += per
    out["rho_b_logodds__"] = slice(at, at + 1)
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
def _ebar_term(tau, nu, s, rho, vec, scal, bar_nu, bar_s):
    """Block-mean term with μ₀ integrated out; adds its gradient to bar_nu, bar_s.

    Returns the term and its derivatives in τ and ρ.
    """
    k = vec.shape[1]
    n, ybar = vec[0], vec[1]
    count, m, s0 = scal[0], scal[1], scal[2]
    rc = rho / count
    tau2 = tau * tau
    d = np.empty(k)
    u = np.empty(k)
    su = 0.0
    sur = 0.0
    t = 0.0
    inv_d = 0.0
    r_d = 0.0
    r2_d = 0.0
    logdet = 0.0
    for i in range(k):
        own = (1.0 - rho) * s[i] * s[i] + nu[i] / n[i]
        d[i] = tau2 + own / count
        u[i] = s[i] / d[i]
        r = ybar[i] - m
        su += u[i]
        sur += u[i] * r
        t += s[i] * u[i]
        inv_d += 1.0 / d[i]
        r_d += r / d[i]
        r2_d += r * r / d[i]
        logdet += math.log(d[i])
    dd = 1.0 + rc * t
    a_ = inv_d - rc * su * su / dd
    b_ = r_d - rc * su * sur / dd
    c_ = r2_d - rc * sur * sur / dd
    s02 = s0 * s0
    prec = a_ + 1.0 / s02
    logdet += math.log(dd)
    value = -0.5 * (k * _LOG_2PI + logdet + c_ + math.log(s02 * prec)) + b_ * b_ / (2.0 * prec)
    # Reverse mode, line by line back through the forward pass.
    bar_prec = -0.5 / prec - b_ * b_ / (2.0 * prec * prec)
    bar_a = bar_prec
    bar_b = b_ / prec
    bar_c = -0.5
    bar_logdet = -0.5
    bar_rc = -bar_a * su * su / dd - bar_b * su * sur / dd - bar_c * sur * sur / dd
    bar_su = -2.0 * bar_a * rc * su / dd - bar_b * rc * sur / dd
    bar_sur = -bar_b * rc * su / dd - 2.0 * bar_c * rc * sur / dd
    bar_dd = (
        bar_a * rc * su * su / (dd * dd)
        + bar_b * rc * su * sur / (dd * dd)
        + bar_c * rc * sur * sur / (dd * dd)
        + bar_logdet / dd
    )
    bar_rc += bar_dd * t
    bar_tau = 0.0
    bar_rho = 0.0
    for i in range(k):
        r = ybar[i] - m
        inv = 1.0 / d[i]
        bar_d = -(bar_a + bar_b * r + bar_c * r * r) * inv * inv + bar_logdet * inv
        bar_u = bar_su + bar_sur * r + bar_dd * rc * s[i]
        bar_si = bar_dd * rc * u[i] + bar_u * inv
        bar_d -= bar_u * s[i] * inv * inv
        bar_tau += 2.0 * tau * bar_d
        bar_own = bar_d / count
        bar_rho -= bar_own * s[i] * s[i]
        bar_s[i] += bar_si + bar_own * 2.0 * (1.0 - rho) * s[i]
        bar_nu[i] += bar_own / n[i]
    bar_rho += bar_rc / count
    return value, bar_tau, bar_rho


@njit
def _scatter_term(tau, nu, s, rho, vec, scal, scatter, bar_nu, bar_s):
    """Wishart-type term of the replicated block means' scatter; adds its gradient."""
    k = vec.shape[1]
    n, f, e = vec[0], vec[5], vec[6]
    df, weight, t_tau, const = scal[12], scal[13], scal[14], scal[15]
    tau2 = tau * tau
    d = np.empty(k)
    u = np.empty(k)
    ts = 0.0
    logdet = 0.0
    diag_trace = 0.0
    for i in range(k):
        own = (1.0 - rho) * s[i] * s[i] + f[i] * nu[i] / n[i] + e[i]
        d[i] = own + t_tau * tau2
        u[i] = s[i] / d[i]
        ts += s[i] * u[i]
        logdet += math.log(d[i])
        diag_trace += scatter[i, i] / d[i]
    dd = 1.0 + rho * ts
    su = scatter @ u
    q = 0.0
    for i in range(k):
        q += u[i] * su[i]
    trace = diag_trace - rho * q / dd
    logdet += math.log(dd)
    value = const - 0.5 * (df * (k * _LOG_2PI + logdet) + weight * trace)
    bar_logdet = -0.5 * df
    bar_trace = -0.5 * weight
    bar_rho = -bar_trace * q / dd
    bar_q = -bar_trace * rho / dd
    bar_dd = bar_trace * rho * q / (dd * dd) + bar_logdet / dd
    bar_rho += bar_dd * ts
    bar_tau = 0.0
    for i in range(k):
        inv = 1.0 / d[i]
        bar_d = -bar_trace * scatter[i, i] * inv * inv + bar_logdet * inv
        bar_u = 2.0 * bar_q * su[i] + bar_dd * rho * s[i]
        bar_si = bar_dd * rho * u[i] + bar_u * inv
        bar_d -= bar_u * s[i] * inv * inv
        bar_tau += 2.0 * t_tau * tau * bar_d
        bar_rho -= bar_d * s[i] * s[i]
        bar_s[i] += bar_si + bar_d * 2.0 * (1.0 - rho) * s[i]
        bar_nu[i] += bar_d * f[i] / n[i]
    return value, bar_tau, bar_rho


@njit
def logp_and_grad(x, source, vec, scal, scatter):
    """Log-density of the sampled coordinates (priors, Jacobians, likelihood) and gradient.

    Parameters
    ----------
    x : ndarray of shape (n_dim,)
        The coordinates, laid out as :func:`coordinate_slices` says.
    source : bool
        CVS or CVR model.
    vec, scal, scatter : ndarray
        The packed data (:func:`pack`).

    Returns
    -------
    logp : float
        Equal to PyMC's ``model.compile_logp()`` at the same point (every constant kept).
    grad : ndarray of shape (n_dim,)
    """
    k = vec.shape[1]
    per = k if source else 1
    grad = np.zeros(x.shape[0])
    tau_scale, kappa = scal[3], scal[4]
    alpha, beta = scal[5], scal[6]
    g_scale, g_df, g_loc = scal[7], scal[8], scal[9]
    rho_a, rho_lower = scal[10], scal[11]
    # Standard normal coordinate of the integrated-out mean.
    loc_z = x[0]
    logp = -0.5 * loc_z * loc_z - 0.5 * _LOG_2PI
    grad[0] = -loc_z
    at = 1
    tau = 0.0
    sig_tau = 0.0
    if source:
        # τ = κ softplus(z), τ ~ HalfNormal(tau_scale); Jacobian κ sigmoid(z).
        tz = x[1]
        tau = kappa * _softplus(tz)
        sig_tau = _sigmoid(tz)
        logp += (
            0.5 * math.log(2.0 / math.pi)
            - math.log(tau_scale)
            - 0.5 * (tau / tau_scale) ** 2
            + math.log(kappa)
            - _softplus(-tz)
        )
        grad[1] = -tau / tau_scale**2 * kappa * sig_tau + (1.0 - sig_tau)
        at = 2
    nu_at, g_at, rho_at = at, at + per, at + 2 * per
    nu = np.empty(k)
    log_nu = np.empty(k)
    s = np.empty(k)
    log_prior_nu = alpha * math.log(beta) - math.lgamma(alpha)
    log_prior_s = (
        math.log(2.0)
        + math.lgamma(0.5 * (g_df + 1.0))
        - math.lgamma(0.5 * g_df)
        - 0.5 * math.log(g_df * math.pi)
        - math.log(g_scale)
    )
    for j in range(per):
        # ν = exp(loc + scale z), ν ~ InverseGamma(α, β); Jacobian ν · scale.
        log_nu_j = vec[7, j] + vec[8, j] * x[nu_at + j]
        nu_j = math.exp(log_nu_j)
        logp += log_prior_nu - alpha * log_nu_j - beta / nu_j + math.log(vec[8, j])
        grad[nu_at + j] = vec[8, j] * (beta / nu_j - alpha)
        # s = exp(gamma_loc + z), s ~ HalfStudentT(df, scale); Jacobian s.
        log_s = g_loc + x[g_at + j]
        s_j = math.exp(log_s)
        ratio = (s_j / g_scale) ** 2 / g_df
        logp += log_prior_s - 0.5 * (g_df + 1.0) * math.log1p(ratio) + log_s
        grad[g_at + j] = 1.0 - (g_df + 1.0) * ratio / (1.0 + ratio)
        if source:
            nu[j] = nu_j
            log_nu[j] = log_nu_j
            s[j] = s_j
        else:
            nu[:] = nu_j
            log_nu[:] = log_nu_j
            s[:] = s_j
    # ρ = lower + (1 − lower) b, b ~ Beta(a, a) sampled on the log-odds scale.
    y = x[rho_at]
    b = _sigmoid(y)
    rho = rho_lower + (1.0 - rho_lower) * b
    logp += (
        rho_a * (-_softplus(-y))
        + rho_a * (-_softplus(y))
        - (2.0 * math.lgamma(rho_a) - math.lgamma(2.0 * rho_a))
    )
    grad[rho_at] = rho_a * (1.0 - 2.0 * b)
    # Likelihood: the W term per block, the block means, the scatter of replicates.
    w_ss, dof, w_const = vec[2], vec[3], vec[4]
    bar_nu = np.zeros(k)
    bar_s = np.zeros(k)
    for i in range(k):
        logp += -0.5 * dof[i] * (_LOG_2PI + log_nu[i]) - w_ss[i] / (2.0 * nu[i]) + w_const[i]
        bar_nu[i] += -0.5 * dof[i] / nu[i] + w_ss[i] / (2.0 * nu[i] * nu[i])
    value, bar_tau, bar_rho = _ebar_term(tau, nu, s, rho, vec, scal, bar_nu, bar_s)
    logp += value
    if scal[12] != 0.0 or scal[13] != 0.0:
        value, tau_s, rho_s = _scatter_term(tau, nu, s, rho, vec, scal, scatter, bar_nu, bar_s)
        logp += value
        bar_tau += tau_s
        bar_rho += rho_s
    else:
        logp += scal[15]
    # Chain rule to the sampled coordinates.
    if source:
        grad[1] += bar_tau * kappa * sig_tau
    for i in range(k):
        j = i if source else 0
        grad[nu_at + j] += bar_nu[i] * nu[i] * vec[8, j]
        grad[g_at + j] += bar_s[i] * s[i]
    grad[rho_at] += bar_rho * (1.0 - rho_lower) * b * (1.0 - b)
    return logp, grad


# C callbacks with the signatures nutpie's sampler calls (nutpie.compile_pymc, whose model
# class takes them): the data travel as one float64 buffer whose address is `user_data`:
# [n_dim, source, K, scal..., vec (9 × K)..., scatter (K × K)...].
_HEAD = 3 + len(SCALARS)

_LOGP_SIG = numba.types.int64(
    numba.types.uint64,
    numba.types.CPointer(numba.types.double),
    numba.types.CPointer(numba.types.double),
    numba.types.CPointer(numba.types.double),
    numba.types.voidptr,
)
_EXPAND_SIG = numba.types.int64(
    numba.types.uint64,
    numba.types.uint64,
    numba.types.CPointer(numba.types.double),
    numba.types.CPointer(numba.types.double),
    numba.types.voidptr,
)


def buffer(data: dict[str, np.ndarray], source: bool) -> np.ndarray:
    """One contiguous float64 buffer of the model data, read by the C callbacks.

    Parameters
    ----------
    data : dict of ndarray
        The model data (:func:`bayescv.bayes.model.model_data`).
    source : bool
        CVS or CVR model.

    Returns
    -------
    ndarray of shape (3 + 16 + 9 K + K²,)
    """
    vec, scal, scatter = pack(data)
    k = vec.shape[1]
    n_dim = coordinate_slices(source, k)["rho_b_logodds__"].stop
    head = np.array([n_dim, float(source), k])
    return np.ascontiguousarray(np.concatenate([head, scal, vec.ravel(), scatter.ravel()]))


def _logp_callback(dim, x_ptr, grad_ptr, logp_ptr, user_data):
    head = numba.carray(user_data, (3,), np.float64)
    n_dim, source, k = int(head[0]), head[1] != 0.0, int(head[2])
    if dim != n_dim:
        return -1
    buf = numba.carray(user_data, (_HEAD + 9 * k + k * k,), np.float64)
    scal = buf[3:_HEAD]
    vec = buf[_HEAD : _HEAD + 9 * k].reshape((9, k))
    scatter = buf[_HEAD + 9 * k :].reshape((k, k))
    x = numba.carray(x_ptr, (n_dim,))
    grad = numba.carray(grad_ptr, (n_dim,))
    logp = numba.carray(logp_ptr, (1,))
    value, g = logp_and_grad(x, source, vec, scal, scatter)
    logp[0] = value
    grad[:] = g
    if not np.all(np.isfinite(g)):
        return 3
    if not np.isfinite(value):
        return 4
    return 0


def _expand_callback(dim, n_expanded, x_ptr, out_ptr, user_data):
    if dim != n_expanded:
        return -1
    x = numba.carray(x_ptr, (dim,))
    out = numba.carray(out_ptr, (dim,))
    out[:] = x
    return 0


_CALLBACKS: dict = {}
_LOCK = threading.Lock()


def callbacks() -> dict:
    """Return the compiled C callbacks, loaded from the disk cache or compiled on first use.

    Returns
    -------
    dict
        ``logp`` and ``expand`` (``numba.cfunc`` objects) and ``seconds``, the time this
        process spent compiling or loading them (about 0.02 s from a warm cache, about 7 s
        without one on a 2-core machine).
    """
    with _LOCK:
        if not _CALLBACKS:
            start = time.perf_counter()
            cache = use_disk_cache()
            options = {"cache": cache, "error_model": "numpy"}
            _CALLBACKS["logp"] = numba.cfunc(_LOGP_SIG, **options)(_logp_callback)
            _CALLBACKS["expand"] = numba.cfunc(_EXPAND_SIG, **options)(_expand_callback)
            _CALLBACKS["seconds"] = time.perf_counter() - start
    return _CALLBACKS
