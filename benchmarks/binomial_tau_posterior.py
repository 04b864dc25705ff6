"""The binomial model's between-source scale τ against the sources' true spread (issue 15).

Why does the binomial model's ``ose`` interval over-cover with sources redrawn
(``benchmarks/results/loss_shapes_binary_redrawn.md``)? With K = 10 sources, τ (the
standard deviation of the sources' logit error levels) is informed mostly by its prior,
HalfNormal(1). This script draws data sets from :class:`bayescv.compare.MultiSourceErrorRate`
(sources redrawn, Bayes error 0.04, K = 10, M points per source) at two heterogeneities,
fits the default Bayesian model to each leave-one-source-out table of 0-1 losses and sets
the posterior of τ beside the true spread: the standard deviation of logit(error rate) over
2000 new sources of the model trained on all K sources (exact errors,
:func:`bayescv.compare._truth.logistic_zero_one_error`).

Run by hand::

    python benchmarks/binomial_tau_posterior.py --data-sets 40

Results: ``benchmarks/results/binomial_tau_posterior.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from scipy import special
from sklearn.linear_model import LogisticRegression

import bayescv
from bayescv.bayes import fit, posterior_intervals
from bayescv.compare import MultiSourceErrorRate
from bayescv.compare._truth import logistic_zero_one_error

RESULTS = Path(__file__).resolve().parent / "results"
K = 10


def one(heterogeneity: float, m: int, seed: int) -> dict:
    """Fit one data set; return the true spread and τ's posterior summary."""
    warnings.simplefilter("ignore")  # in the worker too
    sc = MultiSourceErrorRate(
        0.04, K, m, design="sources_redrawn", heterogeneity=heterogeneity
    )  # fmt: skip
    rng = np.random.default_rng(seed)
    draw = sc.draw(rng)
    learner = LogisticRegression(C=1.0, max_iter=5000)
    model = learner.fit(draw.X, draw.y)
    new = sc._draw_sources(rng, 2000)
    errors = logistic_zero_one_error(
        model.coef_[0], float(model.intercept_[0]), new.beta, new.intercept, new.mean, sc.cov
    )  # fmt: skip
    losses = bayescv.cross_val_losses(
        learner, draw.X, draw.y, groups=draw.groups, loss="zero_one", random_state=seed
    )  # fmt: skip
    idata = fit(losses, random_state=seed, progress=False)
    tau = idata.posterior["tau"].values.ravel()
    ose = posterior_intervals(idata, level=0.95).sel(method_name="bayes_ose")
    return {
        "true_spread": float(np.std(special.logit(errors))),
        "tau_mean": float(tau.mean()),
        "tau_q05": float(np.quantile(tau, 0.05)),
        "tau_q95": float(np.quantile(tau, 0.95)),
        "ose_width": float(ose["upper"] - ose["lower"]),
        "cv_error": float(losses["loss"].mean()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-sets", type=int, default=40)
    parser.add_argument("--m", type=int, default=50)
    parser.add_argument("--heterogeneities", default="0.05,0.2")
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # sampler chatter; convergence is not what is measured
    results = []
    for h in (float(v) for v in args.heterogeneities.split(",")):
        start = time.perf_counter()
        rows = Parallel(n_jobs=args.n_jobs)(
            delayed(one)(h, args.m, 1000 + i) for i in range(args.data_sets)
        )
        summary = {
            key: [float(np.mean([r[key] for r in rows])), float(np.std([r[key] for r in rows]))]
            for key in rows[0]
        }
        inside = np.mean([r["tau_q05"] <= r["true_spread"] <= r["tau_q95"] for r in rows])
        results.append({
            "heterogeneity": h, "m": args.m, "data_sets": args.data_sets, "summary": summary,
            "true_spread_in_tau_90": float(inside), "seconds": time.perf_counter() - start,
        })  # fmt: skip
        print(json.dumps(results[-1]), flush=True)
    command = (
        f"python benchmarks/binomial_tau_posterior.py --data-sets {args.data_sets} "
        f"--m {args.m} --heterogeneities {args.heterogeneities}"
    )
    lines = [
        "# binomial_tau_posterior", "", f"Command: `{command}`", "",
        f"`MultiSourceErrorRate(0.04)`, sources redrawn, K = {K}, M = {args.m}; the default "
        "Bayesian fit (binomial likelihood) of each leave-one-source-out table. True spread: "
        "the sd of logit(error rate) over 2000 new sources of the model trained on all sources. "
        "Mean (sd) over data sets.", "",
        "| heterogeneity (× c) | data sets | CV error | true spread | posterior mean of τ "
        "| τ 5 % / 95 % quantiles (means) | true spread inside τ's 90 % interval | "
        "`ose` 95 % width |",
        "|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for r in results:
        s = r["summary"]
        lines.append(
            f"| {r['heterogeneity']:g} | {r['data_sets']} | {s['cv_error'][0]:.4f} "
            f"| {s['true_spread'][0]:.3f} ({s['true_spread'][1]:.3f}) "
            f"| {s['tau_mean'][0]:.3f} ({s['tau_mean'][1]:.3f}) "
            f"| {s['tau_q05'][0]:.3f} / {s['tau_q95'][0]:.3f} "
            f"| {100 * r['true_spread_in_tau_90']:.0f} % | {s['ose_width'][0]:.4f} |"
        )
    out = RESULTS / "binomial_tau_posterior"
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    out.with_suffix(".json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
