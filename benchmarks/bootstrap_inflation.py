"""Why do bootstrap-replicated CV errors vary more than CV on fresh data? (issue 15 (a))

``loss_shapes_binary.py`` measured, at Bayes error 0.18, M = 50, sources fixed, that the
variance of the CV error μ̂ over bootstrap replicates is 1.25 ± 0.07 times its variance over
fresh data sets, after which every interval that reads the replicates over-covers (97 %). This
script splits both variances into their parts, with the exact error of every fitted model
(:meth:`~bayescv.compare.MultiSourceErrorRate` gives it in closed form for linear learners):

- S = Σ_k (n_k/N) R_k(θ̂₋ₖ), the model part: the exact error rates of the fold models on their
  test sources, weighted as μ̂ weights them. Over fresh data sets its variance is Var(S); over
  one data set's bootstrap replicates Var*(S*), averaged over the data sets.
- the tie part: Σ_k (n_k/N)² c̄_k / n_k, c̄_k the mean over source k's original points of
  π_i(1 − π_i), π_i the share of bootstrap fold models that misclassify point i (the term the
  Bayesian model's bootstrap likelihood already removes, ``bayescv.bayes._stats.tie_term``;
  computed here on every original point, since in leave-one-source-out CV the fold model of
  source k does not see source k's resample).

The prediction tested: a fitted model's error is, near the population optimum θ₀, a quadratic
function of θ̂ − θ₀ (the 0-1 risk of a well-specified model has zero gradient there). Fresh
data sets draw θ̂ around θ₀; a bootstrap draws θ* around θ̂, where the risk has the gradient
H(θ̂ − θ₀), so the replicates' risks gain a linear term. For a quadratic form ½δᵀHδ with
δ ~ N(0, V) that makes E[Var*(S*)] = 3 Var(S) (½ tr((HV)²) from the quadratic part, and
tr((HV)²) more from the linear one), so the bootstrap overstates Var(μ̂) by about 2 Var(S)
beyond the tie part. A learner whose risk has a non-zero gradient at its limit (a
misspecified one) has a linear part in Var(S) too, which the bootstrap reproduces; the ratio
Var*(S*) / Var(S) then falls towards 1.

Run by hand (each cell about 4 min on 2 cores at 200 data sets and B = 50)::

    python benchmarks/bootstrap_inflation.py --cells 0.18:50,0.04:200 --data-sets 200

Results: ``benchmarks/results/bootstrap_inflation.{json,md}``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _report import load_average, machine_info, write_results
from joblib import Parallel, delayed
from sklearn.base import clone

from bayescv.compare import MultiSourceErrorRate
from bayescv.cv.loss_functions import LOSSES

ZERO_ONE = LOSSES["zero_one"]
K = 10


def _fold_models(learner, X, y, source):
    """The K leave-one-source-out models, and the 0-1 loss of every point under its fold's."""
    models, losses = [], np.empty(y.size)
    for k in range(K):
        test = source == k
        model = clone(learner).fit(X[~test], y[~test])
        losses[test] = model.predict(X[test]) != y[test]
        models.append(model)
    return models, losses


def one_data_set(scenario, bayes_error, seed, r, n_bootstrap):
    """μ̂, S, and over B bootstrap replicates: Var*(μ̂*), Var*(S*) and the tie part."""
    rng = np.random.default_rng([seed, r])
    draw = scenario.draw(rng)
    X, y = draw.X, draw.y
    source = draw.population.source_index
    n = np.bincount(source, minlength=K).astype(float)
    weight = n / n.sum()
    learner = scenario.default_learner()

    def model_part(models):
        return sum(
            weight[k] * draw.population.source_errors(m, ZERO_ONE, rng)[k]
            for k, m in enumerate(models)
        )

    models, losses = _fold_models(learner, X, y, source)
    mu, s = losses.mean(), model_part(models)
    rows = [np.flatnonzero(source == k) for k in range(K)]
    mu_star, s_star = np.empty(n_bootstrap), np.empty(n_bootstrap)
    wrong = np.zeros(y.size)  # times each original point is misclassified by its fold model
    for b in range(n_bootstrap):
        pick = np.concatenate([rng.choice(idx, idx.size) for idx in rows])
        models_b, losses_b = _fold_models(learner, X[pick], y[pick], source[pick])
        mu_star[b], s_star[b] = losses_b.mean(), model_part(models_b)
        for k, m in enumerate(models_b):
            wrong[rows[k]] += m.predict(X[rows[k]]) != y[rows[k]]
    pi = wrong / n_bootstrap
    c = pi * (1 - pi) * n_bootstrap / (n_bootstrap - 1)
    c_bar = np.bincount(source, weights=c, minlength=K) / n
    ties = float((weight**2 * c_bar / n).sum())
    return mu, s, mu_star.var(ddof=1), s_star.var(ddof=1), ties


def _se(statistic, r: int, rng: np.random.Generator) -> float:
    """Bootstrap-over-data-sets standard error of ``statistic(i)``, i the resampled indices.

    Every variance in a statistic is resampled with the rest: Var(μ̂)'s own error dominates
    the excess.
    """
    return float(np.std([statistic(rng.integers(0, r, r)) for _ in range(2000)], ddof=1))


