"""Summaries of a study: coverage with Monte Carlo errors, widths, bias of θ̂, cost.

Truths come in two kinds:

* per replicate, from the study (``err_xy``, ``kfold_test_error``, ``ose_xy``, ``ose_cv``);
* Monte Carlo, one number over the study's replicates (:func:`monte_carlo_truths`):
  ``err`` = mean of ``err_xy`` (Err of Bates et al. 2024), ``ose`` = mean of ``ose_cv`` (the
  population new-source error of the models CV trains, each on the other sources; Geras &
  Sutton 2013, eq. 3), ``expected_cv`` = mean of the CV estimate μ̂,
  and the true θ = Var(μ̂) (sample variance over replicates; its σ/ω/γ decomposition is
  :func:`decompose`).

Which targets mean something depends on the design (:data:`VALID_TARGETS`): with the sources
fixed, an interval for a new-source quantity would be compared with one fixed, arbitrary
gap, so ``ose``, ``ose_xy`` and ``ose_cv`` are refused; with the sources redrawn, ``expected_cv`` (which
holds the sources fixed) is refused. A study that mixes designs or CV schemes (for example
two studies concatenated) is refused too, as is one whose replicate labels repeat (two
studies stacked without renumbering, or one study stacked twice), whose replicate seeds
repeat (two studies of one ``random_state`` stacked, then renumbered), or whose replicates
differ in their number of CV blocks (:mod:`bayescv.compare._stacked`).

Coverage is over the replicates where the interval is defined (finite bounds); the share of
undefined intervals (negative θ̂, unequal block sizes, errors) is reported separately as
``undefined``. Monte Carlo standard errors are sqrt(p(1 − p)/n).
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr

from bayescv.compare._results import VALID_TARGETS, as_names
from bayescv.compare._stacked import check_stacked
from bayescv.compare._table import summary_table

__all__ = [
    "MONTE_CARLO_TARGETS",
    "VALID_TARGETS",
    "check_design",
    "decompose",
    "monte_carlo_truths",
    "summarize",
    "summary_table",
]

#: Monte Carlo targets and the per-replicate quantity each is the mean of. ``ose`` is the mean
#: of ``ose_cv`` (models trained as CV trains them: the estimand of the Bayesian model's
#: ``ose``), not of ``ose_xy`` (the model trained on all sources).
MONTE_CARLO_TARGETS = {"err": "err_xy", "ose": "ose_cv", "expected_cv": "mu_hat"}


def check_design(study: xr.Dataset) -> tuple[str, str]:
    """Return the study's (design, scheme); refuse a study that mixes them.

    Parameters
    ----------
    study : xarray.Dataset
        A study from :func:`bayescv.compare.run_study`.

    Returns
    -------
    design, scheme : str

    Raises
    ------
    ValueError
        If the replicates differ in design or CV scheme, or the design is unknown.

    Examples
    --------
    >>> from bayescv.compare import BatesLogistic, run_study
    >>> study = run_study(BatesLogistic(n=40, p=3, n_splits=4), methods=["naive_points"],
    ...                   n_replicates=3, random_state=0)
    >>> check_design(study)
    ('iid', 'random')
    """
    out = []
    for name in ("design", "scheme"):
        if name not in study.coords:
            raise ValueError(f"not a study: no {name!r} coordinate")
        values = np.unique(study[name].values)
        if values.size != 1:
            raise ValueError(
                f"the study mixes {name}s {values.tolist()}: coverage of expected_cv is only "
                "meaningful with the sources fixed and of ose only with them redrawn, and the true "
                "θ differs between CV schemes; summarise each part on its own"
            )
        out.append(str(values[0]))
    if out[0] not in VALID_TARGETS:  # a user's scenario with a misspelt design
        raise ValueError(
            f"the study's design {out[0]!r} is none of {list(VALID_TARGETS)}: set the "
            "scenario's design to one of them and run the study again"
        )
    return out[0], out[1]


def _truth_column(study: xr.Dataset, name: str) -> np.ndarray | None:
    if "target" in study.dims and name in study["target"].values:
        return study["truth"].sel(target=name).values
    return None


def monte_carlo_truths(study: xr.Dataset) -> xr.Dataset:
    """Monte Carlo truths over the study's replicates, with standard errors.

    Parameters
    ----------
    study : xarray.Dataset
        A study.

    Returns
    -------
    xarray.Dataset
        ``truth`` and ``truth_se`` along ``target`` (``err``, ``ose``, ``expected_cv``, as
        the design and the stored truths allow), and scalars ``theta`` (Var(μ̂), ddof 1) and
        ``theta_se`` (sd of (μ̂ − mean)² / sqrt(R)).

    Examples
    --------
    >>> from bayescv.compare import BatesLogistic, run_study
    >>> st = run_study(BatesLogistic(n=40, p=3, n_splits=4), methods=["naive_points"],
    ...                n_replicates=4, random_state=0)
    >>> mc = monte_carlo_truths(st)
    >>> mc["target"].values.tolist()
    ['err', 'expected_cv']
    >>> bool(np.isclose(mc["theta"], st["mu_hat"].var(ddof=1)))
    True
    """
    design, _ = check_design(study)
    names, values, errors = [], [], []
    for target, source in MONTE_CARLO_TARGETS.items():
        if target not in VALID_TARGETS[design]:
            continue
        column = study["mu_hat"].values if source == "mu_hat" else _truth_column(study, source)
        if column is None:
            continue
        names.append(target)
        values.append(float(np.mean(column)))
        errors.append(float(np.std(column, ddof=1) / np.sqrt(column.size)))
    mu = study["mu_hat"].values
    r = mu.size
    squares = (mu - mu.mean()) ** 2 * r / (r - 1)
    return xr.Dataset(
        {
            "truth": ("target", np.array(values)),
            "truth_se": ("target", np.array(errors)),
            "theta": float(squares.mean()),
            "theta_se": float(np.std(squares, ddof=1) / np.sqrt(r)),
        },
        coords={"target": np.array(names, dtype=str)},
        attrs={"design": design, "n_replicates": r},
    )


def _rate(hits: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = valid.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(n > 0, (hits & valid).sum(axis=0) / n, np.nan)
        se = np.sqrt(p * (1 - p) / n)
    return p, se, n


def summarize(
    study: xr.Dataset,
    *,
    targets: Sequence[str] | None = None,
    truths: Mapping[str, float] | None = None,
    reference: str = "naive_points",
) -> xr.Dataset:
    """Coverage per (method_name, target) with Monte Carlo errors, and per-method summaries.

    Parameters
    ----------
    study : xarray.Dataset
        From :func:`bayescv.compare.run_study`.
    targets : sequence of str, optional
        Targets to cover; default every one the study and its design allow. Asking for one
        the design does not allow raises.
    truths : mapping of str to float, optional
        Known values of Monte Carlo targets (say, Err from a larger run), used in place of
        the study's estimates, or where it has none (a study run with ``truths=[]``); only
        targets of the design with one value for the whole study (not the per-replicate
        ones such as ``err_xy``), else a ValueError. A study needs at least 2 replicates.
    reference : str, default "naive_points"
        Method the widths are compared with (the naive CV interval of Bates et al. 2024).

    Returns
    -------
    xarray.Dataset
        Along (``method_name``, ``target``): ``coverage``, ``miss_high`` (truth below the
        interval), ``miss_low`` (above), each with ``*_se``, and ``n_valid``. Along
        ``method_name``: ``undefined`` (share of undefined intervals), ``mean_width``,
        ``width_ratio`` (mean over replicates of width / reference width),
        ``estimate_bias`` (mean of estimate − declared target, where computable),
        ``theta_mean``, ``theta_bias`` (against the true θ = Var(μ̂)), ``theta_bias_se``,
        ``theta_rel_bias``, ``theta_rel_bias_se``, ``theta_rmse`` (each over the replicates
        where θ̂ is finite: ``theta_n_valid``), ``runtime_mean`` (s),
        ``n_errors``; coords ``method_target``, ``method_cost``. Scalars ``theta_true``,
        ``theta_true_se`` (NaN below 3 replicates). Attrs: design, scheme, level, scenario, the
        truths used (JSON).

    Examples
    --------
    >>> from bayescv.compare import BatesLogistic, run_study
    >>> st = run_study(BatesLogistic(n=40, p=3, n_splits=4),
    ...                methods=["naive_points", "theta_3"], n_replicates=5, random_state=0)
    >>> s = summarize(st)
    >>> s["coverage"].dims, s["target"].values.tolist()
    (('method_name', 'target'), ['err_xy', 'kfold_test_error', 'err', 'expected_cv'])
    """
    design, scheme = check_design(study)
    check_stacked(study)
    if study.sizes.get("replicate", 0) < 2:
        raise ValueError(
            f"the study has {study.sizes.get('replicate', 0)} replicate(s): coverage and its "
            "Monte Carlo error need at least 2"
        )
    allowed = VALID_TARGETS[design]
    mc = monte_carlo_truths(study)
    _check_truths(study, truths or {}, design, allowed)
    # A known value counts even when the study cannot estimate it (run with truths=[]).
    available = [
        t
        for t in allowed
        if _truth_column(study, t) is not None or t in mc["target"].values or t in (truths or {})
    ]
    if targets is None:
        chosen = available
    else:
        chosen = as_names(targets, "targets")
        refused = [t for t in chosen if t not in allowed]
        if refused:
            raise ValueError(
                f"target(s) {refused} are not meaningful under design {design!r} "
                f"(allowed: {list(allowed)})"
            )
        missing = [t for t in chosen if t not in available]
        if missing:
            raise ValueError(f"the study has no truth for {missing}; it has {available}")
    r = study.sizes["replicate"]
    truth_values: dict[str, float] = {
        t: float(mc["truth"].sel(target=t)) for t in mc["target"].values
    }
    truth_values.update({k: float(v) for k, v in (truths or {}).items()})
    columns = []
    for t in chosen:
        column = _truth_column(study, t)
        columns.append(np.full(r, truth_values[t]) if column is None else column)
    T = np.stack(columns, axis=1)[:, None, :] if chosen else np.empty((r, 1, 0))
    L = study["lower"].values[:, :, None]
    U = study["upper"].values[:, :, None]
    defined = np.isfinite(L) & np.isfinite(U)
    valid = defined & np.isfinite(T)
    coverage, coverage_se, n_valid = _rate((L <= T) & (T <= U), valid)
    high, high_se, _ = _rate(T < L, valid)
    low, low_se, _ = _rate(T > U, valid)

    methods = study["method_name"].values.tolist()
    width = (study["upper"] - study["lower"]).values
    ok = np.isfinite(width)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_width = np.where(ok.any(0), np.nansum(np.where(ok, width, 0), 0) / ok.sum(0), np.nan)
        if reference in methods:
            ratio = width / width[:, [methods.index(reference)]]
            finite = np.isfinite(ratio)
            width_ratio = np.where(
                finite.any(0), np.nansum(np.where(finite, ratio, 0), 0) / finite.sum(0), np.nan
            )
        else:
            width_ratio = np.full(len(methods), np.nan)
    theta = _theta_stats(study)
    declared = study["method_target"].values.tolist()
    est = study["estimate"].values
    estimate_bias = np.full(len(methods), np.nan)
    for j, t in enumerate(declared):
        if t in chosen:
            # Over the replicates with a finite difference; NaN (not np.nanmean's "Mean of
            # empty slice" warning) for a method that failed on every replicate.
            diff = est[:, j] - T[:, 0, chosen.index(t)]
            finite = np.isfinite(diff)
            if finite.any():
                estimate_bias[j] = diff[finite].mean()
    flags = study["flag"].values.astype(str)
    mt = ("method_name", "target")
    out = xr.Dataset(
        {
            "coverage": (mt, coverage), "coverage_se": (mt, coverage_se),
            "miss_high": (mt, high), "miss_high_se": (mt, high_se),
            "miss_low": (mt, low), "miss_low_se": (mt, low_se),
            "n_valid": (mt, n_valid.astype(np.int64)),
            "undefined": ("method_name", 1 - defined[:, :, 0].mean(axis=0)),
            "mean_width": ("method_name", mean_width),
            "width_ratio": ("method_name", width_ratio),
            "estimate_bias": ("method_name", estimate_bias),
            **{k: ("method_name", v) for k, v in theta.items() if k not in ("theta_true", "theta_true_se")},
            "theta_true": theta["theta_true"], "theta_true_se": theta["theta_true_se"],
            "runtime_mean": ("method_name", study["runtime"].mean("replicate").values),
            "n_errors": ("method_name", np.char.startswith(flags, "error").sum(axis=0)),
        },
        coords={
            "method_name": methods, "target": np.array(chosen, dtype=str),
            "method_target": ("method_name", study["method_target"].values),
            "method_cost": ("method_name", study["method_cost"].values),
        },
    )  # fmt: skip
    out.attrs = {
        "design": design,
        "scheme": scheme,
        "level": float(study.attrs.get("level", np.nan)),
        "scenario": str(study.attrs.get("scenario", "")),
        "n_replicates": r,
        "reference": reference,
        "truths": json.dumps({k: v for k, v in truth_values.items() if k in chosen}),
    }
    return out


def _check_truths(
    study: xr.Dataset, truths: Mapping[str, float], design: str, allowed: Sequence[str]
) -> None:
    """Refuse a known truth for a target the design lacks, one recorded per replicate, or NaN."""
    for name, value in truths.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or not np.isfinite(value)
        ):
            raise ValueError(
                f"truths: {name!r} must be a finite number, got {value!r}: every interval "
                "would be compared with it (NaN gave a coverage of n/a)"
            )
        if name not in allowed:
            raise ValueError(
                f"truths: {name!r} is not a target of a {design!r} study (targets: "
                f"{list(allowed)})"
            )
        if _truth_column(study, name) is not None:
            raise ValueError(
                f"truths: the study records {name!r} per replicate (each data set has its "
                "own); only targets with one value for the whole study can be replaced"
            )


def _theta_stats(study: xr.Dataset) -> dict[str, np.ndarray | float]:
    """Bias of θ̂ against Var(μ̂), with influence-function standard errors.

    Per method over the replicates where θ̂ is finite (``theta_n_valid``): one failed
    replicate must not turn the whole row into NaN. The true θ is over every replicate.
    """
    mu = study["mu_hat"].values
    r = mu.size
    d = (mu - mu.mean()) ** 2 * r / (r - 1)  # mean(d) = Var(μ̂), ddof 1
    v = d.mean()
    th = study["theta_hat"].values
    ok = np.isfinite(th)
    n = ok.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(ok, th, 0).sum(axis=0) / n
        # Var(μ̂) over the same replicates as θ̂'s mean, so a failure does not bias the ratio.
        v_ok = np.where(ok, d[:, None], 0).sum(axis=0) / n
        ratio = mean / v_ok
        z = np.where(ok, th - d[:, None], np.nan)
        rel = np.where(ok, (th - ratio * d[:, None]) / v_ok, np.nan)
        sqrt_n = np.sqrt(n)
        return {
            "theta_mean": mean,
            "theta_bias": mean - v_ok,
            "theta_bias_se": _nanstd(z) / sqrt_n,
            "theta_rel_bias": ratio - 1,
            "theta_rel_bias_se": _nanstd(rel) / sqrt_n,
            "theta_rmse": np.sqrt(np.where(ok, (th - v) ** 2, 0).sum(axis=0) / n),
            "theta_n_valid": n.astype(np.int64),
            "theta_true": float(v),
            # from 2 replicates both d are equal: their sd says nothing (it printed ± 3.6e-10)
            "theta_true_se": float(d.std(ddof=1) / np.sqrt(r)) if r >= 3 else float("nan"),
        }


def _nanstd(values: np.ndarray) -> np.ndarray:
    """Column standard deviations (ddof 1) over finite entries; NaN below two."""
    ok = np.isfinite(values)
    n = ok.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(ok, values, 0).sum(axis=0) / n
        return np.sqrt(np.where(ok, (values - mean) ** 2, 0).sum(axis=0) / (n - 1))


def decompose(study: xr.Dataset) -> xr.Dataset:
    """Monte Carlo σ/ω/γ decomposition of the true θ = Var(μ̂) (Geras & Sutton 2013, eq. 2 and 7).

    Per block position k (fold, or held-out source with the sources fixed), with block
    sums S_k and centred sums of squares W_k over replicates: σ_k² − ω_k = E[W_k]/(n_k − 1),
    Var(S_k) = n_k(σ_k² − ω_k) + n_k² ω_k, Cov(S_k, S_l) = n_k n_l γ_kl; each estimated
    without bias (sample covariances, ddof 1). The three terms

        (1/N²) Σ n_k σ_k²,  (1/N²) Σ n_k(n_k − 1) ω_k,  (1/N²) Σ_{k≠l} n_k n_l γ_kl

    add up exactly to the sample variance of μ̂.

    Parameters
    ----------
    study : xarray.Dataset
        A study whose blocks have the same sizes in every replicate.

    Returns
    -------
    xarray.Dataset
        ``mu``, ``sigma2``, ``omega`` along ``block``; ``gamma`` along (``block``,
        ``block_other``, NaN diagonal); scalars ``sigma2_term``, ``omega_term``,
        ``gamma_term``, ``theta`` (their sum), and the block averages ``sigma2_mean``,
        ``omega_mean``, ``gamma_mean``.

    Examples
    --------
    >>> from bayescv.compare import MultiSourceLinear, run_study
    >>> st = run_study(MultiSourceLinear(3, 6), methods=["theta_A"], n_replicates=6,
    ...                truths=[], random_state=0)
    >>> dec = decompose(st)
    >>> total = dec["sigma2_term"] + dec["omega_term"] + dec["gamma_term"]
    >>> bool(np.isclose(total, st["mu_hat"].var(ddof=1)))
    True
    """
    check_design(study)
    n_all = study["block_n"].values
    if not np.all(n_all == n_all[0]):
        raise ValueError("the block sizes differ between replicates; no per-block decomposition")
    if n_all.shape[0] < 3:
        raise ValueError("the decomposition needs at least 3 replicates")
    n = n_all[0]
    S, W = study["block_S"].values, study["block_W"].values
    N = n.sum()
    C = np.atleast_2d(np.cov(S, rowvar=False, ddof=1))
    diff = W.mean(axis=0) / (n - 1)  # σ² − ω
    omega = (np.diag(C) - n * diff) / n**2
    sigma2 = diff + omega
    gamma = C / np.outer(n, n)
    off = ~np.eye(n.size, dtype=bool)
    gamma_nan = np.where(off, gamma, np.nan)
    labels = study["block_label"].values[0]
    same = np.all(study["block_label"].values == labels)
    return xr.Dataset(
        {
            "mu": ("block", S.mean(axis=0) / n),
            "sigma2": ("block", sigma2),
            "omega": ("block", omega),
            "gamma": (("block", "block_other"), gamma_nan),
            "sigma2_term": float(n @ sigma2 / N**2),
            "omega_term": float((n * (n - 1)) @ omega / N**2),
            "gamma_term": float(C[off].sum() / N**2),
            "theta": float(C.sum() / N**2),
            "sigma2_mean": float(sigma2.mean()),
            "omega_mean": float(omega.mean()),
            "gamma_mean": float(gamma[off].mean()),
        },
        coords={
            "block": np.arange(n.size),
            "block_other": np.arange(n.size),
            "block_label": ("block", labels if same else np.full(n.size, "varies")),
        },
        attrs={"scheme": str(study["scheme"].values[0]), "K": int(n.size), "N": int(N)},
    )
