"""The hierarchical model of two learners compared on several data sets (Corani et al. 2017).

Corani, Benavoli, Demšar, Mangili & Zaffalon (2017), "Statistical comparison of classifiers
through Bayesian hierarchical modelling", *Machine Learning* 106:1817–1837,
doi:10.1007/s10994-017-5641-9; the model that baycomp's ``HierarchicalTest`` runs in Stan.
With x_ij the difference of the two learners' scores on measurement j = 1..J_i (the folds of
one or more K-fold CV runs) of data set i = 1..q:

    x_i ~ MVN(δ_i 1, σ_i² [(1 − ρ_i) I + ρ_i 11ᵀ]),   ρ_i = 1 / K_i  (K_i = J_i / runs),
    δ_i ~ StudentT(ν, δ0, std0),
    δ0 ~ U(−max abs(x), max abs(x)),   std0 ~ U(0, 1000 s_among),   σ_i ~ U(0, 1000 s_within),
    ν − 1 ~ Gamma(α, β) (β a rate),   α ~ U(1, 2),   β ~ U(0.01, 0.1),

after the data (and the rope) are divided by the mean over data sets of their standard
deviations, as baycomp does. s_within is the mean of the per-data-set standard deviations
and s_among the standard deviation of the per-data-set means, on the scaled data
(:func:`datasets_data`).

The compound-symmetric likelihood depends on the data only through each data set's mean x̄_i
and centred sum of squares SS_i = Σ_j (x_ij − x̄_i)²: with c1 = 1 − ρ, c2 = 1 + (J − 1)ρ the
eigenvalues of the correlation matrix (along 1 and orthogonal to it),

    log p(x_i) = −J/2 log 2π − ½ [J log σ_i² + (J − 1) log c1 + log c2]
                 − ½ [SS_i / (σ_i² c1) + J (x̄_i − δ_i)² / (σ_i² c2)],

so a fit costs O(q) per gradient, whatever J, and the data sets may have different J_i.

**How it is sampled.** Sampling δ_i directly (Stan's program) or non-centred
(δ_i = δ0 + std0 z_i) leaves NUTS a funnel in one or the other regime: each data set's mean
is known only to about σ_i / sqrt(K_i) however many runs are made (ρ_i = 1/K_i), so the data
often pin δ_i no more tightly than std0 does, and std0's posterior under its flat prior
spans orders of magnitude. In a pilot of 90 collections (q = 5 or 10 data sets of 10, 20 or
100 measurements, std0 from 0 to 3 σ), the non-centred form diverged in 24 % of the fits at
target_accept 0.99, and a choice between the two forms made from the data in 14 %. The
same model is sampled here without δ_i:

* the Student-t as a scale mixture of normals, δ_i | λ_i ~ N(δ0, std0² / λ_i),
  λ_i ~ Gamma(ν/2, rate ν/2), with λ_i sampled as w_i = sqrt(ν/2) log λ_i (its density
  exact, its spread about 1 whatever ν);
* δ_i integrated out in closed form: x_i ~ MVN(δ0 1, σ_i² [(1 − ρ_i) I + ρ_i 11ᵀ]
  + τ_i² 11ᵀ), τ_i² = std0² / λ_i, which again reduces to (x̄_i, SS_i)
  (:func:`loglik_marginal`: x̄_i ~ N(δ0, τ_i² + σ_i² c2 / J_i), SS_i ~ σ_i² c1 χ²(J_i − 1));
* after sampling, δ_i drawn from its exact conditional normal law
  (:func:`conditional_delta`), and its probabilities averaged over that law.

In that pilot this form had no divergence at target_accept 0.9 (and r̂ ≤ 1.01 in every
fit), and on two collections fitted with 80 000 draws its posterior (δ0, std0, the δ_i and
the probabilities) matched that of the direct forms within Monte Carlo error.

Sampled coordinates (the unconstrained values PyMC samples; :func:`build_datasets_model`):
``delta0_interval__``, ``std0_interval__``, ``gamma_alpha_interval__``,
``gamma_beta_interval__``, ``nu_minus_one_log__``, ``lambda_w`` (q) and
``sigma_interval__`` (q).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "ZERO_VARIANCE_FRACTION",
    "DatasetsStats",
    "build_datasets_model",
    "conditional_delta",
    "datasets_data",
    "datasets_stats",
    "loglik_marginal",
    "loglik_sufficient",
]

#: A data set whose differences are all equal (SS_i = 0) gets SS_i = f (J_i − 1) s²_pool,
#: f this fraction and s²_pool the pooled within-data-set variance of the other data sets:
#: its standard deviation is then taken as 10 % of theirs (see :func:`datasets_stats`).
ZERO_VARIANCE_FRACTION = 0.01

#: Bounds of the hyperpriors α ~ U(1, 2) and β ~ U(0.01, 0.1) of ν − 1 ~ Gamma(α, β), and the
#: factor of the upper bounds of std0 and σ_i (baycomp's defaults).
ALPHA_BOUNDS = (1.0, 2.0)
BETA_BOUNDS = (0.01, 0.1)
UPPER_SIGMA = 1000.0


@dataclass(frozen=True)
class DatasetsStats:
    """Sufficient statistics of the per-fold differences of q data sets, on the scaled data.

    Attributes
    ----------
    names : list of str or int
        The data sets' labels.
    n : ndarray of shape (q,)
        Measurements J_i per data set.
    folds : ndarray of shape (q,)
        Folds per CV run K_i = J_i / runs.
    rho : ndarray of shape (q,)
        Correlation ρ_i of two measurements of a data set (default 1 / K_i).
    mean : ndarray of shape (q,)
        Mean x̄_i of the scaled differences.
    ss : ndarray of shape (q,)
        Centred sum of squares SS_i of the scaled differences (floored for zero variance).
    scale : float
        The divisor of the data: the mean over data sets of their standard deviations.
    max_abs : float
        max abs(x_ij) of the scaled data.
    zero_variance : ndarray of bool, shape (q,)
        Data sets whose differences were all equal (their SS_i was floored).
    runs : int
        CV runs per data set.
    """

    names: list
    n: np.ndarray
    folds: np.ndarray
    rho: np.ndarray
    mean: np.ndarray
    ss: np.ndarray
    scale: float
    max_abs: float
    zero_variance: np.ndarray
    runs: int

    @property
    def n_datasets(self) -> int:
        """Number of data sets q."""
        return int(self.n.size)


def _real(values: Any, what: str) -> np.ndarray:
    """`values` as floats; complex values are refused (numpy would drop their imaginary part)."""
    if np.iscomplexobj(values):
        raise ValueError(f"{what} must be real differences, got complex values")
    return np.asarray(values, dtype=float)


def _as_rows(diff: Any) -> list[np.ndarray]:
    """Split `diff` (a 2-d array or a sequence of 1-d arrays) into float rows."""
    if isinstance(diff, np.ndarray) or not isinstance(diff, Sequence):
        arr = _real(diff, "diff")
        if arr.ndim != 2:
            raise ValueError(
                "diff must be a 2-d array (data sets × measurements) or a list of 1-d arrays, "
                f"got an array of shape {arr.shape}"
            )
        return list(arr)
    rows = []
    for i, row in enumerate(diff):
        arr = _real(row, f"data set {i}")
        if arr.ndim != 1:
            raise ValueError(f"data set {i} must be a 1-d array, got shape {arr.shape}")
        rows.append(arr)
    return rows


def datasets_stats(
    diff: Any, *, runs: int = 1, names: Sequence | None = None, rho: Any = None
) -> DatasetsStats:
    """Scale per-fold differences as baycomp does and reduce them to (J_i, x̄_i, SS_i).

    Parameters
    ----------
    diff : array-like of shape (q, J) or sequence of 1-d arrays
        Per-fold differences of the two learners, one row per data set; rows may differ in
        length J_i.
    runs : int, default 1
        CV runs per data set: J_i = runs × K_i with K_i folds per run, ρ_i = 1 / K_i.
    names : sequence, optional
        Labels of the data sets; default 0..q−1.
    rho : float or array-like of shape (q,), optional
        Correlation ρ_i of two measurements of each data set, in (0, 1); default 1 / K_i
        (baycomp's, equal folds). With known fold sizes, ρ_i = r_i / (1 + r_i) for r_i the mean
        n_test/n_train, so that ρ_i / (1 − ρ_i) = r_i, the Nadeau–Bengio ratio.

    Returns
    -------
    DatasetsStats

    Raises
    ------
    ValueError
        For a non-finite value, fewer than two data sets, a data set with fewer than two
        measurements, `runs` not a positive integer dividing every J_i (or leaving one fold
        per run), `names` of the wrong length or with repeats, a `rho` not in (0, 1) or of the
        wrong length, or differences that are constant within every data set.

    Warns
    -----
    UserWarning
        When some data sets have zero variance: their SS_i is set to
        :data:`ZERO_VARIANCE_FRACTION` × (J_i − 1) × the pooled within-data-set variance of
        the others (deterministic, unlike baycomp's random jitter), and they are named.

    Notes
    -----
    The divisor is the mean over data sets of np.std(x_i) (ddof = 0), computed before the
    zero-variance floor, as baycomp computes it before its jitter. The hyperprior bounds use
    the scaled data: s_within = mean_i sqrt(SS_i / J_i) after the floor, s_among = the
    standard deviation of the x̄_i (s_within when that is 0, all means equal).
    """
    if isinstance(runs, bool) or not isinstance(runs, int | np.integer) or runs < 1:
        raise ValueError(f"runs must be a positive integer, got {runs!r}")
    rows = _as_rows(diff)
    q = len(rows)
    if q < 2:
        raise ValueError(f"the hierarchical model needs at least 2 data sets, got {q}")
    n = np.array([row.size for row in rows], dtype=float)
    for i, row in enumerate(rows):
        if row.size < 2:
            raise ValueError(f"data set {i} has {row.size} measurement(s); at least 2 needed")
        bad = ~np.isfinite(row)
        if bad.any():
            what = "NaN" if np.isnan(row[bad]).any() else "infinite"
            raise ValueError(
                f"diff has {int(bad.sum())} non-finite value(s) ({what}) in data set {i}"
            )
        if row.size % runs:
            raise ValueError(f"runs={runs} does not divide the {row.size} measurements of set {i}")
    folds = n / runs
    if (folds < 2).any():
        raise ValueError(f"runs={runs} leaves fewer than 2 folds per run (ρ = 1/K needs K ≥ 2)")
    if names is None:
        labels: list = list(range(q))
    else:
        labels = list(names)
        if len(labels) != q or len(set(map(str, labels))) != q:
            raise ValueError(f"names must be {q} distinct labels, got {names!r}")
    if rho is None:
        rho_i = 1.0 / folds
    else:
        rho_i = np.asarray(rho, dtype=float)
        if rho_i.ndim > 1 or rho_i.size not in (1, q) or not np.all((rho_i > 0) & (rho_i < 1)):
            raise ValueError(f"rho must be one value or {q} values in (0, 1), got {rho!r}")
        rho_i = np.broadcast_to(rho_i, (q,)).copy()
    means = np.array([row.mean() for row in rows])
    ss = np.array([np.sum((row - m) ** 2) for row, m in zip(rows, means, strict=True)])
    scale = float(np.mean(np.sqrt(ss / n)))
    if not scale > 0:
        raise ValueError("the differences are constant within every data set: nothing to scale")
    means = means / scale
    ss = ss / scale**2
    max_abs = max(float(np.max(np.abs(row))) for row in rows) / scale
    zero = ss <= 1e-20 * n  # a standard deviation below 1e-10 of the scale
    if zero.any():
        pooled = ss[~zero].sum() / (n[~zero] - 1).sum()
        ss = np.where(zero, ZERO_VARIANCE_FRACTION * (n - 1) * pooled, ss)
        which = [labels[i] for i in np.flatnonzero(zero)]
        warnings.warn(
            f"data sets {which} have zero variance (all differences equal); their variance is "
            f"set to {ZERO_VARIANCE_FRACTION:g} × the pooled variance of the others",
            UserWarning,
            stacklevel=3,
        )
    if max_abs == 0:  # pragma: no cover - scale > 0 implies a nonzero difference
        max_abs = 1.0
    return DatasetsStats(
        names=labels, n=n, folds=folds, rho=rho_i, mean=means, ss=ss, scale=scale,
        max_abs=max_abs, zero_variance=zero, runs=int(runs),
    )  # fmt: skip


def datasets_data(stats: DatasetsStats) -> dict[str, np.ndarray]:
    """Everything the model reads for one fit: sufficient statistics and prior bounds.

    Parameters
    ----------
    stats : DatasetsStats
        From :func:`datasets_stats`.

    Returns
    -------
    dict of ndarray
        Rows ``mean``, ``ss``, ``n`` and ``rho`` (q each) and the scalars of
        :data:`bayescv.bayes._datasets_density.SCALARS`: ``delta_lo``, ``delta_hi`` (± max abs(x)),
        ``std0_hi`` (1000 s_among), ``sigma_hi`` (1000 s_within), ``alpha_lo``,
        ``alpha_hi``, ``beta_lo``, ``beta_hi``.
    """
    within = float(np.mean(np.sqrt(stats.ss / stats.n)))
    among = float(np.std(stats.mean))
    if not among > 0:
        among = within
    out = {
        "mean": stats.mean,
        "ss": stats.ss,
        "n": stats.n,
        "rho": stats.rho,
        "delta_lo": -stats.max_abs,
        "delta_hi": stats.max_abs,
        "std0_hi": UPPER_SIGMA * among,
        "sigma_hi": UPPER_SIGMA * within,
        "alpha_lo": ALPHA_BOUNDS[0],
        "alpha_hi": ALPHA_BOUNDS[1],
        "beta_lo": BETA_BOUNDS[0],
        "beta_hi": BETA_BOUNDS[1],
    }
    return {name: np.asarray(value, dtype=float) for name, value in out.items()}


def loglik_sufficient(mean, ss, n, rho, delta, sigma):
    """Compound-symmetric MVN log-likelihood of each data set from (x̄_i, SS_i), with numpy.

    Parameters
    ----------
    mean, ss, n, rho : array-like
        Per data set: mean, centred sum of squares, number of measurements, correlation.
    delta, sigma : array-like
        Mean δ_i and standard deviation σ_i; broadcast against the data.

    Returns
    -------
    ndarray
        log MVN(x_i; δ_i 1, σ_i² [(1 − ρ_i) I + ρ_i 11ᵀ]) per data set.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> x = np.array([0.1, -0.3, 0.4, 0.2])
    >>> cov = 0.5**2 * (0.75 * np.eye(4) + 0.25)
    >>> ref = stats.multivariate_normal(np.full(4, 0.1), cov).logpdf(x)
    >>> ss = np.sum((x - x.mean()) ** 2)
    >>> bool(np.isclose(loglik_sufficient(x.mean(), ss, 4, 0.25, 0.1, 0.5), ref))
    True
    """
    mean, ss, n, rho = (np.asarray(v, dtype=float) for v in (mean, ss, n, rho))
    c1 = 1.0 - rho
    c2 = 1.0 + (n - 1.0) * rho
    s2 = np.square(sigma)
    logdet = n * np.log(s2) + (n - 1.0) * np.log(c1) + np.log(c2)
    quad = ss / (s2 * c1) + n * np.square(mean - delta) / (s2 * c2)
    return -0.5 * (n * math.log(2.0 * math.pi) + logdet + quad)


def loglik_marginal(mean, ss, n, rho, delta0, tau2, sigma):
    """Log-likelihood of each data set with δ_i ~ N(δ0, τ_i²) integrated out, from (x̄_i, SS_i).

    x_i ~ MVN(δ0 1, σ_i² [(1 − ρ_i) I + ρ_i 11ᵀ] + τ_i² 11ᵀ): with V_i = τ_i² + σ_i² c2 / J_i,

        −½ [J log 2π + log J + log V + (x̄ − δ0)² / V + (J − 1) log(σ² c1) + SS / (σ² c1)].

    Parameters
    ----------
    mean, ss, n, rho : array-like
        Per data set: mean, centred sum of squares, number of measurements, correlation.
    delta0, tau2, sigma : array-like
        Population mean, variance τ_i² of δ_i, and σ_i; broadcast against the data.

    Returns
    -------
    ndarray
        The log-likelihood per data set.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> x = np.array([0.1, -0.3, 0.4, 0.2])
    >>> cov = 0.5**2 * (0.75 * np.eye(4) + 0.25) + 0.3**2
    >>> ref = stats.multivariate_normal(np.full(4, 0.1), cov).logpdf(x)
    >>> ss = np.sum((x - x.mean()) ** 2)
    >>> bool(np.isclose(loglik_marginal(x.mean(), ss, 4, 0.25, 0.1, 0.3**2, 0.5), ref))
    True
    """
    mean, ss, n, rho = (np.asarray(v, dtype=float) for v in (mean, ss, n, rho))
    c1 = 1.0 - rho
    c2 = 1.0 + (n - 1.0) * rho
    s2 = np.square(sigma)
    v = tau2 + s2 * c2 / n
    return -0.5 * (
        n * math.log(2.0 * math.pi) + np.log(n) + np.log(v) + np.square(mean - delta0) / v
        + (n - 1.0) * np.log(s2 * c1) + ss / (s2 * c1)
    )  # fmt: skip


def _scaled_log_gamma(k, size):
    """``CustomDist`` graph of w = sqrt(k) log λ, λ ~ Gamma(k, rate k)."""
    import pytensor.tensor as pt

    from bayescv.bayes.model import _import_pymc

    pm = _import_pymc()
    return pt.sqrt(k) * pt.log(pm.Gamma.dist(alpha=k, beta=k, size=size))


def build_datasets_model(data: dict[str, np.ndarray], names: Sequence | None = None):
    """Build the PyMC model of several data sets: the specification of its numba density.

    Parameters
    ----------
    data : dict of ndarray
        Output of :func:`datasets_data`.
    names : sequence, optional
        Labels for the ``dataset`` coordinate; default 0..q−1.

    Returns
    -------
    pymc.Model
        Free variables ``delta0``, ``std0``, ``gamma_alpha``, ``gamma_beta``,
        ``nu_minus_one`` (value variables with PyMC's interval and log transforms),
        ``lambda_w`` (w_i = sqrt(ν/2) log λ_i, λ_i ~ Gamma(ν/2, ν/2): PyMC derives its
        density) and ``sigma``; deterministics ``nu`` and ``lambda``; the likelihood, δ_i
        integrated out, as the potential ``loglik`` (:func:`loglik_marginal`, no J × J
        matrix).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(3, 10))
    >>> model = build_datasets_model(datasets_data(datasets_stats(x)))  # doctest: +SKIP
    >>> [v.name for v in model.value_vars][-2:]  # doctest: +SKIP
    ['lambda_w', 'sigma_interval__']
    """
    from bayescv.bayes.model import _import_pymc

    pm = _import_pymc()
    import pytensor.tensor as pt

    q = int(np.size(data["mean"]))
    coords = {"dataset": list(range(q)) if names is None else [str(x) for x in names]}
    with pm.Model(coords=coords) as model:
        delta0 = pm.Uniform("delta0", float(data["delta_lo"]), float(data["delta_hi"]))
        std0 = pm.Uniform("std0", 0.0, float(data["std0_hi"]))
        alpha = pm.Uniform("gamma_alpha", float(data["alpha_lo"]), float(data["alpha_hi"]))
        beta = pm.Uniform("gamma_beta", float(data["beta_lo"]), float(data["beta_hi"]))
        nu_m1 = pm.Gamma("nu_minus_one", alpha=alpha, beta=beta)
        nu = pm.Deterministic("nu", 1.0 + nu_m1)
        k = nu / 2.0
        w = pm.CustomDist("lambda_w", k, dist=_scaled_log_gamma, dims="dataset")
        lam = pm.Deterministic("lambda", pt.exp(w / pt.sqrt(k)), dims="dataset")
        sigma = pm.Uniform("sigma", 0.0, float(data["sigma_hi"]), dims="dataset")
        n, rho = data["n"], data["rho"]
        c1, c2 = 1.0 - rho, 1.0 + (n - 1.0) * rho
        s2 = pt.square(sigma)
        v = pt.square(std0) / lam + s2 * c2 / n
        const = n * math.log(2.0 * math.pi) + np.log(n) + (n - 1.0) * np.log(c1)
        quad = pt.square(data["mean"] - delta0) / v + data["ss"] / (s2 * c1)
        pm.Potential("loglik", -0.5 * pt.sum(const + pt.log(v) + (n - 1.0) * pt.log(s2) + quad))
    return model


def conditional_delta(mean, n, rho, delta0, tau2, sigma):
    """Mean and variance of δ_i given the data and the parameters (normal-normal conjugacy).

    Parameters
    ----------
    mean, n, rho : array-like
        Per data set: mean, number of measurements, correlation.
    delta0, tau2, sigma : array-like
        Population mean, variance τ_i² = std0² / λ_i of δ_i, and σ_i (broadcast).

    Returns
    -------
    loc, var : ndarray
        δ_i | ... ~ N(loc, var): loc = δ0 + (τ² / V)(x̄ − δ0), var = τ² (σ² c2 / J) / V.
    """
    mean, n, rho = (np.asarray(v, dtype=float) for v in (mean, n, rho))
    se2 = np.square(sigma) * (1.0 + (n - 1.0) * rho) / n
    v = tau2 + se2
    return delta0 + tau2 / v * (mean - delta0), tau2 * se2 / v