def _ratio_se(num: np.ndarray, den: np.ndarray, rng: np.random.Generator) -> float:
    """Standard error of mean(num) / var(den)."""
    return _se(lambda i: num[i].mean() / den[i].var(ddof=1), num.size, rng)


def run_cell(bayes_error, m, data_sets, n_bootstrap, n_jobs, seed):
    sc = MultiSourceErrorRate(bayes_error, n_sources=K, points_per_source=m)
    started = time.perf_counter()
    out = np.array(
        Parallel(n_jobs=n_jobs)(
            delayed(one_data_set)(sc, bayes_error, seed, r, n_bootstrap) for r in range(data_sets)
        )
    )
    mu, s, vb_mu, vb_s, ties = out.T
    rng = np.random.default_rng(seed)
    var_mu, var_s = mu.var(ddof=1), s.var(ddof=1)
    excess = vb_mu.mean() - ties.mean() - var_mu
    return {
        "bayes_error": bayes_error,
        "m": m,
        "data_sets": data_sets,
        "n_bootstrap": n_bootstrap,
        "seconds": time.perf_counter() - started,
        "mean_cv_error": float(mu.mean()),
        "var_mu": float(var_mu),
        "var_s": float(var_s),
        "boot_var_mu": float(vb_mu.mean()),
        "boot_var_s": float(vb_s.mean()),
        "ties": float(ties.mean()),
        "ratio_mu": float(vb_mu.mean() / var_mu),
        "ratio_mu_se": _ratio_se(vb_mu, mu, rng),
        "ratio_mu_untied": float((vb_mu - ties).mean() / var_mu),
        "ratio_mu_untied_se": _ratio_se(vb_mu - ties, mu, rng),
        "ratio_s": float(vb_s.mean() / var_s),
        "ratio_s_se": _ratio_se(vb_s, s, rng),
        "excess_over_var_s": float(excess / var_s),
        "excess_over_var_s_se": _se(
            lambda i: ((vb_mu - ties)[i].mean() - mu[i].var(ddof=1)) / s[i].var(ddof=1),
            mu.size,
            rng,
        ),
        # per data set, for later analysis: μ̂, S, Var*(μ̂*), Var*(S*), the tie part
        "per_data_set": {
            "mu": mu.tolist(),
            "s": s.tolist(),
            "boot_var_mu": vb_mu.tolist(),
            "boot_var_s": vb_s.tolist(),
            "ties": ties.tolist(),
        },
    }


def markdown(res):
    lines = [
        "# bootstrap_inflation",
        "",
        f"Command: `{res['command']}`. Machine: python {res['machine']['python']}, "
        f"scikit-learn {res['machine']['scikit-learn']}, git {res['machine']['git_commit']}; "
        f"load average {res['load_before']:.2f} before; {res['total_runtime_s']:.0f} s.",
        "",
        "`MultiSourceErrorRate`, K = 10 sources fixed, M points each, leave one source out, "
        "`LogisticRegression(C=1)`, 0-1 loss; B bootstrap replicates within sources per data "
        "set. Variances over data sets are of μ̂ (the CV error) and S (the model part: the "
        "exact errors of the fold models, weighted as μ̂ weights them); bootstrap ones are "
        "means over data sets of the variance over replicates; the tie part is the one "
        "`bayescv.bayes._stats.tie_term` removes. Ratios ± a bootstrap over data sets.",
        "",
        "| Bayes error, M | data sets | Var(μ̂) | Var(S) | Var(S) / Var(μ̂) | E Var*(μ̂*) / Var(μ̂) "
        "| after removing the tie part | E Var*(S*) / Var(S) (predicted 3) | excess after ties "
        "/ Var(S) (predicted 2) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in res["cells"]:
        lines.append(
            f"| {c['bayes_error']}, {c['m']} | {c['data_sets']} | {c['var_mu']:.3g} | "
            f"{c['var_s']:.3g} | {c['var_s'] / c['var_mu']:.3f} | "
            f"{c['ratio_mu']:.2f} ± {c['ratio_mu_se']:.2f} | "
            f"{c['ratio_mu_untied']:.2f} ± {c['ratio_mu_untied_se']:.2f} | "
            f"{c['ratio_s']:.2f} ± {c['ratio_s_se']:.2f} | "
            f"{c['excess_over_var_s']:.2f} ± {c['excess_over_var_s_se']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", default="0.18:50,0.04:200", help="bayes_error:M pairs")
    parser.add_argument("--data-sets", type=int, default=200)
    parser.add_argument("--bootstrap", type=int, default=50)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--name", default="bootstrap_inflation")
    args = parser.parse_args()
    started = time.perf_counter()
    res = {
        "command": "python benchmarks/bootstrap_inflation.py "
        f"--cells {args.cells} --data-sets {args.data_sets} --bootstrap {args.bootstrap} "
        f"--n-jobs {args.n_jobs} --seed {args.seed}",
        "machine": machine_info(["numpy", "scikit-learn", "bayescv"]),
        "load_before": load_average(),
        "cells": [],
    }
    for cell in args.cells.split(","):
        bayes_error, m = cell.split(":")
        res["cells"].append(
            run_cell(
                float(bayes_error), int(m), args.data_sets, args.bootstrap, args.n_jobs, args.seed
            )
        )
        print(res["cells"][-1], flush=True)
    write_results(args.name, res, markdown, started)


if __name__ == "__main__":
    main()
