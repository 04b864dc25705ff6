"""Where the bootstrap's excess variance of a CV estimate lives: the duplicated-point term.

Run from the repository root (about 4 min on 2 cores; ``--quick`` checks the script and
writes nothing)::

    python benchmarks/bootstrap_ties.py --n-jobs 2

Scenario: the calibration's (``benchmarks/calibrate_bayes.py``): ``MultiSourceLogistic``,
K = 10 sources drawn once (``source_seed`` 0), M = 50 points per source redrawn per data set,
unregularised logistic regression, 0-1 loss, leave one source out.

* **Truth**: the covariance Σ of the K block means over ``--truth`` data sets, and the mean
  test-sampling part D_k = E[W_k / (n_k − 1)] / n_k (so ω_k ≈ Σ_kk − D_k).
* **Bootstrap**: on each of ``--data-sets`` data sets, ``--n-bootstrap`` bootstrap-replicated
  CV runs (points resampled within sources): their scatter Σ*, averaged over data sets, and
  the duplicated-point term t_k = (1 − 1/n_k) c̄_k / n_k of
  :func:`bayescv.bayes._stats.tie_term` (c̄_k: the mean over the block's points of the
  variance of a point's loss across bootstrap models).

The derivation in ``tie_term`` predicts Σ*_kk ≈ (1 − 1/n_k) D_k + t_k + ω_k and Σ*_kl ≈ Σ_kl:
a resampled test point drawn twice carries its own model-driven variance twice, which a fresh
sample never does. Reported: θ = wᵀΣw (w_k = n_k/N, the variance of μ̂) for the truth, for
the raw bootstrap and for the bootstrap less Σ_k w_k² t_k; the per-block diagonals; the
off-diagonal parts; each with a Monte Carlo standard error (truth: the Wishart s.e. of a
sample covariance; bootstrap: the spread over data sets). Output
``benchmarks/results/bootstrap_ties.{md,json}``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import load_average, machine_info, write_results  # house helpers

from bayescv import bootstrap_cv_losses, cross_val_losses
from bayescv.bayes._stats import tie_term
from bayescv.compare import MultiSourceLogistic
from bayescv.moments import block_moments

K, M = 10, 50
PACKAGES = ("numpy", "scikit-learn", "bayescv")


def scenario() -> MultiSourceLogistic:
    return MultiSourceLogistic(K, M, design="sources_fixed", scheme="source", source_seed=0)


def block_stats(table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Block means, test-sampling variances W_k / ((n_k − 1) n_k) and sizes."""
    mom = block_moments(table)
    n = mom["n"].values.astype(float)
    return mom["S"].values / n, mom["W"].values / (n - 1) / n, n


def truth_draw(seed: int) -> tuple[np.ndarray, np.ndarray]:
    sc = scenario()
    d = sc.draw(np.random.default_rng(seed))
    table = cross_val_losses(sc.default_learner(), d.X, d.y, groups=d.groups, loss="zero_one")
    means, test_var, _ = block_stats(table)
    return means, test_var


def bootstrap_draw(seed: int, n_bootstrap: int) -> dict[str, np.ndarray]:
    sc = scenario()
    d = sc.draw(np.random.default_rng(seed))
    boot = bootstrap_cv_losses(
        sc.default_learner(), d.X, d.y, groups=d.groups, loss="zero_one",
        n_bootstrap=n_bootstrap, random_state=seed,
    )  # fmt: skip
    means, _, n = block_stats(boot)
    c_bar = tie_term(boot, np.arange(K))
    return {"scatter": np.cov(means.T), "tie": (1 - 1 / n[0]) * c_bar / n[0], "c_bar": c_bar}


def parts(cov: np.ndarray, w: np.ndarray) -> dict[str, float]:
    """θ = wᵀΣw split into its diagonal and off-diagonal parts."""
    diag = float((w**2 * np.diag(cov)).sum())
    theta = float(w @ cov @ w)
    return {"theta": theta, "diag": diag, "off": theta - diag}


