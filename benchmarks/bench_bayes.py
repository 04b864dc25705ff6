"""Benchmarks of the collapsed hierarchical model (bayescv.bayes).

Run by hand, from the repository root::

    python benchmarks/bench_bayes.py

Measured with ``time.perf_counter`` (medians of repeats, data sets interleaved so that drifts in
machine load hit every contender alike); every fit is K = 10 sources, NUTS with 4 chains of
1000 tuning steps and 1000 draws unless said otherwise, and its diagnostics are recorded.

1. **First fit vs later fits** (PyMC's NUTS; ``fit``'s default ``"auto"`` picks nutpie when
   it is installed). The first fit of a process builds the model and compiles its
   log-density and gradient; later fits with the same K swap the
   data. Target: a later fit at most a quarter of the first.
2. **Flat in N.** Fit time at N = 10³, 10⁵ and 10⁷ losses (building the tables is not
   timed; collapsing them to block statistics is). Target: N = 10⁷ at most 1.2 x N = 10³,
   converged at every N (r-hat <= 1.01, ESS >= 400, no divergences).
3. **Against the full-data model** at N = 10⁴: the same priors, with the source means and
   the between-block effects as latent variables and one normal likelihood term per loss
   (2 chains, for time). Target: the collapsed model at least 10 x faster.
4. **Samplers**: PyMC vs nutpie vs numpyro, first and later fits, ESS per second.
5. **Prior sensitivity** of θ and of the interval widths to the prior scale of Γ and of τ, with
   one realisation and with 20 bootstrap-like replicates (the identifiability statement of
   ``docs/bayes.md``), and the √R check: replicates of one data set treated as bootstrap
   replicates vs (wrongly) as independent realisations.
6. **Time to answer** (``_time_to_answer.py``): fresh processes, imports included, with the
   default sampler: ``bayescv bayes`` with an empty and a warm cache beside ``bayescv
   variance``, later fits in one process, ``paired_comparison``, K = 10 to 1000 sources.

Results go to ``benchmarks/results/bench_bayes.json`` and ``bench_bayes.md``. About 15
minutes on two shared cores.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import machine_info  # house helpers
from _time_to_answer import bench_time_to_answer, markdown_time_to_answer

from bayescv.bayes import Priors, fit, posterior_intervals
from bayescv.bayes.simulate import simulate_losses
from bayescv.losses import from_arrays, stack_replicates

RESULTS = Path(__file__).resolve().parent / "results"
K = 10
MU = np.linspace(0.15, 0.45, K)
# PyMC's NUTS named: the sections 1-3 and 5 measure it (fit's default "auto" picks nutpie when
# it is installed); section 4 compares the samplers.
SETTINGS = {"draws": 1000, "tune": 1000, "chains": 4, "sampler": "pymc"}


def table_of_size(n_points: int, seed: int):
    rng = np.random.default_rng(seed)
    block = np.repeat(np.arange(K), n_points // K)
    loss = MU[block] + 0.02 * rng.standard_normal(K)[block]
    loss = loss + 0.45 * rng.standard_normal(block.size)
    return from_arrays(loss, block, scheme="source")


def record(idata, seconds: float) -> dict[str, Any]:
    a = idata.sample_stats.attrs
    steps = int(np.asarray(idata.sample_stats["n_steps"].values).sum())
    return {
        "fit_s": seconds,
        "sampling_s": a["sampling_seconds"],
        "rhat_max": a["rhat_max"],
        "ess_bulk_min": a["ess_bulk_min"],
        "ess_tail_min": a["ess_tail_min"],
        "divergences": a["divergences"],
        "leapfrog_steps_after_tuning": steps,
        "converged": not a["problems"],
        "problems": a["problems"],
        "ess_bulk_per_s": a["ess_bulk_min"] / seconds,
    }


def timed_fit(table, **kw) -> tuple[Any, float]:
    start = time.perf_counter()
    idata = fit(table, **kw)
    return idata, time.perf_counter() - start


def bench_first_vs_later() -> dict[str, Any]:
    start = time.perf_counter()
    from bayescv.bayes.model import _import_pymc

    _import_pymc()
    import_s = time.perf_counter() - start
    first, first_s = timed_fit(table_of_size(1000, 0), random_state=0, **SETTINGS)
    later = [timed_fit(table_of_size(1000, s), random_state=s, **SETTINGS) for s in (1, 2, 3)]
    later_s = statistics.median(t for _, t in later)
    return {
        "import_pymc_s": import_s,
        "first": record(first, first_s),
        "compile_s": first.sample_stats.attrs["compile_seconds"],
        "later": [record(i, t) for i, t in later],
        "later_median_s": later_s,
        "ratio": later_s / first_s,
        "target": 0.25,
    }


def bench_flat_in_n() -> dict[str, Any]:
    sizes = (10**3, 10**5, 10**7)
    tables = {n: [table_of_size(n, 10 + r) for r in range(3)] for n in sizes}
    # Untimed: compile the step first, so that no N pays for it (with --only this section
    # runs first in its process; its first fit was 6.8 s against 3.9 s for the next).
    timed_fit(table_of_size(10**3, 9), random_state=0, **SETTINGS)
    runs: dict[int, list] = {n: [] for n in sizes}
    for r in range(3):
        for n in sizes:
            idata, seconds = timed_fit(tables[n][r], random_state=r, **SETTINGS)
            runs[n].append(record(idata, seconds))
    out: dict[str, Any] = {"runs": {str(n): runs[n] for n in sizes}}
    med = {n: statistics.median(x["fit_s"] for x in runs[n]) for n in sizes}
    per_step = {
        n: statistics.median(x["sampling_s"] / x["leapfrog_steps_after_tuning"] for x in runs[n])
        for n in sizes
    }
    out["median_fit_s"] = {str(n): med[n] for n in sizes}
    out["median_sampling_s_per_post_tuning_step"] = {str(n): per_step[n] for n in sizes}
    out["ratio"] = med[10**7] / med[10**3]
    out["target"] = 1.2
    out["all_converged"] = all(x["converged"] for n in sizes for x in runs[n])
    return out


def full_data_model(table, priors_data: dict[str, float]):
    """The same model with latent source means and block effects, one term per loss."""
    from bayescv.bayes.model import _import_pymc

    pm = _import_pymc()
    import pytensor.tensor as pt

    block = table["block"].values
    with pm.Model(coords={"block": np.arange(K)}) as model:
        mu0 = pm.Normal("mu0", priors_data["mu0_loc"], priors_data["mu0_scale"])
        tau = pm.HalfNormal("tau", priors_data["tau_scale"])
        mu = pm.Deterministic("mu", mu0 + tau * pm.Normal("mu_raw", 0, 1, dims="block"))
        nu = pm.InverseGamma("nu", priors_data["nu_alpha"], priors_data["nu_beta"], dims="block")
        sd = pm.HalfStudentT(
            "gamma_sd", nu=priors_data["gamma_df"], sigma=priors_data["gamma_scale"], dims="block"
        )
        rho_b = pm.Beta("rho_b", priors_data["rho_a"], priors_data["rho_a"])
        rho = priors_data["rho_lower"] + (1 - priors_data["rho_lower"]) * rho_b
        gamma = (1 - rho) * pt.diag(sd**2) + rho * pt.outer(sd, sd) + 1e-12 * pt.eye(K)
        u = pt.linalg.cholesky(gamma) @ pm.Normal("u_raw", 0, 1, dims="block")
        pm.Normal("loss", (mu + u)[block], pt.sqrt(nu)[block], observed=table["loss"].values)
    return model


def bench_full_data() -> dict[str, Any]:
    from bayescv.bayes._stats import collapse
    from bayescv.bayes.model import _import_pymc

    pm = _import_pymc()
    table = table_of_size(10**4, 20)
    settings = {"draws": 1000, "tune": 1000, "chains": 2}
    # The first collapsed fit of a process (nutpie compiles into bayescv's cache when it is
    # empty, else loads it), then a later one: the speed-up is given against each.
    collapsed, collapsed_s = timed_fit(table, random_state=0, **settings, ess_min=200)
    later, later_s = timed_fit(table, random_state=1, **settings, ess_min=200)
    stats = collapse(table)
    scaled = Priors().scaled_to(stats.scales, K)
    model = full_data_model(table, scaled)
    start = time.perf_counter()
    with model, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its own divergence/r-hat warnings: reported below
        idata = pm.sample(
            **settings,
            n_jobs=1,
            random_seed=0,
            progressbar=False,
            compile_kwargs={"mode": "NUMBA"},
        )
    full_s = time.perf_counter() - start
    import arviz as az

    summ = az.summary(idata, var_names=["mu0", "tau", "mu", "nu", "gamma_sd", "rho_b"])
    return {
        "n_points": 10**4,
        "settings": settings,
        "collapsed": record(collapsed, collapsed_s),
        "full_data_s": full_s,
        "full_data_rhat_max": float(summ["r_hat"].max()),
        "full_data_ess_bulk_min": float(summ["ess_bulk"].min()),
        "full_data_divergences": int(idata.sample_stats["diverging"].sum()),
        "full_data_sampling_time_s": float(idata.posterior.attrs.get("sampling_time", np.nan)),
        "collapsed_later": record(later, later_s),
        "speedup": full_s / collapsed_s,
        "speedup_later": full_s / later_s,
        "target": 10.0,
    }


def bench_samplers() -> dict[str, Any]:
    out: dict[str, Any] = {}
    tables = [table_of_size(10**5, 30 + r) for r in range(4)]
    for sampler in ("pymc", "nutpie", "numpyro"):
        module = {"pymc": "pymc", "nutpie": "nutpie", "numpyro": "numpyro"}[sampler]
        if importlib.util.find_spec(module) is None:
            out[sampler] = {"available": False}
            continue
        settings = {**SETTINGS, "sampler": sampler}
        first, first_s = timed_fit(tables[0], random_state=0, **settings)
        later = [timed_fit(t, random_state=i + 1, **settings) for i, t in enumerate(tables[1:])]
        recs = [record(i, t) for i, t in later]
        out[sampler] = {
            "available": True,
            "first": record(first, first_s),
            "compile_s": first.sample_stats.attrs["compile_seconds"],
            "later": recs,
            "later_median_s": statistics.median(r["fit_s"] for r in recs),
            "ess_bulk_per_s_median": statistics.median(r["ess_bulk_per_s"] for r in recs),
        }
    return out


def bench_prior_sensitivity() -> dict[str, Any]:
    """Widths and θ under several prior scales, with and without bootstrap-like replicates."""
    sizes = [100] * K
    truth = {"mu": MU, "nu": 0.2, "gamma_sd": 0.012, "rho": 0.5}
    observed = simulate_losses(sizes, **truth, random_state=40)
    reps = [simulate_losses(sizes, **truth, random_state=41 + r) for r in range(20)]
    boot = stack_replicates(reps, replicate_kind="bootstrap")
    w = np.full(K, 1 / K)
    sigma = truth["gamma_sd"] ** 2 * ((1 - truth["rho"]) * np.eye(K) + truth["rho"])
    sigma += np.eye(K) * truth["nu"] / 100
    true_theta = float(w @ sigma @ w)
    boot_var = float(np.var([t["loss"].mean() for t in reps], ddof=1))
    rows = []
    grid = [("gamma_sd", g) for g in (0.25, 0.5, 1.0, 2.0, 4.0)]
    grid += [("tau_sd", t) for t in (0.5, 1.0, 4.0)]
    for field, value in grid:
        priors = Priors(**{field: value})
        for design, extra in (
            ("one realisation", {}),
            ("20 bootstrap replicates", {"bootstrap": boot}),
        ):
            idata, _ = timed_fit(observed, priors=priors, random_state=1, **SETTINGS, **extra)
            ci = posterior_intervals(idata)
            width = ci["upper"] - ci["lower"]
            rows.append(
                {
                    "prior": f"{field}={value:g}",
                    "design": design,
                    "theta_mean": float(idata.posterior["theta"].mean()),
                    "expected_cv_width": float(width.sel(method_name="bayes_expected_cv")),
                    "ose_width": float(width.sel(method_name="bayes_ose")),
                    "new_source_width": float(width.sel(method_name="bayes_new_source")),
                    "tau_mean": float(idata.posterior["tau"].mean()),
                    "converged": not idata.sample_stats.attrs["problems"],
                }
            )
    # √R: the same 20 replicates read (wrongly) as independent realisations.
    wrong, _ = timed_fit(
        stack_replicates([observed, *reps], replicate_kind="independent"),
        random_state=1,
        **SETTINGS,
    )
    right, _ = timed_fit(observed, bootstrap=boot, random_state=1, **SETTINGS)
    sd = lambda i: float(i.posterior["expected_cv"].std())  # noqa: E731
    return {
        "truth": {
            "theta": true_theta,
            "tau": float(np.std(MU, ddof=1)),
            "bootstrap_var": boot_var,
        },
        "rows": rows,
        "sqrt_r": {
            "sd_bootstrap_fit": sd(right),
            "sd_as_independent": sd(wrong),
            "ratio": sd(right) / sd(wrong),
            "sqrt_21": float(np.sqrt(21)),
        },
    }


def machine() -> dict[str, Any]:
    """Machine and versions (``_report.machine_info``), the optional samplers' versions (None
    where not installed) and the cost of one ``time.process_time()`` call."""
    info = machine_info(("numpy", "bayescv"), cpu=True)
    for name in ("pymc", "pytensor", "arviz", "numba", "nutpie", "numpyro", "jax"):
        try:
            info[name] = importlib.import_module(name).__version__
        except ImportError:
            info[name] = None
    # PyMC's NUTS reads time.process_time() twice per iteration; on some virtualised machines
    # that call is a slow system call. Measured here, as it shows in the PyMC timings.
    start = time.perf_counter()
    for _ in range(2000):
        time.process_time()
    info["process_time_call_us"] = (time.perf_counter() - start) / 2000 * 1e6
    return info


def caches() -> dict[str, Any]:
    """Files in PyTensor's compile directory and in bayescv's cache: both empty on the first
    run on a machine, whose first fits then include compiling into them."""
    import pytensor

    from bayescv.bayes import cache_dir

    def count(path: Path) -> int:
        return sum(1 for f in path.rglob("*") if f.is_file()) if path.is_dir() else 0

    pytensor_dir = Path(pytensor.config.compiledir)
    return {
        "pytensor_compiledir": str(pytensor_dir),
        "pytensor_files": count(pytensor_dir),
        "bayescv_cache": str(cache_dir()),
        "bayescv_files": count(cache_dir()),
    }


def _cache_line(c: dict[str, Any] | None) -> list[str]:
    if c is None:
        return []
    cold = c["pytensor_files"] == 0 and c["bayescv_files"] == 0
    return [
        f"Caches at the start: {c['pytensor_files']} files in PyTensor's compile directory, "
        f"{c['bayescv_files']} in bayescv's"
        + (
            " (both empty: the first run on this machine, so the first fits of sections 1, 3 "
            "and 4 include compiling into them)."
            if cold
            else "."
        )
        + (f" ({c['note']}.)" if c.get("note") else ""),
        "",
    ]


def fmt_s(x: float) -> str:
    return f"{x:.2f} s" if x < 100 else f"{x:.0f} s"


def markdown(r: dict[str, Any]) -> str:
    m = r["machine"]
    lines = [
        "# bench_bayes",
        "",
        f"Run on {r['date']} with `python benchmarks/bench_bayes.py"
        + (f" --name {r['name']}" if r.get("name", "bench_bayes") != "bench_bayes" else "")
        + f"` ({fmt_s(r['total_s'])} of "
        "sections in all"
        + (
            f"; sections {', '.join(dict.fromkeys(s for x in r['rerun'] for s in x['sections']))}"
            f" rerun later with `--only`, the last on {r['rerun'][-1]['date'][:19]}"
            if r.get("rerun")
            else ""
        )
        + ").",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores shared with other jobs (load average "
        f"{r['load_before']:.2f} before, {r['load_after']:.2f} after: timings are noisy); "
        f"Python {m['python']}, numpy {m['numpy']}, PyMC {m['pymc']}, PyTensor {m['pytensor']}, "
        f"ArviZ {m['arviz']}, numba {m['numba']}, nutpie {m['nutpie']}, numpyro {m['numpyro']}, "
        f"JAX {m['jax']}; bayescv {m['bayescv']} (git {m['git_commit']}). "
        f"`time.process_time()` costs {m['process_time_call_us']:.0f} µs per call here; PyMC's "
        "NUTS calls it twice per iteration.",
        "",
        *_cache_line(r.get("caches_at_start")),
        "K = 10 sources; NUTS with 4 chains x (1000 tuning + 1000 draws) unless said otherwise; "
        "PyMC's chains run one after another in one process (the compiled step is reused), "
        "nutpie's in parallel on the two cores.",
        "",
    ]
    a = r["first_vs_later"]
    lines += [
        "## 1. First fit vs later fits (PyMC sampler, N = 1000)",
        "",
        f"- import of PyMC/ArviZ: {fmt_s(a['import_pymc_s'])} (not counted)",
        f"- first fit: {fmt_s(a['first']['fit_s'])} (of which compiling the NUTS step "
        f"{fmt_s(a['compile_s'])}, sampling {fmt_s(a['first']['sampling_s'])})",
        f"- later fits (new data, same compiled model): median {fmt_s(a['later_median_s'])} "
        f"({', '.join(fmt_s(x['fit_s']) for x in a['later'])})",
        f"- ratio later / first: **{a['ratio']:.2f}** (target ≤ {a['target']}: "
        f"{'met' if a['ratio'] <= a['target'] else 'NOT met'}; see section 4 for nutpie)",
        "",
    ]
    b = r["flat_in_n"]
    lines += [
        "## 2. Fit time against N (PyMC sampler)",
        "",
        "| N | median fit | sampling per post-tuning leapfrog step | r̂ max | ESS bulk min | ESS tail min | divergences |",
        "|---|---|---|---|---|---|---|",
    ]
    for n, runs in b["runs"].items():
        lines.append(
            f"| {int(n):,} | {fmt_s(b['median_fit_s'][n])} | "
            f"{b['median_sampling_s_per_post_tuning_step'][n] * 1e6:.0f} µs | "
            f"{max(x['rhat_max'] for x in runs):.3f} | {min(x['ess_bulk_min'] for x in runs):.0f} | "
            f"{min(x['ess_tail_min'] for x in runs):.0f} | {sum(x['divergences'] for x in runs)} |"
        )
    lines += [
        "",
        f"Ratio of median fit times N = 10⁷ / N = 10³: **{b['ratio']:.2f}** (target ≤ "
        f"{b['target']}: {'met' if b['ratio'] <= b['target'] else 'NOT met'}); converged at every "
        f"N in every run: {b['all_converged']}. (Per-step cost is the cleaner measure: the "
        "number of leapfrog steps varies with the data set, not with N.)",
        "",
    ]
    c = r["full_data"]
    lines += [
        "## 3. Collapsed vs full-data model (N = 10,000; 2 chains x (1000 + 1000))",
        "",
        f"- collapsed, first fit of the process: {fmt_s(c['collapsed']['fit_s'])} (r̂ max "
        f"{c['collapsed']['rhat_max']:.3f}, ESS bulk min {c['collapsed']['ess_bulk_min']:.0f}, "
        f"{c['collapsed']['divergences']} divergences)",
        *(
            [
                f"- collapsed, a later fit: {fmt_s(c['collapsed_later']['fit_s'])} (r̂ max "
                f"{c['collapsed_later']['rhat_max']:.3f}, ESS bulk min "
                f"{c['collapsed_later']['ess_bulk_min']:.0f}, "
                f"{c['collapsed_later']['divergences']} divergences)"
            ]
            if "collapsed_later" in c
            else []
        ),
        f"- full-data latent model (PyMC NUTS, numba, compile included): {fmt_s(c['full_data_s'])} "
        f"(r̂ max {c['full_data_rhat_max']:.3f}, ESS bulk min {c['full_data_ess_bulk_min']:.0f}, "
        f"{c['full_data_divergences']} divergences)",
        f"- speed-up against the first collapsed fit: **{c['speedup']:.1f}x** (target ≥ "
        f"{c['target']:g}x: {'met' if c['speedup'] >= c['target'] else 'NOT met'})",
        *(
            [
                f"- against the later one: **{c['speedup_later']:.1f}x** (target ≥ "
                f"{c['target']:g}x: {'met' if c['speedup_later'] >= c['target'] else 'NOT met'})"
            ]
            if "speedup_later" in c
            else []
        ),
        "",
    ]
    d = r["samplers"]
    lines += [
        "## 4. Samplers (N = 100,000)",
        "",
        "| sampler | first fit (compile) | later fit, median | ESS bulk min (later) | ESS bulk / s (later) | r̂ max | divergences |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in d.items():
        if not isinstance(s, dict):  # the section's own run time
            continue
        if not s.get("available"):
            lines.append(f"| {name} | not installed | | | | | |")
            continue
        first = {
            "pymc": "compiled in section 1",
            "numpyro": f"{fmt_s(s['first']['fit_s'])} (JIT compile in every fit)",
        }.get(name, f"{fmt_s(s['first']['fit_s'])} ({fmt_s(s['compile_s'])})")
        lines.append(
            f"| {name} | {first} | "
            f"{fmt_s(s['later_median_s'])} | {min(x['ess_bulk_min'] for x in s['later']):.0f} | "
            f"{s['ess_bulk_per_s_median']:.0f} | {max(x['rhat_max'] for x in s['later']):.3f} | "
            f"{sum(x['divergences'] for x in s['later'])} |"
        )
    if d.get("nutpie", {}).get("available"):
        n = d["nutpie"]
        lines += [
            "",
            f"nutpie: later / first = **{n['later_median_s'] / n['first']['fit_s']:.3f}** (target ≤ 0.25). "
            "numpyro goes through `pymc.sample`, which JIT-compiles anew for every fit.",
        ]
    e = r["prior_sensitivity"]
    lines += [
        "",
        "## 5. Prior sensitivity and the √R check (N = 1000, one simulated data set)",
        "",
        f"Truth: θ = {e['truth']['theta']:.3g}, sd of the source means {e['truth']['tau']:.3f}; "
        f"variance of μ̂ over the 20 replicates {e['truth']['bootstrap_var']:.3g}.",
        "",
        "| prior | design | E[θ] | expected_cv 95% width | ose (μ₀) 95% width | new_source 95% width | E[τ] | converged |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in e["rows"]:
        ose, new = _ose_widths(row)
        lines.append(
            f"| {row['prior']} | {row['design']} | {row['theta_mean']:.3g} | "
            f"{row['expected_cv_width']:.4f} | {ose} | {new} | {row['tau_mean']:.3f} | "
            f"{row['converged']} |"
        )
    if any("new_source_width" not in row for row in e["rows"]):
        lines += [
            "",
            "(Recorded before `ose` became μ₀: the `ose` row was then the predictive μ₀ + τz, "
            "today's `new_source`, and μ₀'s width was not recorded.)",
        ]
    q = e["sqrt_r"]
    lines += [
        "",
        f"√R: the expected_cv posterior sd is {q['sd_bootstrap_fit']:.4f} with the replicates "
        f"as bootstrap replicates and {q['sd_as_independent']:.4f} if they are (wrongly) read "
        f"as independent realisations: ratio {q['ratio']:.2f} (√21 = {q['sqrt_21']:.2f}).",
        "",
    ]
    if "time_to_answer" in r:
        lines += markdown_time_to_answer(r["time_to_answer"])
    return "\n".join(lines)


def _ose_widths(row: dict[str, Any]) -> tuple[str, str]:
    """Widths of ose (μ₀) and new_source; results recorded before the split had the predictive
    μ₀ + τz under the name ``ose_width``."""
    if "new_source_width" not in row:
        return "n/a", f"{row['ose_width']:.3f}"
    return f"{row['ose_width']:.3f}", f"{row['new_source_width']:.3f}"


def splice_sections(text: str, r: dict[str, Any], names: list[str]) -> str:
    """Replace (or append) the rerun sections' text in an existing report."""
    if "time_to_answer" in names:
        head = text.split("\n## 6. ")[0].rstrip("\n")
        note = (
            f"Section 6 rerun on {r['rerun'][-1]['date'][:19]} (load average "
            f"{r['load_before']:.2f} before, {r['load_after']:.2f} after; git "
            f"{r['machine']['git_commit']})."
        )
        lines = markdown_time_to_answer(r["time_to_answer"])
        text = "\n".join([head, "", *lines[:2], note, "", *lines[2:]])
    return text


