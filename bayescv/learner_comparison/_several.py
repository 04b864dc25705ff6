"""More than two learners on the same splits: which is best, and by how much.

For L learners with per-fold losses on the same J = R·K folds of a data set, the correlated
t-test generalises directly: modelling the L-vector of fold losses as Gaussian with mean μ,
covariance Σ across learners and correlation ρ between folds, the posterior of μ under the
same non-informative prior is a multivariate t with J − 1 degrees of freedom, location the
mean fold losses and scale matrix S (1/J + ρ/(1 − ρ)), S the learners' sample covariance of
the fold losses. Any contrast cᵀμ then has the correlated t-test's posterior: for two learners
this is exactly :func:`correlated_ttest`, and the pairwise table below uses its closed form.

P(learner j is best) = P(μ_j < μ_l for every l ≠ j) and P(j is practically equivalent to the
best) = P(μ_j − min_l μ_l ≤ rope) have no closed form for L > 2; they are averages over draws of
the multivariate t (one ``random_state``, ``n_draws`` draws: their Monte Carlo standard error is
at most 0.5/sqrt(n_draws)). Learners with the same fold losses get the same draws and share
P(best) equally; each is then practically equivalent to the best.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import xarray as xr

from bayescv._provenance import resolve_seed
from bayescv.fold_scores import nb_ratio, validate_fold_table
from bayescv.intervals import check_level, normal_bounds
from bayescv.learner_comparison._correlated_t import check_rope, t_posterior_probabilities
from bayescv.learner_comparison._inputs import as_fold_table

__all__ = ["compare_several"]


#: Standard normals drawn at a time by :func:`_draws` (8 MB).
_NORMALS_PER_BLOCK = 1 << 20


def _draws(losses: np.ndarray, factor: float, n: int, rng) -> np.ndarray:
    """Draws of the multivariate t of the learners' expected losses, shape (n, L).

    ``losses`` is (L, J); the scale matrix is S · factor, S the learners' sample covariance.
    A normal draw with covariance S is formed from the centred fold losses themselves,
    Xc g / sqrt(J − 1) with g ~ N(0, I_J): no factorisation of S, which is singular when
    learners coincide, and learners with the same fold losses get the same draws exactly
    (each distinct row is drawn once), so that their ties are ties.
    """
    rows, inverse = np.unique(losses, axis=0, return_inverse=True)
    J = losses.shape[1]
    centred = rows - rows.mean(axis=1, keepdims=True)
    # g is drawn in blocks of whole rows, the same stream as one (n, J) draw, so that memory
    # is O(n L + J) rather than O(n J): 3.2 GB for 20000 draws of 20000 folds (20 × 1000).
    z = np.empty((n, rows.shape[0]))
    step = max(1, _NORMALS_PER_BLOCK // J)
    for start in range(0, n, step):
        g = rng.standard_normal((min(step, n - start), J))
        z[start : start + g.shape[0]] = g @ centred.T
    z *= np.sqrt(factor / (J - 1))
    w = np.sqrt((J - 1) / rng.chisquare(J - 1, size=(n, 1)))
    return (rows.mean(axis=1) + z * w)[:, inverse.ravel()]


def compare_several(
    table: Any,
    *,
    rope: float = 0.0,
    level: float = 0.95,
    n_draws: int = 20_000,
    random_state: int | np.random.Generator | None = None,
) -> xr.Dataset:
    """Posterior probability that each learner is the best, per data set, and pairwise tests.

    Parameters
    ----------
    table : xarray.Dataset, mapping or sequence
        A fold-score table (:mod:`bayescv.fold_scores`) with at least two learners, or
        per-point loss tables of the learners on the same splits, as ``{name: table}`` or a
        list (learners A, B, …), reduced to one with
        :func:`bayescv.fold_scores.from_loss_tables` (as :func:`bayescv.compare_learners`
        takes them).
    rope : float, default 0
        Half-width of the region of practical equivalence, in loss units.
    level : float, default 0.95
        Mass of the credible intervals of each learner's expected loss.
    n_draws : int, default 20000
        Draws of the multivariate t for ``p_best`` and ``p_equivalent_to_best``.
    random_state : int or numpy.random.Generator, optional
        Seed of those draws; the seed used is recorded in ``attrs["seed"]`` (pass it back to
        repeat them).

    Returns
    -------
    xarray.Dataset
        Dims ``dataset``, ``learner`` (and ``other``, the second learner of a pair):
        ``mean`` (mean fold loss), ``lower``/``upper`` (credible interval of the expected
        loss, kept inside the table's ``loss_range`` attribute when it has one, as
        :func:`bayescv.fold_scores.from_loss_tables` records it), ``flag`` (as
        :func:`bayescv.intervals.normal_bounds` sets it: ``"truncated_to_range"`` where a
        bound was moved onto that range, ``"zero_variance"`` for equal fold losses),
        ``p_best`` (lowest expected loss), ``p_equivalent_to_best`` (within `rope` of the
        lowest), and for every pair ``p_better`` / ``p_equivalent`` / ``p_worse`` (row
        learner minus column learner, closed form; NaN on the diagonal). Attrs: ``rope``, ``level``, ``n_draws``,
        ``target`` (``"err"``), ``metric``, ``greater_is_better``, ``seed``.

    Raises
    ------
    ValueError
        For a malformed table, fewer than two learners, a negative rope, a level outside
        (0, 1) or n_draws < 1.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescv.fold_scores import fold_table
    >>> rng = np.random.default_rng(0)
    >>> base = rng.normal(0.2, 0.02, 10)
    >>> t = fold_table([base, base + 0.05, base + 0.002 + rng.normal(0, 0.002, 10)],
    ...                learners=["a", "b", "c"], greater_is_better=False)
    >>> out = compare_several(t, rope=0.01, random_state=0)
    >>> out["p_best"].sel(learner="b").item() < 0.01
    True
    """
    table = validate_fold_table(as_fold_table(table))
    rope = check_rope(rope)
    check_level(level)
    if isinstance(n_draws, bool) or not isinstance(n_draws, numbers.Integral) or n_draws < 1:
        raise ValueError(f"n_draws must be an integer of at least 1, got {n_draws!r}")
    names = table["learner"].values.tolist()
    L = len(names)
    if L < 2:
        raise ValueError("the table has one learner; a comparison needs two or more")
    seed = resolve_seed(random_state)  # recorded: the draws can be repeated from the result
    rng = np.random.default_rng(seed)
    losses = table["loss"].values.reshape(table.sizes["dataset"], L, -1)
    J = losses.shape[2]
    ratio = nb_ratio(table)
    df = J - 1.0
    D = losses.shape[0]
    mean = losses.mean(axis=2)
    variance = np.empty((D, L))
    p_best, p_equiv_best = np.empty((D, L)), np.empty((D, L))
    pair = {k: np.full((D, L, L), np.nan) for k in ("p_better", "p_equivalent", "p_worse")}
    for d in range(D):
        cov = np.atleast_2d(np.cov(losses[d], ddof=1)) * (1.0 / J + ratio[d])
        variance[d] = np.diag(cov)
        draws = _draws(losses[d], 1.0 / J + ratio[d], int(n_draws), rng)
        best = draws.min(axis=1, keepdims=True)
        at_best = draws == best  # learners tied at the lowest loss share the draw
        p_best[d] = (at_best / at_best.sum(axis=1, keepdims=True)).mean(axis=0)
        p_equiv_best[d] = (draws - best <= rope).mean(axis=0)
        for i in range(L):
            for j in range(L):
                if i == j:
                    continue
                c_var = cov[i, i] + cov[j, j] - 2 * cov[i, j]
                scale = np.sqrt(max(c_var, 0.0))
                b, e, w = t_posterior_probabilities(mean[d, i] - mean[d, j], scale, df, rope)
                pair["p_better"][d, i, j] = b
                pair["p_equivalent"][d, i, j] = e
                pair["p_worse"][d, i, j] = w
    # The t interval of each mean; a bound past the losses' range (below 0 for 0-1 losses
    # near 0) is moved onto it and flagged, as every interval of the package is.
    bounds = tuple(float(v) for v in table.attrs.get("loss_range", (-np.inf, np.inf)))
    _, lower, upper, flag = normal_bounds(
        mean, variance, level=level, kind="t", df=df, bounds=bounds
    )
    dims = ("dataset", "learner")
    pdims = ("dataset", "learner", "other")
    return xr.Dataset(
        {
            "mean": (dims, mean), "lower": (dims, lower), "upper": (dims, upper),
            "flag": (dims, flag),
            "p_best": (dims, p_best), "p_equivalent_to_best": (dims, p_equiv_best),
            **{k: (pdims, v) for k, v in pair.items()},
        },
        coords={"dataset": table["dataset"].values, "learner": names, "other": names},
        attrs={
            "rope": rope, "level": float(level), "n_draws": int(n_draws), "target": "err",
            "method": "correlated_t", "metric": table.attrs.get("metric", ""),
            "greater_is_better": int(table.attrs.get("greater_is_better", 0)), "seed": seed,
        },
    )  # fmt: skip