def run(args: argparse.Namespace) -> dict[str, Any]:
    parallel = Parallel(n_jobs=args.n_jobs)
    truth = parallel(delayed(truth_draw)(10_000 + s) for s in range(args.truth))
    means = np.array([t[0] for t in truth])
    d_k = np.mean([t[1] for t in truth], axis=0)
    sigma = np.cov(means.T)
    w = np.full(K, 1.0 / K)  # equal sizes: w_k = n_k / N
    boots = parallel(delayed(bootstrap_draw)(s, args.n_bootstrap) for s in range(args.data_sets))
    scatter = np.array([b["scatter"] for b in boots])
    ties = np.array([b["tie"] for b in boots])
    per_set = {
        "raw": np.array([w @ s @ w for s in scatter]),
        "less_ties": np.array([w @ s @ w - w**2 @ t for s, t in zip(scatter, ties, strict=True)]),
    }
    # Wishart: Var(wᵀSw) = 2 (wᵀΣw)² / (R − 1) for a sample covariance on R draws.
    theta_true = float(w @ sigma @ w)
    predicted_test = (1 - 1 / M) * d_k  # the bootstrap's test-sampling part
    omega = np.diag(sigma) - d_k  # the smooth between-model part of each block
    return {
        "args": vars(args),
        "truth": {
            **parts(sigma, w),
            "theta_se": theta_true * np.sqrt(2.0 / (args.truth - 1)),
            "test_part": float((w**2 * d_k).sum()),
            "diag_k": np.diag(sigma).tolist(),
            "test_k": d_k.tolist(),
        },
        "bootstrap": {
            **parts(scatter.mean(axis=0), w),
            **{f"theta_{name}": float(v.mean()) for name, v in per_set.items()},
            **{
                f"theta_{name}_se": float(v.std(ddof=1) / np.sqrt(v.size))
                for name, v in per_set.items()
            },
            "tie_part": float((w**2 * ties.mean(axis=0)).sum()),
            "diag_k": np.diag(scatter.mean(axis=0)).tolist(),
            "tie_k": ties.mean(axis=0).tolist(),
            "c_bar_k": np.mean([b["c_bar"] for b in boots], axis=0).tolist(),
            "predicted_diag_k": (predicted_test + ties.mean(axis=0) + omega).tolist(),
        },
    }


def markdown(out: dict[str, Any]) -> str:
    t, b, a = out["truth"], out["bootstrap"], out["args"]
    e = lambda x: f"{x * 1e4:.2f}"  # noqa: E731
    rows = [
        ("true θ (variance of μ̂ over data sets)", f"{e(t['theta'])} ± {e(t['theta_se'])}"),
        ("  of which test sampling, Σ w_k² D_k", e(t["test_part"])),
        ("  of which between blocks, off the diagonal", e(t["off"])),
        ("bootstrap variance of μ̂, raw", f"{e(b['theta_raw'])} ± {e(b['theta_raw_se'])}"),
        ("  duplicated-point term Σ w_k² t_k", e(b["tie_part"])),
        ("  off the diagonal", e(b["off"])),
        ("bootstrap variance less the term", f"{e(b['theta_less_ties'])} ± "
         f"{e(b['theta_less_ties_se'])}"),
    ]  # fmt: skip
    lines = [
        "# bootstrap_ties: the bootstrap's excess variance of a CV estimate",
        "",
        f"Run on {out['date']} with `{out['command']}`: {out['total_runtime_s']:.0f} s on "
        f"{out['machine'].get('usable_cores')} usable cores (load {out['load_before']:.2f} "
        f"before, {out['load_after']:.2f} after); git {out['machine']['git_commit']}.",
        "",
        f"MultiSourceLogistic, K = {K} sources fixed, M = {M} points per source, logistic "
        f"regression, 0-1 loss, leave one source out. Truth over {a['truth']} data sets; "
        f"bootstrap: {a['n_bootstrap']} replicates on each of {a['data_sets']} data sets.",
        "",
        "| quantity (×10⁻⁴) | value |",
        "|---|---|",
        *[f"| {name} | {value} |" for name, value in rows],
        "",
        "Per block (×10⁻³): the variance of the block mean, its test-sampling part D_k, the "
        "bootstrap's, the duplicated-point term t_k and the bootstrap diagonal the derivation "
        "predicts, (1 − 1/n) D_k + t_k + (Σ_kk − D_k):",
        "",
        "| block | true Σ_kk | D_k | bootstrap Σ*_kk | t_k | predicted Σ*_kk | c̄_k |",
        "|---|---|---|---|---|---|---|",
    ]
    for k in range(K):
        lines.append(
            f"| {k} | {t['diag_k'][k] * 1e3:.3f} | {t['test_k'][k] * 1e3:.3f} | "
            f"{b['diag_k'][k] * 1e3:.3f} | {b['tie_k'][k] * 1e3:.3f} | "
            f"{b['predicted_diag_k'][k] * 1e3:.3f} | {b['c_bar_k'][k]:.4f} |"
        )
    lines += [
        "",
        "Monte Carlo standard errors: the truth's θ by the Wishart formula "
        "sqrt(2/(R − 1)) θ; the bootstrap rows by the spread over data sets. A single "
        "block's true Σ_kk has a relative s.e. of about sqrt(2/R).",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--truth", type=int, default=3000, help="data sets for the truth")
    parser.add_argument("--data-sets", type=int, default=200, help="data sets bootstrapped")
    parser.add_argument("--n-bootstrap", type=int, default=50)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="a few data sets: checks only")
    args = parser.parse_args(argv)
    if args.quick:
        args.truth, args.data_sets, args.n_bootstrap = 40, 4, 10
    started = time.perf_counter()
    out = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": "python benchmarks/bootstrap_ties.py " + " ".join(argv or sys.argv[1:]),
        "machine": machine_info(PACKAGES),
        "load_before": load_average(),
        **run(args),
    }
    if args.quick:  # checks the script; its numbers mean nothing, so nothing is written
        out.update(load_after=load_average(), total_runtime_s=time.perf_counter() - started)
        print(markdown(out))
    else:
        write_results("bootstrap_ties", out, markdown, started)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