SECTIONS = {
    "first_vs_later": bench_first_vs_later,
    "flat_in_n": bench_flat_in_n,
    "full_data": bench_full_data,
    "samplers": bench_samplers,
    "prior_sensitivity": bench_prior_sensitivity,
    "time_to_answer": bench_time_to_answer,
}


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        nargs="+",
        choices=list(SECTIONS),
        help="rerun these sections and merge them into the existing results",
    )
    parser.add_argument(
        "--name",
        default="bench_bayes",
        help="stem of the results files in benchmarks/results (default: bench_bayes)",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    path = RESULTS / f"{args.name}.json"
    results: dict[str, Any] = {}
    if args.only and path.exists():
        results = json.loads(path.read_text())
        results.setdefault("rerun", []).append(
            {"sections": args.only, "date": dt.datetime.now(dt.UTC).isoformat()}
        )
    else:
        results["date"] = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
        results["caches_at_start"] = caches()
        results["name"] = args.name
    results["machine"] = machine()
    results["load_before"] = os.getloadavg()[0]
    for name in args.only or list(SECTIONS):
        print(f"{name} ...", flush=True)
        t = time.perf_counter()
        results[name] = SECTIONS[name]()
        results[name]["section_s"] = time.perf_counter() - t
        print(f"  done in {time.perf_counter() - t:.0f} s", flush=True)
        RESULTS.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=2, default=float) + "\n")
    results["load_after"] = os.getloadavg()[0]
    results["total_s"] = sum(results[n].get("section_s", 0.0) for n in SECTIONS if n in results)
    path.write_text(json.dumps(results, indent=2, default=float) + "\n")
    md_path = RESULTS / f"{args.name}.md"
    if all(name in results for name in SECTIONS):
        md_path.write_text(markdown(results))
    else:
        # Sections measured before their JSON was kept: keep their text, (re)write the rest.
        md_path.write_text(splice_sections(md_path.read_text(), results, args.only or []))
    print(f"wrote {md_path} in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
