"""Collapse loss tables to the block statistics the model sees, and the model's numpy side.

Per block k only (n_k, ē_k, W_k) enter the likelihood (``ē_k = S_k / n_k``; W_k is the
within-block sum of squares of :func:`bayescv.moments.block_moments`), so a fit costs the
same for 10³ and for 10⁷ losses. This module turns one or several loss tables into those
statistics (:class:`CollapsedStats`), and evaluates the collapsed log-likelihood, prior and
predictive draws with numpy, so that derived quantities need no compiled graph.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from bayescv.bayes._rank1 import own_variance, rank1_logdet
from bayescv.losses import validate
from bayescv.losses._runs import run_starts
from bayescv.moments import block_moments

__all__ = ["CollapsedStats", "collapse", "loglik_numpy", "tie_term"]

_LOG_2PI = math.log(2.0 * math.pi)
SCHEMES = ("source", "random")


@dataclass(frozen=True)
class CollapsedStats:
    """Sufficient statistics of one fit, as :func:`collapse` returns them for the likelihood.

    The likelihood has three terms (see :func:`loglik_numpy`): the within-block sums of
    squares ``W`` (``W_k / ν_k ~ χ²(dof_k)``), the location vector ``ybar`` of block means
    (``ybar ~ MVN(μ₀ 1, τ² I + Σ / ybar_count)``, Σ = Γ + diag(ν_k / n_k)) and a scatter
    term for replicated block means (``−a/2 log|Σ_s| − b/2 tr(Σ_s⁻¹ S)``, with
    Σ_s = Σ + scatter_tau · τ² I, the within-block part ν_k/n_k scaled by
    ``scatter_nu_factor`` and ``scatter_extra`` added to the diagonal: both are 1 and 0
    except for bootstrap resamples, see :func:`tie_term`).
    """

    scheme: str
    kind: str
    labels: np.ndarray
    sources: np.ndarray | None
    n: np.ndarray
    ybar: np.ndarray
    ybar_count: float
    W: np.ndarray
    dof: np.ndarray
    w_const: np.ndarray
    scatter: np.ndarray
    scatter_df: float
    scatter_weight: float
    scatter_tau: float
    scatter_const: float
    scatter_nu_factor: np.ndarray
    scatter_extra: np.ndarray
    n_replicates: int
    n_bootstrap: int
    replicate_means: np.ndarray
    replicate_W: np.ndarray
    scales: dict[str, float] = field(default_factory=dict)

    @property
    def n_blocks(self) -> int:
        """Number of blocks K."""
        return int(self.labels.size)

    @property
    def weights(self) -> np.ndarray:
        """Weights n_k / N of the block means in the pooled CV estimate μ̂ = Σ_k S_k / N."""
        return self.n / self.n.sum()

    def likelihood_data(self) -> dict[str, np.ndarray]:
        """Return the arrays the compiled likelihood reads, by data-container name."""
        return {
            "n": self.n,
            "ybar": self.ybar,
            "ybar_count": np.asarray(self.ybar_count),
            "W": self.W,
            "dof": self.dof,
            "w_const": self.w_const,
            "scatter": self.scatter,
            "scatter_df": np.asarray(self.scatter_df),
            "scatter_weight": np.asarray(self.scatter_weight),
            "scatter_tau": np.asarray(self.scatter_tau),
            "scatter_const": np.asarray(self.scatter_const),
            "scatter_nu_factor": self.scatter_nu_factor,
            "scatter_extra": self.scatter_extra,
        }


def collapse(
    losses: xr.Dataset, bootstrap: xr.Dataset | None = None, *, scheme: str | None = None
) -> CollapsedStats:
    """Reduce loss tables to the statistics of the collapsed likelihood.

    Parameters
    ----------
    losses : xarray.Dataset
        The observed loss table. Without a ``replicate`` dim: one realisation. With one, by
        its ``replicate_kind``: ``"independent"`` realisations (simulated data sets) share
        every parameter, so their block means enter through their mean (covariance Σ/R) and
        their centred scatter (a Wishart term with R − 1 degrees of freedom); ``"repeat"``
        (repeated CV of the same data) enters with each replicate's likelihood raised to the
        power 1/R, so R identical runs count as one; ``"bootstrap"`` is refused here: pass
        the observed table as `losses` and the bootstrap table as `bootstrap`.
    bootstrap : xarray.Dataset, optional
        Bootstrap replicates of the same data (``replicate_kind="bootstrap"``, at least two,
        the same blocks). Their block means inform only the sampling covariance Σ, through
        their centred scatter; μ and the within-block variances come from `losses` alone.
        Where the table's ``index`` records resampled rows (some row drawn twice in a
        replicate, as :func:`bayescv.bootstrap_cv_losses` records them), the scatter's
        expectation carries the duplicated-point term of :func:`tie_term`, which the
        likelihood models instead of reading it as between-block covariance.
    scheme : {"source", "random"}, optional
        Model for CVS (per-source parameters and a hierarchy over sources) or for CVR
        (exchangeable folds); default from the table's ``scheme`` attribute.

    Returns
    -------
    CollapsedStats
        The statistics, with the data scales used by the priors in ``scales``.

    Raises
    ------
    ValueError
        For a bootstrap table passed as `losses`, a bootstrap table with other blocks or
        fewer than two replicates, independent replicates whose block sizes differ, a block
        missing from a replicate, an unknown scheme, or losses so large that their squares
        overflow float64 (:func:`bayescv.moments.block_moments` refuses them).
    """
    scheme = scheme or losses.attrs.get("scheme")
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    mom, sources = _moments(losses)
    labels = mom["block"].values
    n_all = np.atleast_2d(mom["n"].values).astype(float)
    s_all = np.atleast_2d(mom["S"].values)
    w_all = np.atleast_2d(mom["W"].values)
    n_rep, k = n_all.shape
    if (n_all == 0).any():
        r, b = np.argwhere(n_all == 0)[0]
        raise ValueError(f"block {labels[b].item()!r} has no points in replicate {r}")
    means = s_all / n_all
    kind = losses.attrs.get("replicate_kind", "single") if "replicate" in losses.dims else "single"
    if kind == "bootstrap":
        raise ValueError(
            "a bootstrap table cannot inform the error means: pass the observed table as "
            "`losses` and the bootstrap replicates as `bootstrap=`"
        )
    if n_rep == 1:
        kind = "single"
    scatter = np.zeros((k, k))
    a = b = t = c = 0.0
    if kind == "single":
        n, ybar, count = n_all[0], means[0], 1.0
        w, dof, w_const = w_all[0], n - 1.0, -0.5 * np.log(n)
    elif kind == "independent":
        if not (n_all == n_all[0]).all():
            raise ValueError(
                "independent replicates must have the same block sizes (the block means then "
                "share one covariance); got differing sizes"
            )
        n, ybar, count = n_all[0], means.mean(axis=0), float(n_rep)
        w, dof = w_all.sum(axis=0), (n_all - 1.0).sum(axis=0)
        w_const = -0.5 * np.log(n_all).sum(axis=0)
        dev = means - ybar
        scatter, a, b, c = dev.T @ dev, n_rep - 1.0, 1.0, -0.5 * k * math.log(n_rep)
    elif kind == "repeat":
        n, ybar, count = n_all.mean(axis=0), means.mean(axis=0), 1.0
        w, dof = w_all.mean(axis=0), (n_all - 1.0).mean(axis=0)
        w_const = -0.5 * np.log(n_all).mean(axis=0)
        dev = means - ybar
        scatter, b, t = dev.T @ dev, 1.0 / n_rep, 1.0
    else:  # pragma: no cover - validate() admits only the kinds above
        raise ValueError(f"unknown replicate kind {kind!r}")
    n_boot = 0
    nu_factor, extra = np.ones(k), np.zeros(k)
    if bootstrap is not None:
        if kind != "single":
            raise ValueError(
                "bootstrap replicates go with one observed table, not a replicated one"
            )
        scatter, a, n_boot = _bootstrap_scatter(bootstrap, labels)
        b, t, c = 1.0, 0.0, 0.0
        ties = tie_term(bootstrap, labels)
        if ties is not None:
            n_obs = n_all[0]
            nu_factor = 1.0 - 1.0 / n_obs
            extra = nu_factor * ties / n_obs
        kind = "bootstrap"
    scales = _scales(n_all, means, w_all, ybar)
    return CollapsedStats(
        scheme=scheme,
        kind=kind,
        labels=labels,
        sources=sources,
        n=np.asarray(n, dtype=float),
        ybar=np.asarray(ybar, dtype=float),
        ybar_count=float(count),
        W=np.asarray(w, dtype=float),
        dof=np.asarray(dof, dtype=float),
        w_const=np.asarray(w_const, dtype=float),
        scatter=scatter,
        scatter_df=float(a),
        scatter_weight=float(b),
        scatter_tau=float(t),
        scatter_const=float(c),
        scatter_nu_factor=np.asarray(nu_factor, dtype=float),
        scatter_extra=np.asarray(extra, dtype=float),
        n_replicates=n_rep,
        n_bootstrap=n_boot,
        replicate_means=means,
        replicate_W=w_all,
        scales=scales,
    )


def _moments(table: xr.Dataset) -> tuple[xr.Dataset, np.ndarray | None]:
    """Block moments and the source of each block, in O(N) time, after the table's checks.

    :func:`bayescv.losses.validate` checks the table (one pass for tables stored block by
    block, as loss tables are); the source of each block is read at the starts of the
    contiguous block runs.
    """
    validate(table)
    has_source = "source" in table.coords
    mom = block_moments(table.drop_vars("source") if has_source else table)
    if not has_source:
        return mom, None
    labels = mom["block"].values
    blocks = np.atleast_2d(table["block"].values)
    srcs = np.atleast_2d(table["source"].values)
    found: dict[Any, Any] = {}
    for b_row, s_row in zip(blocks, srcs, strict=True):
        starts = run_starts(b_row)
        run_labels = b_row[starts]
        lengths = np.diff(np.append(starts, b_row.size))
        if np.unique(run_labels).size != run_labels.size:  # not contiguous: slow path
            full = block_moments(table)
            return mom, full["source"].values if "source" in full.coords else None
        if not np.array_equal(s_row, np.repeat(s_row[starts], lengths)):
            return mom, None  # a block holds several sources
        for label, source in zip(run_labels.tolist(), s_row[starts].tolist(), strict=True):
            if found.setdefault(label, source) != source:
                return mom, None
    return mom, np.array([found[label] for label in labels.tolist()])


def _bootstrap_scatter(table: xr.Dataset, labels: np.ndarray) -> tuple[np.ndarray, float, int]:
    if (
        not isinstance(table, xr.Dataset)
        or "replicate" not in table.dims
        or table.attrs.get("replicate_kind") != "bootstrap"
    ):
        raise ValueError(
            "`bootstrap` must be a loss table with a replicate dim and replicate_kind='bootstrap'"
        )
    mom, _ = _moments(table)
    if not np.array_equal(mom["block"].values, labels):
        raise ValueError(
            f"the bootstrap table's blocks {mom['block'].values.tolist()} differ from the "
            f"observed table's {labels.tolist()}"
        )
    n = mom["n"].values.astype(float)
    if (n == 0).any():
        raise ValueError("a block is missing from a bootstrap replicate")
    n_boot = n.shape[0]
    if n_boot < 2:
        raise ValueError("at least two bootstrap replicates are needed for their scatter")
    means = mom["S"].values / n
    dev = means - means.mean(axis=0)
    return dev.T @ dev, float(n_boot - 1), n_boot


def tie_term(table: xr.Dataset, labels: np.ndarray) -> np.ndarray | None:
    """Per block, the mean over its points of the variance of a point's loss across models.

    A bootstrap replicate resamples the n_k test points of block k with multiplicities
    w ~ Multinomial(n_k, 1/n_k), independently of the block's model m, which is refitted on
    the other (resampled) blocks. Writing L_i(m) for the loss of original point i under m and
    c_i = Var*(L_i(m)) for its variance across bootstrap models, the bootstrap variance of
    the block mean ē*_k = Σ_i w_i L_i(m) / n_k is, exactly,

        Var*(ē*_k) = E*[s²(m)] / n_k + Var*(mean_i L_i(m)),

    with s²(m) the divisor-n spread of the block's losses under m. Both terms hold c̄_k =
    mean_i c_i: the first as part of the per-point variance (≈ (1 − 1/n_k) ν_k, as in the
    data's own sampling distribution), the second once more, through c̄_k / n_k. So

        Var*(ē*_k) ≈ (1 − 1/n_k) (ν_k / n_k + c̄_k / n_k) + ω_k,

    whereas a fresh data set has Var(ē_k) = ν_k / n_k + ω_k: two fresh test points never
    coincide, a point drawn twice in a resample carries its own model-driven variance twice.
    For a 0-1 loss c_i = p_i (1 − p_i), with p_i the share of bootstrap models that
    misclassify point i, which is far larger than the smooth ω_k of the block's error
    (``docs/bayes.md`` measures both). The collapsed likelihood therefore models the
    bootstrap scatter with this diagonal, the factor (1 − 1/n_k) left off ω_k so that the
    scatter's covariance stays positive definite by construction (a relative error 1/n_k on
    ω_k). Off the diagonal, resampling is independent between blocks and nothing is added.

    c_i is estimated without bias from the replicates that draw point i (the table's
    ``index`` coordinate: copies of a row in one replicate share the block and the model,
    so one value per replicate), with ``ddof=1``; points drawn in fewer than two replicates
    are left out (which replicates draw a point does not depend on the models), and c̄_k
    is the plain mean over the block's points. For random K-fold CV, where a point's fold
    changes between replicates, a point counts in a block once for every replicate that
    tests it there. One pass over the table (a second for random K-fold CV): O(R N) time,
    O(N) memory.

    Parameters
    ----------
    table : xarray.Dataset
        Bootstrap loss table, dims ``(replicate, obs)``, with ``index`` and ``block``.
    labels : ndarray
        Block labels, in the order of the result.

    Returns
    -------
    ndarray of shape (K,) or None
        c̄_k per block; None when no replicate draws any row twice: then the rows are not
        recorded resamples (for example, fresh simulated data sets labelled as bootstrap),
        and no duplicated-point term is estimable or present.
    """
    loss = np.atleast_2d(np.asarray(table["loss"].values, dtype=float))
    index = np.atleast_2d(np.asarray(table["index"].values, dtype=np.int64))
    codes = np.searchsorted(labels, np.atleast_2d(table["block"].values))
    n_rows, k = int(index.max()) + 1, labels.size
    # One pass: each point's loss in every replicate that draws it (copies share the value),
    # its running mean and sum of squared deviations (Welford), and the block testing it.
    times, mean, squares = np.zeros(n_rows), np.zeros(n_rows), np.zeros(n_rows)
    home = np.full(n_rows, -1, dtype=np.int64)
    resampled = moved = False
    for r in range(loss.shape[0]):
        count = np.bincount(index[r], minlength=n_rows)
        resampled = resampled or bool(count.max() > 1)
        drawn = count > 0
        value = np.bincount(index[r], weights=loss[r], minlength=n_rows)[drawn] / count[drawn]
        times[drawn] += 1.0
        delta = value - mean[drawn]
        mean[drawn] += delta / times[drawn]
        squares[drawn] += delta * (value - mean[drawn])
        seen = home[index[r]]
        moved = moved or bool(((seen >= 0) & (seen != codes[r])).any())
        home[index[r]] = codes[r]
    if not resampled:
        return None
    usable = times >= 2
    c_point = np.divide(squares, times - 1.0, out=np.zeros(n_rows), where=usable)
    if not moved:  # CVS: every point has one block; average its points equally
        keep = usable & (home >= 0)
        c_sum = np.bincount(home[keep], weights=c_point[keep], minlength=k)
        c_count = np.bincount(home[keep], minlength=k).astype(float)
    else:  # CVR: a point counts in a block once per replicate that tests it there
        c_sum, c_count = np.zeros(k), np.zeros(k)
        for r in range(loss.shape[0]):
            keep = (np.bincount(index[r], minlength=n_rows) > 0) & usable
            home[index[r]] = codes[r]
            c_sum += np.bincount(home[keep], weights=c_point[keep], minlength=k)
            c_count += np.bincount(home[keep], minlength=k)
    if (c_count == 0).any():
        missing = labels[c_count == 0].tolist()
        raise ValueError(
            f"blocks {missing} have no point drawn in two bootstrap replicates: too few "
            "replicates to estimate the duplicated-point term of the bootstrap scatter"
        )
    return c_sum / c_count


def _scales(
    n_all: np.ndarray, means: np.ndarray, w_all: np.ndarray, ybar: np.ndarray
) -> dict[str, float]:
    """Return the data scales the priors are expressed in (:mod:`bayescv.bayes.priors`)."""
    total_n = n_all.sum()
    mean = float((n_all * means).sum() / total_n)
    var_within = float(w_all.sum() / (n_all - 1.0).sum())
    total_ss = w_all.sum() + (n_all * (means - mean) ** 2).sum()
    n_points = float(n_all[0].sum())
    n_bar = n_points / n_all.shape[1]
    var_means = float(np.var(ybar, ddof=1)) if ybar.size > 1 else 0.0
    return {
        "mean": mean,
        "sd_within": math.sqrt(var_within),
        "sd_between": math.sqrt(var_means + var_within / n_bar),
        "sd_total": math.sqrt(total_ss / (total_n - 1.0)),
        "n_points": n_points,
    }


def gamma_matrix(gamma_sd: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """Between-block covariance Γ = diag(s) [(1 − ρ) I + ρ 11ᵀ] diag(s), batched.

    Parameters
    ----------
    gamma_sd : ndarray of shape (..., K)
        Standard deviations s_k = sqrt(ω_k).
    rho : ndarray of shape (...)
        Common correlation.

    Returns
    -------
    ndarray of shape (..., K, K)
    """
    rho = np.asarray(rho)[..., None, None]
    outer = gamma_sd[..., :, None] * gamma_sd[..., None, :]
    eye = np.eye(gamma_sd.shape[-1])
    return (1.0 - rho) * outer * eye + rho * outer


def sigma_matrix(
    stats: CollapsedStats, nu: np.ndarray, gamma_sd: np.ndarray, rho: Any
) -> np.ndarray:
    """Return the covariance of one realisation's block means, Σ = Γ + diag(ν_k / n_k)."""
    gam = gamma_matrix(gamma_sd, rho)
    return gam + (nu / stats.n)[..., None] * np.eye(stats.n_blocks)


