"""A study summary as text (:func:`summary_table`; imported from :mod:`bayescv.compare.summary`)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import xarray as xr

from bayescv.compare._results import VALID_TARGETS, expect

__all__ = ["summary_table"]


def _pct(value: float, se: float | None = None) -> str:
    if not np.isfinite(value):
        return "n/a"
    return f"{100 * value:.1f}" + (
        "" if se is None or not np.isfinite(se) else f" ± {100 * se:.1f}"
    )


def _rate_pct(value: float, se: float, n: int) -> str:
    """Render a rate with its Monte Carlo error; at 0 or 1, where sqrt(p(1−p)/n) is 0, a bound.

    The bound is the exact one-sided 95 % Clopper–Pearson limit for 0 (or n) hits in n,
    1 − 0.05^(1/n) (≈ 3/n, the rule of three), so "100.0 (≥ 98.5)" rather than "100.0 ± 0.0".
    """
    if not np.isfinite(value) or n < 1 or 0 < value < 1:
        return _pct(value, se)
    bound = 100 * 0.05 ** (1 / n)
    return f"100.0 (≥ {bound:.1f})" if value == 1 else f"0.0 (≤ {100 - bound:.1f})"


def _theta_true_se(summary: xr.Dataset) -> str:
    """Format the Monte Carlo error of the true θ, or say why there is none (< 3 replicates)."""
    se = float(summary["theta_true_se"])
    return f"{se:.2g}" if np.isfinite(se) else "n/a (fewer than 3 replicates)"


def summary_table(summary: xr.Dataset) -> str:
    """Render a summary as text: one row per method, then coverage of every target.

    Parameters
    ----------
    summary : xarray.Dataset
        From :func:`summarize`.

    Returns
    -------
    str
        Two tables: coverage, high and low miscoverage (%) of each method's declared target
        with Monte Carlo standard errors (at 0 % or 100 %, where that error is 0, the exact
        one-sided 95 % bound instead), width ratio, θ̂ relative bias and runtime; then
        coverage (%) of every method against every target.

    Examples
    --------
    >>> from bayescv.compare import BatesLogistic, run_study, summarize
    >>> study = run_study(BatesLogistic(n=40, p=3, n_splits=4), methods=["naive_points"],
    ...                   n_replicates=3, random_state=0)
    >>> text = summary_table(summarize(study))
    >>> text.splitlines()[0].split(",")[:3]
    ['bates-logistic: design iid', ' CV random', ' 3 replicates']
    """
    expect(summary, "summary")
    has_reference = summary.attrs.get("reference") in summary["method_name"].values
    targets = summary["target"].values.tolist()
    rows = []
    uncovered: dict[str, list[str]] = {}  # a method's own target not in the summary: why n/a
    for j, m in enumerate(summary["method_name"].values.tolist()):
        t = str(summary["method_target"].values[j])
        row = {"method_name": m, "target": t}
        if t in targets:
            k = targets.index(t)
            for key, var in (
                ("coverage %", "coverage"),
                ("miss hi %", "miss_high"),
                ("miss lo %", "miss_low"),
            ):
                row[key] = _rate_pct(
                    float(summary[var].values[j, k]),
                    float(summary[f"{var}_se"].values[j, k]),
                    int(summary["n_valid"].values[j, k]),
                )
        else:
            row["coverage %"] = row["miss hi %"] = row["miss lo %"] = "n/a"
            uncovered.setdefault(t, []).append(m)
        if has_reference:
            ratio = float(summary["width_ratio"].values[j])
            row["width/ref"] = f"{ratio:.2f}" if np.isfinite(ratio) else "n/a"
        else:  # the reference method was not run: absolute widths
            width = float(summary["mean_width"].values[j])
            row["mean width"] = f"{width:.3g}" if np.isfinite(width) else "n/a"
        row["θ̂ rel. bias %"] = _pct(
            float(summary["theta_rel_bias"].values[j]),
            float(summary["theta_rel_bias_se"].values[j]),
        )
        row["undefined %"] = _pct(float(summary["undefined"].values[j]))
        row["ms/rep"] = f"{1000 * float(summary['runtime_mean'].values[j]):.1f}"
        row["cost"] = str(summary["method_cost"].values[j])
        rows.append(row)
    head = pd.DataFrame(rows).set_index("method_name")
    matrix = pd.DataFrame(
        100 * summary["coverage"].values, index=summary["method_name"].values, columns=targets
    ).round(1)
    a = summary.attrs
    lines = [
        f"{a.get('scenario', '')}: design {a['design']}, CV {a['scheme']}, "
        f"{a['n_replicates']} replicates, nominal coverage {100 * a['level']:g}%, "
        f"true θ = Var(μ̂) = {float(summary['theta_true']):.3g} ± {_theta_true_se(summary)}",
        f"truths: {_truths_text(a['truths'])}; "
        + (
            f"widths relative to {a['reference']}"
            if has_reference
            else f"mean widths ({a['reference']}, the reference, was not run)"
        ),
        "",
        head.to_string(),
        *_uncovered_note(uncovered, a["design"]),
        "",
        "coverage % of every target:",
        matrix.to_string(na_rep="n/a"),
    ]
    return "\n".join(lines)


def _truths_text(truths: str) -> str:
    """Write the study's fixed truths, stored as JSON, in four significant digits.

    Examples
    --------
    >>> _truths_text('{"err": 0.3933884213286673, "expected_cv": 0.39918}')
    'err = 0.3934, expected_cv = 0.3992'
    >>> _truths_text("{}")
    'none fixed (each replicate has its own)'
    """
    values = json.loads(truths) if isinstance(truths, str) else dict(truths)
    if not values:
        return "none fixed (each replicate has its own)"
    return ", ".join(
        f"{name} = {value:.4g}" if isinstance(value, int | float) else f"{name} = {value}"
        for name, value in values.items()
    )


def _uncovered_note(uncovered: dict[str, list[str]], design: str) -> list[str]:
    """Say why a method's own coverage is n/a: its target is not among the summary's.

    Examples
    --------
    >>> _uncovered_note({"expected_cv": ["theta_A", "theta_B"]}, "sources_redrawn")
    ['n/a: expected_cv is not a target under design sources_redrawn (theta_A, theta_B); see the coverage of every target below']
    >>> _uncovered_note({}, "iid")
    []
    """
    if not uncovered:
        return []
    why = [
        (
            f"{t} is not a target under design {design}"
            if t not in VALID_TARGETS.get(design, ())
            else f"the summary has no truth for {t}"
        )
        + f" ({', '.join(names)})"
        for t, names in uncovered.items()
    ]
    return [f"n/a: {'; '.join(why)}; see the coverage of every target below"]
