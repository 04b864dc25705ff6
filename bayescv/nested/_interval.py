"""Nested cross-validation intervals for the prediction error (Bates, Hastie & Tibshirani).

The naive CV interval ``CV ± z·sd(e)/√n`` treats the per-point CV errors as independent;
they are not (every point trains the models that test the others), and its coverage of the
error of the model fitted on the data at hand (``err_xy``) falls short of nominal. Bates,
Hastie & Tibshirani estimate the mean squared error of CV itself with nested CV and widen
the interval accordingly. :func:`nested_cv` is their method, with the defects of the
authors' R code removed (no point is dropped when K does not divide n) and a grouped
variant for data from several sources.

See :func:`nested_cv` for the algorithm, the two published bias-correction constants, the
clipping of the inflation factor, what is proven for the grouped variant, and the result.

References
----------
Bates, S., Hastie, T. & Tibshirani, R. (2024). Cross-validation: what does it estimate and
how well does it do it? *Journal of the American Statistical Association* 119(546),
1434–1445. doi:10.1080/01621459.2023.2197686 (arXiv:2104.00673). Reference R code:
https://github.com/stephenbates19/nestedcv.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr
from joblib import Parallel, delayed
from sklearn.utils import indexable
from sklearn.utils.validation import _num_samples

from bayescv._extras import progress_bar
from bayescv._provenance import child_seeds, named_seed, resolve_seed, seed_unset
from bayescv.cv import losses_on_folds
from bayescv.cv.loss_functions import Loss, check_target, get_loss, loss_range_for
from bayescv.intervals import check_level, interval_dataset
from bayescv.losses import from_arrays
from bayescv.nested._core import (
    error_free,
    nested_bounds,
    run_block,
    summarise,
)
from bayescv.nested._validate import (
    check_jobs_and_estimator,
    check_response,
    n_model_fits,
    positive_int,
    repetitions,
    resolve_inflation_bounds,
)
from bayescv.tails import add_tail_flags, pooled_tail_shape, warn_heavy_tail

__all__ = ["BIAS_CORRECTIONS", "bias_constant", "nested_cv"]

#: Accepted values of ``bias_correction`` (None switches the correction off).
BIAS_CORRECTIONS = ("code", "paper")

#: Repetitions fitted together in one batch when the learner can be batched.
_BATCH_REPETITIONS = 8
#: Says, before the fits, how many models a run fits (shown by ``bayescv nested``).
_LOG = logging.getLogger(__name__)

_GROUPED_TARGET = (
    "error on new sources of the model fitted on these data (the grouped analogue of "
    "Bates et al.'s Err_XY; its expectation over data sets is the out-of-source error OSE)"
)


def bias_constant(n_splits: int, bias_correction: str | None = "code") -> float:
    """Multiplier c of the bias estimate ``c · (err_ncv − err_cv)``.

    Parameters
    ----------
    n_splits : int
        Number of folds K (at least 3).
    bias_correction : {"code", "paper"} or None, default "code"
        ``"code"``: ``1 + ((K−2)/K)**1.5``, as in the authors' R code (``nested_cv``,
        every published experiment); ``"paper"``: ``1 + (K−2)/K``, as printed in the
        paper; None: 0 (no correction).

    Returns
    -------
    float
        The constant c.

    Examples
    --------
    >>> round(bias_constant(10, "code"), 4), bias_constant(10, "paper"), bias_constant(10, None)
    (1.7155, 1.8, 0.0)
    """
    k = positive_int(n_splits, "n_splits", minimum=3)
    if bias_correction is None:
        return 0.0
    if bias_correction == "code":
        return 1.0 + ((k - 2) / k) ** 1.5
    if bias_correction == "paper":
        return 1.0 + (k - 2) / k
    raise ValueError(
        f"bias_correction must be one of {BIAS_CORRECTIONS} or None, got {bias_correction!r}"
    )


def nested_cv(
    estimator: Any,
    X: Any,
    y: Any,
    *,
    groups: Any = None,
    n_splits: int = 10,
    n_repeats: int = 50,
    loss: str | Loss | Any = None,
    level: float = 0.95,
    bias_correction: Literal["code", "paper"] | None = "code",
    n_bias_repeats: int | None = None,
    inflation_bounds: tuple[float, float] | Literal["code"] | None = "code",
    random_state: int | np.random.Generator | None = None,
    n_jobs: int | None = None,
    progress: bool = False,
    batched: bool | None = None,
) -> xr.Dataset:
    """Nested-CV interval for the prediction error of the model fitted on these data.

    **Algorithm** (Bates, Hastie & Tibshirani, Algorithm 1 and their R code). Each of
    `n_repeats` repetitions draws a random partition into K folds (sizes differing by at
    most one unit; no point is ever dropped). For each outer fold j:

    * ε_j, the inner (K−1)-fold CV error over the other K−1 folds: fold i ≠ j is tested with
      the model trained without folds {i, j}; ε_j pools those losses over the points;
    * e_out, the losses on fold j of the model trained without fold j;
    * ``a_j = (ε_j − mean(e_out))²`` and ``b_j = var(e_out) / |fold j|``, an unbiased
      estimate of the variance of the held-out mean given the training data.

    A model trained without {i, j} serves both outer folds i and j, so a repetition needs
    ``K + K(K−1)/2`` fits (55 at K = 10), not ``K + K(K−1)``. Then

    * ``mse = mean(a) − mean(b)`` over all repetitions and folds, which is unbiased for the
      MSE of (K−1)-fold CV on data sets of ``n(K−1)/K`` points about their own Err_XY
      (Bates et al., Theorem 4; the lemma behind it: E[a] − E[b] = E[(ε − Err_XY)²]);
    * ``err_ncv = mean(ε_j)``; ``err_cv``, the plain K-fold CV error averaged over the
      outer folds of every repetition (each repetition's outer folds are a complete K-fold
      CV, so this costs no fit) and over `n_bias_repeats` extra plain-CV repetitions (the
      authors' code uses the extra repetitions only; pooling targets the same quantity with
      less Monte Carlo noise);
    * ``bias = c · (err_ncv − err_cv)`` (see `bias_correction`), the centre
      ``err_ncv − bias``; the estimate is the centre moved onto the loss's range when it
      lies outside (see below);
    * ``se = sqrt((K−1)/K · mse)``, clipped to ``[lo, hi] · naive_se`` (see
      `inflation_bounds`), where ``naive_se = sd(inner errors)/√n`` over every inner error
      of every repetition (the authors' ``sd(ho_errs)/sqrt(length(Y))``);
    * the interval ``estimate ± z_{(1+level)/2} · se``, cut to the loss's range (flag
      ``"truncated_to_range"``).

    **Range of the loss.** The centre ``(1 − c)·err_ncv + c·err_cv`` extrapolates with
    c > 1, so it can leave the range of the loss, which the error itself cannot: an error
    rate below 0 when the plain CV errs less than the inner CV (no error at all, say). The
    estimate is then the nearest point of the range, flagged ``"estimate_outside_range"``
    (``estimate_unbounded`` keeps the centre), and the interval is formed about that
    estimate, so ``lower ≤ estimate ≤ upper`` always holds and an overshooting
    extrapolation neither empties nor narrows the interval. **No errors.** When a 0-1 loss
    (range [0, 1], every value 0 or 1) is 0 in every fit, the estimated variance is 0 and
    the normal interval would be [0, 0]; the interval is then Wilson's for 0 errors in N
    independent units (points, or sources with `groups`), ``[0, z²/(N + z²)]`` (about
    3.84/N at 95 %), flagged ``"no_errors"``, as :func:`bayescv.cv_intervals` gives for
    such a table (:func:`bayescv.intervals.score_bounds`): the CV dependence cannot be
    seen there. Symmetrically ``[N/(N + z²), 1]``, ``"all_errors"``, when every loss is 1.

    The inflation factor is ``se / naive_se``. The authors' code writes the same thing as
    ``sqrt(mse)/(sd/√n_sub)`` clipped, times ``sd/√n`` with ``n_sub = ⌊n(K−1)/K⌋``; when K
    divides n this is exactly ``sqrt((K−1)/K · mse)``, the paper's formula, used here for
    every n. (Their code also gives ``n mod K`` points fold 0: those are never tested and
    always trained on. Here the folds differ in size by at most one and every point is
    tested once per repetition.)

    Parameters
    ----------
    estimator : scikit-learn estimator
        Cloned for every fit. Its ``random_state`` parameters left None (its own, a pipeline
        step's) are set from `random_state`, so that one seed reproduces randomised models
        such as forests too (the seed used is the attribute ``estimator_seed``); those you
        set are kept.
    X : array-like of shape (n_samples, n_features)
        Features.
    y : array-like of shape (n_samples,)
        Targets.
    groups : array-like of shape (n_samples,), optional
        Source of each point (patient, site, school). Folds are then groups of whole
        sources, b_j is the cluster-robust variance over the sources of fold j, naive_se
        the cluster-robust SE over all sources, and the interval is for the error on *new
        sources* (see Notes). Needs at least ``2·n_splits`` sources.
    n_splits : int, default 10
        K, at least 3 (the inner CV has K−1 ≥ 2 folds); at least 2K points (or sources),
        so that every outer fold has two units for b_j.
    n_repeats : int, default 50
        Nested repetitions (the authors' default; their experiments use 200). Judge the
        number by ``inflation_running``: it should have settled.
    loss : str, Loss or callable, optional
        ``"zero_one"``, ``"squared"``, ``"absolute"``, ``"log_loss"``, ``"brier"``, or
        ``loss(y_true, y_pred) -> per-point array``. Default: zero-one for classifiers,
        squared error otherwise.
    level : float, default 0.95
        Nominal coverage (the paper's experiments use 0.90).
    bias_correction : {"code", "paper"} or None, default "code"
        err_ncv estimates the error of models trained on ``n(K−2)/K`` points, err_cv on
        ``n(K−1)/K``; the correction extrapolates to n. ``"code"`` uses
        ``c = 1 + ((K−2)/K)**1.5`` (1.716 at K = 10), from the authors' R code, with which
        every published figure was made; ``"paper"`` uses ``c = 1 + (K−2)/K`` (1.8), from
        the paper's text, exact when the learning curve is ``Err(m) = α + β/m``; None skips
        the correction (the estimate is then for ``n(K−2)/K`` points). Both constants are
        heuristics; the default is ``"code"`` because it reproduces the published coverage
        (Table 1) and, being the smaller, amplifies the noise of err_ncv − err_cv less.
    n_bias_repeats : int, optional
        Extra plain K-fold CV repetitions for err_cv; default ``⌈n_repeats/5⌉`` as in the
        authors' code. 0 uses only the outer folds of the nested repetitions.
    inflation_bounds : (float, float), "code" or None, default "code"
        Bounds (lo, hi) on the inflation factor se/naive_se. ``"code"``: (1, √K), as in the
        authors' code: the interval is never narrower than the naive one, nor wider than
        √K times it (the SE a single fold would give). None: no clipping, as in the paper's
        text; a negative mse then gives a NaN interval flagged ``"negative_variance"``
        (clipped, its interval has the lower bound's width, flagged ``"negative_mse"``).
        Default ``"code"``: mse is a difference of two noisy means and is often negative or
        too large when n_repeats is small; clipping keeps the interval sane.
    random_state : None, int or numpy.random.Generator
        Seeds every partition: repetition r uses child seed r of one stream, extra plain-CV
        repetition r child seed r of another, so a run with more repetitions extends (never
        changes) one with fewer. The resolved seed is stored in ``attrs["seed"]``.
    n_jobs : int, optional
        Repetitions run in parallel with joblib; the result is identical for any value.
    progress : bool, default False
        Show a progress bar over repetitions: the `n_repeats` nested ones and the
        `n_bias_repeats` extra plain-CV ones, both named in its label. Either way, the
        number of models to fit is logged first (logger ``bayescv.nested``, level INFO).
    batched : bool or None, default None
        Fit the repetitions' training sets together (:func:`bayescv.cv.losses_on_folds`,
        in blocks of 8 repetitions): None for plain ``LinearRegression`` and ``Ridge``
        (the same solutions as scikit-learn's to rounding), True also for binary L2
        ``LogisticRegression`` (``C=inf`` included; the exact optimum, where scikit-learn's
        solvers stop at their ``tol``), False never. ``attrs["fit_engine"]`` says which ran.

    Returns
    -------
    xarray.Dataset
        The interval Dataset of :func:`bayescv.intervals.interval_dataset` with one method
        ``"nested_cv"`` (variables ``estimate``, ``lower``, ``upper``, ``se``, ``flag``;
        target ``"err_xy"``, or ``"ose"`` with `groups`), plus:

        * dims ``(replicate, fold)``: ``a``, ``b``, ``err_inner`` (ε_j), ``err_outer``
          (mean of e_out), ``fold_size`` (points);
        * dim ``replicate``: ``err_cv_replicate`` (plain CV error of the repetition's
          outer folds), ``mse_running`` and ``inflation_running`` (mse and the unclipped
          inflation factor using repetitions 0 … r);
        * dim ``bias_replicate``: ``err_cv_bias`` (extra plain-CV errors);
        * scalars ``err_ncv``, ``err_cv``, ``bias``, ``estimate_unbounded`` (the centre
          ``err_ncv − bias``, before any move onto the loss's range), ``mse``,
          ``naive_se``, ``inflation`` (as used), ``inflation_raw`` (before clipping);
        * attrs: the settings, ``bias_constant``, ``n_fits`` (all fits made),
          ``fits_per_replicate``, ``fit_engine``, ``khat`` (the Pareto k̂ of the first
          repetition's outer losses, a complete K-fold CV; ``flag`` gains ``heavy_tail``
          above 0.5 and ``very_heavy_tail`` above 0.7, with one
          :class:`~bayescv.tails.HeavyTailWarning`), ``wall_time_s``, ``target_detail``
          and provenance.

        Write it with its own method, ``result.to_netcdf(path)``
        (:func:`bayescv.to_netcdf` is for loss tables).

    Raises
    ------
    ValueError
        For fewer than 3 folds, fewer than 2 units per fold, bad options, mismatched
        lengths, infinite features (before any fit, as :func:`bayescv.cv.cross_val_losses`),
        or a continuous `y` (:func:`sklearn.utils.multiclass.type_of_target`)
        with a classifier or a loss that compares class labels (zero-one, log, Brier).

    Notes
    -----
    **Grouped variant (sources).** Folds are random sets of whole sources, equal in number
    of sources up to one. The interval is for the error on a point from a new source of the
    model fitted on these data; the package's estimand vocabulary has no name for that
    conditional quantity, so it is recorded as ``"ose"`` (its expectation over data sets,
    Geras & Sutton's out-of-source error) and spelled out in ``attrs["target_detail"]``.
    What carries over, if sources are drawn i.i.d. and the fold's sources are independent of
    the training sources: given the training data, the held-out sources are fresh draws, so
    the lemma E[a] − E[b] = E[(ε − Err)²] holds at the source level *provided* b_j is
    unbiased for the variance of the held-out mean. The CR1 estimate used is exactly
    unbiased when the sources of a fold are equal in size (or the mean is a plain average
    of source means); with unequal sizes the held-out mean is a ratio estimator and both
    its mean and b_j carry O(1/m) biases (m sources per fold). Not proven: the bias
    constants and the (K−1)/K scaling (heuristics even for points), normality of the
    interval with few sources, and anything when sources are not exchangeable (a few
    dominant sources). Coverage with groups should be checked by simulation
    (:mod:`bayescv.compare`).

    References
    ----------
    Bates, S., Hastie, T. & Tibshirani, R. (2024). Cross-validation: what does it estimate
    and how well does it do it? *JASA* 119(546), 1434–1445. doi:10.1080/01621459.2023.2197686

    Geras, K. J. & Sutton, C. (2013). Multiple-source cross-validation. *ICML*, PMLR 28(3).

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from sklearn.linear_model import LinearRegression
    >>> X, y = make_regression(n_samples=40, n_features=2, noise=1.0, random_state=0)
    >>> res = nested_cv(LinearRegression(), X, y, n_splits=4, n_repeats=2, random_state=0)
    >>> res.attrs["n_fits"]  # 2 repetitions * (4 + 6) + 1 plain-CV repetition * 4
    24
    >>> lower, upper = res["lower"].item(), res["upper"].item()
    >>> bool(lower < res["estimate"].item() < upper), res["target"].item()
    (True, 'err_xy')
    """
    started = time.perf_counter()
    X, y, groups = indexable(X, y, groups)
    check_level(level)
    k, n_reps, n_bias = repetitions(n_splits, n_repeats, n_bias_repeats)
    constant = bias_constant(k, bias_correction)
    bounds = resolve_inflation_bounds(inflation_bounds, k)
    check_jobs_and_estimator(n_jobs, estimator)
    loss_fn = get_loss(loss, estimator).for_targets(y)  # the problem's classes (Brier)
    check_response(estimator, loss_fn)
    check_target(estimator, y, loss_fn)
    n = _num_samples(X)
    if groups is None:
        units, n_units, what = None, n, "points"
    else:
        missing = int(pd.isna(np.asarray(groups, dtype=object)).sum())
        if missing:  # np.unique would make each NaN a source of its own
            raise ValueError(f"groups has {missing} missing label(s) (NaN or None)")
        labels, units = np.unique(np.asarray(groups), return_inverse=True)
        units = units.astype(np.int64)
        n_units, what = labels.size, "sources"
    if n_units < 2 * k:
        raise ValueError(
            f"nested CV needs at least two {what} in every outer fold, so at least "
            f"2 * n_splits = {2 * k} {what}; got {n_units} for n_splits={k}: "
            + (
                f"pass n_splits={n_units // 2} or fewer"
                if n_units >= 6
                else f"n_splits is at least 3, so {what} this few need another interval "
                "(bayescv.cv_intervals of bayescv.cross_val_losses)"
            )
        )

    seed = resolve_seed(random_state)
    nested_root, bias_root = child_seeds(seed, 2)
    estimator_seed = named_seed(seed, "estimator")
    fitted, seeded = seed_unset(estimator, estimator_seed)
    _, engine = losses_on_folds(fitted, X, y, [], loss_fn, batched=batched)  # no fit
    # A job fits several repetitions together when they can be batched; the blocks do not
    # depend on n_jobs, so neither does the result.
    block = _BATCH_REPETITIONS if engine == "batched" else 1
    design = (units, n_units, k)
    seeds = [("nested", s) for s in child_seeds(nested_root, n_reps)]
    seeds += [("plain", s) for s in child_seeds(bias_root, n_bias)]
    jobs = [
        delayed(run_block)(
            fitted, X, y, design, seeds[i : i + block], loss_fn, batched, keep_first=i == 0
        )
        for i in range(0, len(seeds), block)
    ]
    message = "fitting %d models (n_repeats=%d, n_bias_repeats=%d, n_splits=%d)"
    _LOG.info(message, n_model_fits(k, n_reps, n_bias), n_reps, n_bias, k)
    results = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    done: list = []
    label = f"nested CV, {n_reps} nested + {n_bias} plain-CV reps" if n_bias else "nested CV"
    with progress_bar(total=len(seeds), desc=label, unit="rep", disable=not progress) as bar:
        for found in results:
            done += found
            bar.update(len(found))
    reps, extra = done[:n_reps], done[n_reps:]
    n_fits = sum(r.n_fits for r in reps) + n_bias * k

    stats = summarise(reps, extra, n, k, grouped=units is not None)
    se_raw2 = (k - 1) / k * stats["mse"]
    naive = stats["naive_se"]
    if bounds is None:
        variance = se_raw2
    else:
        se_used = min(max(math.sqrt(max(se_raw2, 0.0)), bounds[0] * naive), bounds[1] * naive)
        variance = se_used**2
    bias = constant * (stats["err_ncv"] - stats["err_cv"])
    centre = stats["err_ncv"] - bias
    loss_range = loss_range_for(loss_fn, y)
    edge = error_free(loss_range, stats["err_ncv"], stats["err_cv"])
    estimate, se, lower, upper, flag = nested_bounds(
        centre, variance, level=level, loss_range=loss_range, edge=edge, n_units=n_units
    )
    if bounds is not None and se_raw2 < 0:  # the width is the clip's, not an estimate's
        flag = ",".join(f for f in (flag, "negative_mse") if f)
    with np.errstate(divide="ignore", invalid="ignore"):
        inflation = float(np.float64(se) / naive)
        inflation_raw = float(np.sqrt(se_raw2) / naive) if se_raw2 >= 0 else math.nan

    grouped = units is not None
    ds = interval_dataset(
        ["nested_cv"],
        estimate=[estimate],
        lower=[lower],
        upper=[upper],
        se=[se],
        flag=[flag],
        level=level,
        target="ose" if grouped else "err_xy",
        seed=seed,
        attrs={
            "target_detail": _GROUPED_TARGET
            if grouped
            else "error of the model fitted on these data (Bates et al.'s Err_XY)",
            "estimator": repr(estimator),
            **({"estimator_seed": estimator_seed} if seeded else {}),
            "loss_name": loss_fn.name,
            "n_samples": n,
            "n_sources": n_units if grouped else 0,
            "n_splits": k,
            "n_repeats": n_reps,
            "n_bias_repeats": n_bias,
            "bias_correction": "none" if bias_correction is None else bias_correction,
            "bias_constant": constant,
            "inflation_bounds": "none" if bounds is None else list(bounds),
            "variance_scale": (k - 1) / k,
            "n_fits": int(n_fits),
            "fit_engine": engine,
            "fits_per_replicate": k + k * (k - 1) // 2,
            "wall_time_s": 0.0,  # set last
            "reference": "Bates, Hastie & Tibshirani (2024), JASA, doi:10.1080/01621459.2023.2197686",
        },
    )
    found = _variables(stats, bias, centre, inflation, inflation_raw)
    extras = {
        name: xr.Variable(dims, values, attrs={"description": doc})
        for name, (dims, values, doc) in found.items()
    }
    coords = {
        "replicate": np.arange(n_reps),
        "fold": np.arange(k),
        "bias_replicate": np.arange(n_bias),
    }
    ds = ds.assign(extras).assign_coords(coords)
    # The tail of the losses, as for every interval of the package: the first repetition's
    # outer folds are a complete K-fold CV (every point tested once).
    first = reps[0]
    table = from_arrays(
        first.outer_losses, np.repeat(np.arange(k), first.size), loss_name=loss_fn.name,
        loss_range=list(loss_range),
    )  # fmt: skip
    khat = pooled_tail_shape(table)["khat_pooled"].values
    warn_heavy_tail(khat, stacklevel=3)
    ds = add_tail_flags(ds, khat)
    ds.attrs["wall_time_s"] = time.perf_counter() - started
    return ds


def _variables(
    stats: dict[str, Any], bias: float, centre: float, inflation: float, inflation_raw: float
) -> dict[str, tuple[tuple[str, ...], Any, str]]:
    rf = ("replicate", "fold")
    return {
        "a": (rf, stats["a"], "(inner CV error - mean held-out error)^2 per outer fold"),
        "b": (rf, stats["b"], "estimated variance of the mean held-out error per outer fold"),
        "err_inner": (rf, stats["inner"], "inner (K-1)-fold CV error of each outer fold"),
        "err_outer": (rf, stats["outer"], "mean held-out error of each outer fold"),
        "fold_size": (rf, stats["size"], "points in each outer fold"),
        "err_cv_replicate": (
            ("replicate",),
            stats["plain"],
            "plain K-fold CV error of each repetition's outer folds",
        ),
        "mse_running": (
            ("replicate",),
            stats["mse_running"],
            "mean(a) - mean(b) over repetitions 0..r",
        ),
        "inflation_running": (
            ("replicate",),
            stats["inflation_running"],
            "unclipped se/naive_se from repetitions 0..r; should settle as r grows",
        ),
        "err_cv_bias": (
            ("bias_replicate",),
            stats["extra"],
            "plain K-fold CV error of each extra repetition",
        ),
        "err_ncv": ((), stats["err_ncv"], "nested CV error, mean of err_inner"),
        "err_cv": ((), stats["err_cv"], "plain CV error over all plain and outer CV runs"),
        "bias": ((), bias, "bias estimate bias_constant * (err_ncv - err_cv)"),
        "estimate_unbounded": (
            (),
            centre,
            "err_ncv - bias, before the estimate is moved onto the loss's range",
        ),
        "mse": ((), stats["mse"], "estimated MSE of CV, mean(a) - mean(b)"),
        "naive_se": ((), stats["naive_se"], "naive standard error of the inner errors"),
        "inflation": ((), inflation, "se / naive_se as used (after clipping)"),
        "inflation_raw": ((), inflation_raw, "sqrt((K-1)/K * mse) / naive_se, NaN where mse < 0"),
    }
