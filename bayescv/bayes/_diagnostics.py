"""Convergence diagnostics of a fit, and what to try when they fail."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayescv._extras import import_quietly, require_extra

__all__ = [
    "BOOTSTRAP_ADVICE",
    "SETTINGS_ADVICE",
    "SamplingWarning",
    "convergence_advice",
    "diagnose",
    "ess_problem",
]

#: Variables whose r̂ and ESS are checked: the sampled parameters and the targets, and under
#: a lognormal population of sources its second fit's ``log_mu0`` and ``log_tau``. The per-block means ``mu`` are
#: left out: they are exact conditional draws given (ν, s, ρ), made with numpy, so their
#: mixing is that of the checked parameters, and ArviZ's per-element r̂ and ESS would cost
#: a third more at large K; ``expected_cv``, their weighted mean, is checked.
_CHECKED = (
    "mu0", "alpha", "tau", "nu", "gamma_sd", "rho", "theta", "expected_cv", "ose",
    "new_source", "log_mu0", "log_tau",
)  # fmt: skip


class SamplingWarning(UserWarning):
    """The sampler's diagnostics failed: r̂ too high, ESS too low or divergent transitions.

    Examples
    --------
    :func:`~bayescv.bayes.fit` warns when a check fails; here an ESS threshold that 4000
    draws cannot reach:

    >>> import warnings
    >>> import numpy as np
    >>> from bayescv.bayes import fit
    >>> from bayescv.losses import from_arrays
    >>> rng = np.random.default_rng(0)
    >>> block = np.repeat(np.arange(5), 40)
    >>> table = from_arrays(rng.normal(1.0, 0.3, 200) + 0.1 * block, block, scheme="source")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     idata = fit(table, random_state=1, ess_min=1e6)
    >>> [warning.category.__name__ for warning in caught]
    ['SamplingWarning']
    >>> "did not converge: ESS" in str(caught[0].message)
    True
    """


def diagnose(idata, *, rhat_max: float = 1.01, ess_min: float = 400.0) -> dict[str, Any]:
    """Convergence diagnostics of a fit: worst r̂, smallest ESS, divergences.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result of :func:`fit`.
    rhat_max, ess_min : float
        Thresholds.

    Returns
    -------
    dict
        ``rhat_max``, ``ess_bulk_min``, ``ess_tail_min`` (over the parameters and targets),
        ``divergences`` (count), ``worst`` (variable with the largest r̂) and ``problems``
        (a string, empty when every check passes).

    Examples
    --------
    >>> import numpy as np
    >>> from bayescv.bayes import fit
    >>> from bayescv.losses import from_arrays
    >>> rng = np.random.default_rng(0)
    >>> block = np.repeat(np.arange(5), 40)
    >>> table = from_arrays(rng.normal(1.0, 0.3, 200) + 0.1 * block, block, scheme="source")
    >>> idata = fit(table, random_state=1)
    >>> report = diagnose(idata)
    >>> report["problems"], report["divergences"], report["rhat_max"] <= 1.01
    ('', 0, True)

    Stricter thresholds name what falls short:

    >>> diagnose(idata, ess_min=1e6)["problems"].startswith("ESS bulk")
    True
    """
    require_extra(["arviz"], "bayes", what="bayescv.bayes.diagnose")
    az = import_quietly("arviz")
    names = [v for v in _CHECKED if v in idata.posterior.data_vars]
    post = idata.posterior[names]
    rhat = az.rhat(post)
    bulk = az.ess(post, method="bulk")
    tail = az.ess(post, method="tail")
    flat = lambda ds: {n: float(np.nanmax(ds[n].values)) for n in ds.data_vars}  # noqa: E731
    low = lambda ds: {n: float(np.nanmin(ds[n].values)) for n in ds.data_vars}  # noqa: E731
    rhats, bulks, tails = flat(rhat), low(bulk), low(tail)
    worst = max(rhats, key=rhats.get)
    lowest_bulk, lowest_tail = min(bulks, key=bulks.get), min(tails, key=tails.get)
    div = int(np.asarray(idata.sample_stats["diverging"].values).sum())
    out = {
        "rhat_max": rhats[worst],
        "ess_bulk_min": min(bulks.values()),
        "ess_tail_min": min(tails.values()),
        "divergences": div,
        "worst": worst,
        "rhat_threshold": rhat_max,
        "ess_threshold": ess_min,
    }
    problems = []
    if not out["rhat_max"] <= rhat_max:
        problems.append(
            f"r̂ {out['rhat_max']:.3f} > {rhat_max} ({_element(rhat, worst, np.nanargmax)})"
        )
    ess = ess_problem(
        out["ess_bulk_min"], out["ess_tail_min"], ess_min,
        names=(_element(bulk, lowest_bulk, np.nanargmin), _element(tail, lowest_tail, np.nanargmin)),
    )  # fmt: skip
    if ess:
        problems.append(ess)
    if div:
        problems.append(f"{div} divergent transitions")
    out["problems"] = "; ".join(problems)
    return out


def _element(ds, name: str, pick) -> str:
    """Name the variable and, for a per-block one, the block where `pick` finds the value.

    With many sources one block usually holds the problem (a school whose mean loss stands
    out, explained either by the sources' spread or by its own training-set variance).
    """
    values = ds[name]
    if "block" not in values.dims:
        return name
    label = values["block"].values[int(pick(values.transpose("block", ...).values))]
    return f"{name} of block {label}"


def ess_problem(
    bulk: float, tail: float, ess_min: float, *, names: tuple[str, str] = ("", "")
) -> str:
    """Say which effective sample sizes are below `ess_min`, and of which variable.

    Parameters
    ----------
    bulk, tail : float
        The smallest bulk and tail ESS over the checked variables.
    ess_min : float
        The threshold.
    names : (str, str), optional
        The variables with the smallest bulk and tail ESS.

    Returns
    -------
    str
        ``""`` when both reach `ess_min`, else e.g. ``"ESS bulk 113 (gamma_sd) < 400"``:
        only the sizes that fall short (a tail ESS of 595 listed beside it read as a failure).
    """
    short = [
        f"{kind} {value:.0f}" + (f" ({name})" if name else "")
        for kind, value, name in (("bulk", bulk, names[0]), ("tail", tail, names[1]))
        if not value >= ess_min
    ]
    return f"ESS {', '.join(short)} < {ess_min:g}" if short else ""


#: The ways out a SamplingWarning names, in Python; the command line names its options.
SETTINGS_ADVICE = "more draws or tune, or a higher target_accept"
BOOTSTRAP_ADVICE = "fit(..., bootstrap=bayescv.bootstrap_cv_losses(...))"


def convergence_advice(run: dict) -> str:
    """Say what to try when a fit did not converge (the SamplingWarning's advice)."""
    advice = SETTINGS_ADVICE
    if run.get("replicate_kind") == "single":
        # One table identifies only the sum of the between-block variances (τ², Γ's diagonal
        # and its common share): the split follows the prior along a ridge that NUTS crosses
        # slowly. Bootstrap replicates inform Σ, and with it the split.
        advice += (
            "; with one CV table the fold effects rest on their prior, where the sampler mixes "
            f"slowly: bootstrap replicates inform them ({BOOTSTRAP_ADVICE})"
        )
    return advice