def loglik_numpy(
    stats: CollapsedStats,
    mu0: np.ndarray,
    tau: np.ndarray,
    nu: np.ndarray,
    gamma_sd: np.ndarray,
    rho: np.ndarray,
) -> dict[str, np.ndarray]:
    """Evaluate the collapsed log-likelihood, term by term, for batches of parameters.

    With one realisation the three terms add up to the full-data Gaussian log-density of
    the losses (marginal over the source means μ_k ~ N(μ₀, τ²)): the block means and the
    within-block contrasts are independent, and the orthonormal change of variables from
    the losses to them has Jacobian ∏_k n_k^(−1/2), kept in ``w_const``.

    Parameters
    ----------
    stats : CollapsedStats
        Data.
    mu0, tau, rho : ndarray of shape (...)
        Mean and standard deviation of the source means, common correlation of Γ.
    nu, gamma_sd : ndarray of shape (..., K)
        Within-block variances and between-block standard deviations.

    Returns
    -------
    dict
        ``W`` of shape (..., K) (per block), ``ebar`` and ``scatter`` of shape (...).
    """
    mu0, tau, rho = (np.asarray(v, dtype=float) for v in (mu0, tau, rho))
    k = stats.n_blocks
    own = own_variance(nu, gamma_sd, rho, stats.n)
    tau2 = (tau**2)[..., None]
    count = stats.ybar_count
    resid = stats.ybar - mu0[..., None]
    diag_v = tau2 + own / count
    logdet, u, denom = rank1_logdet(diag_v, gamma_sd, rho / count)
    quad = (resid**2 / diag_v).sum(-1) - (rho / count) * (u * resid).sum(-1) ** 2 / denom
    ll_ebar = -0.5 * (k * _LOG_2PI + logdet + quad)
    ll_w = -0.5 * stats.dof * np.log(2.0 * np.pi * nu) - stats.W / (2.0 * nu) + stats.w_const
    ll_scatter = np.full(mu0.shape, stats.scatter_const)
    if stats.scatter_df or stats.scatter_weight:
        diag_s = (
            (1.0 - rho[..., None]) * gamma_sd**2
            + stats.scatter_nu_factor * nu / stats.n
            + stats.scatter_extra
            + stats.scatter_tau * tau2
        )
        logdet_s, u_s, denom_s = rank1_logdet(diag_s, gamma_sd, rho)
        trace = (np.diagonal(stats.scatter) / diag_s).sum(-1) - rho * np.einsum(
            "...k,kl,...l->...", u_s, stats.scatter, u_s
        ) / denom_s
        ll_scatter = ll_scatter - 0.5 * (
            stats.scatter_df * (k * _LOG_2PI + logdet_s) + stats.scatter_weight * trace
        )
    return {"W": ll_w, "ebar": ll_ebar, "scatter": ll_scatter}
