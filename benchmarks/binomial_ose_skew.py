"""How far the posterior mean of the binomial model's ``ose`` sits from its median.

The logit-normal population's targets are nonlinear in τ (``ose`` = E expit(α + τ z)), so
their posteriors are right-skewed at low error rates, and the posterior mean sits above the
median, the centre of the equal-tailed interval. This script measures that gap, in posterior
sd, on data sets of the scenario of the coverage study of ``ose``
(:class:`bayescv.compare.MultiSourceErrorRate`, Bayes error 0.04, sources redrawn, K = 10,
M points per source, ``heterogeneity`` × c), each fitted as that study fits it: the default
Bayesian model (binomial likelihood) of the leave-one-source-out table, with B = 50
bootstrap replicates of it.

Run by hand::

    python benchmarks/binomial_ose_skew.py --data-sets 30 --m 50 --heterogeneity 0.2

Results: ``benchmarks/results/binomial_ose_skew.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.linear_model import LogisticRegression

import bayescv
from bayescv.bayes import fit
from bayescv.compare import MultiSourceErrorRate

RESULTS = Path(__file__).resolve().parent / "results"
K = 10
N_BOOTSTRAP = 50


def one(heterogeneity: float, m: int, seed: int) -> dict:
    """Fit one data set; return the gaps of ``ose``'s posterior mean and interval centre."""
    warnings.simplefilter("ignore")  # in the worker too: sampler chatter
    sc = MultiSourceErrorRate(
        0.04, K, m, design="sources_redrawn", source_seed=0, heterogeneity=heterogeneity
    )
    X, y, groups = sc.sample(np.random.default_rng(seed))
    learner = LogisticRegression(C=1.0)
    kwargs = {"groups": groups, "loss": "zero_one", "random_state": seed}
    losses = bayescv.cross_val_losses(learner, X, y, **kwargs)
    boot = bayescv.bootstrap_cv_losses(learner, X, y, n_bootstrap=N_BOOTSTRAP, **kwargs)
    idata = fit(losses, bootstrap=boot, random_state=seed, progress=False)
    draws = idata.posterior["ose"].values.ravel()
    median, sd = np.median(draws), draws.std(ddof=1)
    low, high = np.quantile(draws, [0.025, 0.975])
    return {
        "mean_minus_median_sd": float((draws.mean() - median) / sd),
        "eti_midpoint_minus_median_sd": float(((low + high) / 2 - median) / sd),
        "cv_error": float(losses["loss"].mean()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-sets", type=int, default=30)
    parser.add_argument("--m", type=int, default=50)
    parser.add_argument("--heterogeneity", type=float, default=0.2)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = Parallel(n_jobs=args.n_jobs)(
        delayed(one)(args.heterogeneity, args.m, 100 + i) for i in range(args.data_sets)
    )
    summary = {
        key: [float(np.mean(v)), float(np.std(v, ddof=1) / np.sqrt(len(v)))]
        for key in rows[0]
        for v in [[r[key] for r in rows]]
    }
    result = {**vars(args), "summary": summary, "seconds": time.perf_counter() - start}
    command = (
        f"python benchmarks/binomial_ose_skew.py --data-sets {args.data_sets} --m {args.m} "
        f"--heterogeneity {args.heterogeneity:g}"
    )
    s = summary
    lines = [
        "# binomial_ose_skew", "", f"Command: `{command}` ({result['seconds']:.0f} s)", "",
        f"`MultiSourceErrorRate(0.04, heterogeneity={args.heterogeneity:g})`, sources redrawn, "
        f"K = {K}, M = {args.m}, {args.data_sets} data sets; the default Bayesian fit "
        f"(binomial likelihood) with B = {N_BOOTSTRAP} bootstrap replicates. Gaps in "
        "posterior sd of `ose`, mean ± standard error over data sets.", "",
        "| CV error | posterior mean − median | 95 % equal-tailed interval's midpoint − median |",
        "|---|---|---|",
        f"| {s['cv_error'][0]:.4f} | {s['mean_minus_median_sd'][0]:+.3f} ± "
        f"{s['mean_minus_median_sd'][1]:.3f} | {s['eti_midpoint_minus_median_sd'][0]:+.3f} ± "
        f"{s['eti_midpoint_minus_median_sd'][1]:.3f} |",
    ]  # fmt: skip
    out = RESULTS / "binomial_ose_skew"
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    out.with_suffix(".json").write_text(json.dumps(result, indent=2))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
