"""bayescv's learner comparisons side by side with the peers, on the same inputs (issue 16).

One run prints and stores, for logistic regression against a decision tree on scikit-learn's
breast-cancer data (10 × 10 repeated stratified K-fold CV, accuracy):

* the Bayesian correlated t-test: bayescv (:func:`bayescv.correlated_ttest`) and baycomp
  (``CorrelatedTTest``), probabilities and time per call;
* the corrected resampled t-test as scikit-learn's example "Statistical comparison of models
  using grid search" computes it (its ``corrected_std`` / ``compute_corrected_ttest``
  formulas, written out here) and bayescv's ``nadeau_bengio`` row;
* mlxtend's k-fold paired t-test (``paired_ttest_kfold_cv``, its own unshuffled 10 folds) and
  bayescv's ``naive_folds`` on the same folds; mlxtend's 5×2cv test for reference;
* the hierarchical comparison over 10 data sets: bayescv (``hierarchical_datasets``, PyMC
  model, compiled once) and baycomp's ``HierarchicalTest`` (Stan, through PyStan), when
  PyStan is installed.

Run by hand (baycomp, mlxtend and pystan are benchmark-only dependencies)::

    pip install baycomp mlxtend pystan
    python benchmarks/compare_learners_peers.py

Results: ``benchmarks/results/compare_learners_peers.{json,md}``.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_iris,
    load_wine,
    make_classification,
)
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, RepeatedStratifiedKFold, cross_validate
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

import bayescv
from bayescv.fold_scores import from_cross_validate, from_long_frame

RESULTS = Path(__file__).resolve().parent / "results"
ROPE = 0.01


def _timed(func, repeat: int = 200) -> tuple[object, float]:
    """Result and median seconds per call."""
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - start)
    return out, float(np.median(times))


def _learners():
    return {
        "logistic": make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
        "tree": DecisionTreeClassifier(random_state=0),
    }


def single_data_set() -> dict:
    X, y = load_breast_cancer(return_X_y=True)
    cv = RepeatedStratifiedKFold(n_splits=10, n_repeats=10, random_state=0)
    res = {n: cross_validate(e, X, y, cv=cv, return_indices=True) for n, e in _learners().items()}
    x, z = res["logistic"]["test_score"], res["tree"]["test_score"]
    out: dict = {}
    table = from_cross_validate(res, runs=10)
    ours, t_ours = _timed(lambda: bayescv.correlated_ttest(table, rope=ROPE))
    _, t_ours_built = _timed(
        lambda: bayescv.correlated_ttest(from_cross_validate(res, runs=10), rope=ROPE)
    )
    out["correlated_t"] = {
        "bayescv": [float(ours[v].item()) for v in ("p_better", "p_equivalent", "p_worse")],
        "bayescv_seconds": t_ours,
        "bayescv_seconds_with_table": t_ours_built,
        "fold_sizes": table.attrs["sizes"],
    }
    try:
        import baycomp

        theirs, t_theirs = _timed(lambda: baycomp.CorrelatedTTest.probs(x, z, rope=ROPE, runs=10))
        # bayescv with baycomp's equal-fold ratio 1/(K − 1), to show the formulas agree.
        equal = bayescv.fold_table([x, z], runs=10, greater_is_better=True)
        eq = bayescv.correlated_ttest(equal, rope=ROPE)
        out["correlated_t"].update({
            "baycomp": [float(p) for p in theirs], "baycomp_seconds": t_theirs,
            "bayescv_equal_folds": [float(eq[v].item()) for v in ("p_better", "p_equivalent", "p_worse")],
            "max_abs_difference_equal_folds": float(np.max(np.abs(
                np.array([eq[v].item() for v in ("p_better", "p_equivalent", "p_worse")]) - theirs))),
        })  # fmt: skip
    except ImportError:
        out["correlated_t"]["baycomp"] = "not installed"
    # scikit-learn's example: corrected_std = sqrt(var(d, ddof=1) * (1/kr + n_test/n_train)),
    # t = mean(d)/corrected_std, p = t.sf(|t|, kr − 1) (one-sided, as in the example).
    d = x - z
    n_test = np.array([len(t) for t in res["logistic"]["indices"]["test"]])
    n_train = np.array([len(t) for t in res["logistic"]["indices"]["train"]])
    ratio = float(np.mean(n_test / n_train))
    cstd = np.sqrt(np.var(d, ddof=1) * (1 / d.size + ratio))
    t_sk = d.mean() / cstd
    rows = bayescv.compare_learners(table, methods=["nadeau_bengio"])
    nb = rows.isel(row=0)
    out["corrected_t"] = {
        "sklearn_example_t": float(t_sk), "sklearn_example_p_one_sided": float(stats.t.sf(abs(t_sk), d.size - 1)),
        "bayescv_t": float(nb["estimate"] / ((nb["upper"] - nb["estimate"]) / stats.t.ppf(0.975, d.size - 1))),
        "bayescv_p_two_sided": float(nb["p_value"]),
    }  # fmt: skip
    try:
        from mlxtend.evaluate import paired_ttest_5x2cv, paired_ttest_kfold_cv

        lr, tree = _learners().values()
        start = time.perf_counter()
        t_ml, p_ml = paired_ttest_kfold_cv(lr, tree, X, y, cv=10, random_seed=0)
        t_ml_s = time.perf_counter() - start
        t52, p52 = paired_ttest_5x2cv(lr, tree, X, y, random_seed=0)
        tables = {
            n: bayescv.cross_val_losses(e, X, y, cv=KFold(10), loss="zero_one")
            for n, e in _learners().items()
        }
        naive = bayescv.compare_learners(tables, methods=["naive_folds"]).isel(row=0)
        se = (naive["upper"] - naive["estimate"]) / stats.t.ppf(0.975, 9)
        # mlxtend reports accuracy(A) − accuracy(B) = −(loss A − loss B).
        out["kfold_paired_t"] = {
            "mlxtend_t": float(t_ml), "mlxtend_p": float(p_ml), "mlxtend_seconds": t_ml_s,
            "bayescv_naive_folds_t": float(-naive["estimate"] / se),
            "bayescv_naive_folds_p": float(naive["p_value"]),
            "mlxtend_5x2cv_t": float(t52), "mlxtend_5x2cv_p": float(p52),
        }  # fmt: skip
    except ImportError:
        out["kfold_paired_t"] = "mlxtend not installed"
    return out


def _collections():
    data = [load_breast_cancer(return_X_y=True), load_wine(return_X_y=True),
            load_iris(return_X_y=True), load_digits(return_X_y=True)]  # fmt: skip
    for seed in range(6):
        data.append(make_classification(300, 10, n_informative=4, random_state=seed))
    return data


def several_data_sets() -> dict:
    names, rows = [], []
    for i, (X, y) in enumerate(_collections()):
        cv = RepeatedStratifiedKFold(n_splits=10, n_repeats=10, random_state=0)
        for learner, est in {
            "nb": GaussianNB(),
            "tree": DecisionTreeClassifier(random_state=0),
        }.items():
            scores = cross_validate(est, X, y, cv=cv)["test_score"]
            for j, s in enumerate(scores):
                rows.append({"dataset": f"d{i}", "learner": learner, "repetition": j // 10,
                             "fold": j % 10, "score": s})  # fmt: skip
        names.append(f"d{i}")
    import pandas as pd

    table = from_long_frame(pd.DataFrame(rows), metric="accuracy")
    out: dict = {"datasets": names}
    start = time.perf_counter()
    first = bayescv.compare_learners(
        table, methods=["hierarchical_datasets"], rope=ROPE, random_state=0
    )
    out["bayescv_first_seconds"] = time.perf_counter() - start
    start = time.perf_counter()
    rows_ = bayescv.compare_learners(
        table, methods=["hierarchical_datasets"], rope=ROPE, random_state=1
    )
    out["bayescv_second_seconds"] = time.perf_counter() - start
    new = rows_.where(rows_["dataset"] == "new_dataset", drop=True).isel(row=0)
    out["bayescv_new_dataset"] = [float(new[v]) for v in ("p_better", "p_equivalent", "p_worse")]
    out["bayescv_first_run_new_dataset"] = [
        float(first.where(first["dataset"] == "new_dataset", drop=True).isel(row=0)[v])
        for v in ("p_better", "p_equivalent", "p_worse")
    ]
    # baycomp's HierarchicalTest.probs() reports, for each posterior draw of (nu, delta0, std0),
    # which of the three Student-t masses is the largest, and the share of draws where each
    # wins; bayescv reports the mean masses. Both readings from one bayescv fit:
    from bayescv.bayes import compare_datasets
    from bayescv.fold_scores import fold_differences

    diff = fold_differences(table, "nb", "tree").values.reshape(len(names), -1)
    _, idata = compare_datasets(
        diff, rope=ROPE, runs=10, random_state=1, return_inferencedata=True
    )
    post = idata.posterior
    nu, d0, s0 = (post[v].values.ravel() for v in ("nu", "delta0", "std0"))
    low, high = stats.t.cdf(-ROPE, nu, d0, s0), stats.t.sf(ROPE, nu, d0, s0)
    masses = np.stack([low, 1 - low - high, high], axis=1)
    out["bayescv_new_dataset_mean_masses"] = masses.mean(axis=0).tolist()
    winners = np.bincount(masses.argmax(axis=1), minlength=3) / masses.shape[0]
    out["bayescv_new_dataset_baycomp_reading"] = winners.tolist()
    try:
        import baycomp
        import stan  # noqa: F401

        x = table["loss"].sel(learner="nb").values.reshape(len(names), -1) * -1
        z = table["loss"].sel(learner="tree").values.reshape(len(names), -1) * -1
        with tempfile.TemporaryDirectory() as tmp:  # baycomp pickles its last sample in cwd
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    probs = baycomp.HierarchicalTest.probs(
                        x, z, rope=ROPE, runs=10, random_state=0
                    )
                out["baycomp_seconds"] = time.perf_counter() - start
            finally:
                os.chdir(cwd)
        out["baycomp_new_dataset"] = [float(p) for p in probs]
    except ImportError as err:
        out["baycomp_new_dataset"] = f"not run: {err}"
    return out


def main() -> None:
    RESULTS.mkdir(exist_ok=True)
    result = {"single": single_data_set(), "several": several_data_sets(),
              "bayescv_version": bayescv.__version__}  # fmt: skip
    (RESULTS / "compare_learners_peers.json").write_text(json.dumps(result, indent=2))
    s, m = result["single"], result["several"]
    lines = [
        "# compare_learners_peers", "",
        "Command: `python benchmarks/compare_learners_peers.py` (baycomp 1.0.3, mlxtend, pystan 3 installed).", "",
        "## One data set: breast cancer, logistic regression vs decision tree, 10 x 10 stratified CV, accuracy", "",
        f"ROPE ±{ROPE}. Probabilities are (P(logistic better), P(equivalent), P(tree better)).", "",
        "| test | probabilities or statistic | time per call |", "|---|---|---|",
    ]  # fmt: skip
    ct = s["correlated_t"]
    lines.append(
        f"| bayescv correlated_ttest (fold sizes {ct['fold_sizes']}) | {np.round(ct['bayescv'], 6).tolist()} | {ct['bayescv_seconds'] * 1e3:.2f} ms ({ct['bayescv_seconds_with_table'] * 1e3:.2f} ms with the table built from cross_validate) |"
    )
    if isinstance(ct.get("baycomp"), list):
        lines.append(
            f"| baycomp CorrelatedTTest | {np.round(ct['baycomp'], 6).tolist()} | {ct['baycomp_seconds'] * 1e3:.2f} ms |"
        )
        lines.append(
            f"| bayescv, equal-fold ratio 1/(K-1) as baycomp | {np.round(ct['bayescv_equal_folds'], 6).tolist()} (max abs. difference from baycomp {ct['max_abs_difference_equal_folds']:.1e}) | |"
        )
    c = s["corrected_t"]
    lines.append(
        f"| scikit-learn example's corrected t | t = {c['sklearn_example_t']:.4f}, one-sided p = {c['sklearn_example_p_one_sided']:.4g} | |"
    )
    lines.append(
        f"| bayescv nadeau_bengio | t = {c['bayescv_t']:.4f}, two-sided p = {c['bayescv_p_two_sided']:.4g} | |"
    )
    k = s["kfold_paired_t"]
    if isinstance(k, dict):
        lines.append(
            f"| mlxtend paired_ttest_kfold_cv (10 unshuffled folds) | t = {k['mlxtend_t']:.4f}, p = {k['mlxtend_p']:.4g} | {k['mlxtend_seconds']:.2f} s (refits) |"
        )
        lines.append(
            f"| bayescv naive_folds, same folds | t = {k['bayescv_naive_folds_t']:.4f}, p = {k['bayescv_naive_folds_p']:.4g} | |"
        )
        lines.append(
            f"| mlxtend paired_ttest_5x2cv | t = {k['mlxtend_5x2cv_t']:.4f}, p = {k['mlxtend_5x2cv_p']:.4g} | |"
        )
    lines += [
        "", "## Ten data sets: Gaussian naive Bayes vs decision tree (4 scikit-learn data sets, 6 make_classification), 10 x 10 CV", "",
        "| model | P(nb better, equivalent, tree better) on a new data set | time |", "|---|---|---|",
        f"| bayescv hierarchical_datasets (mean Student-t masses) | {np.round(m['bayescv_new_dataset'], 4).tolist()} | first call {m['bayescv_first_seconds']:.1f} s, second {m['bayescv_second_seconds']:.1f} s |",
        f"| bayescv, the same fit's draws: mean masses / baycomp's reading (share of draws where each mass is largest) | {np.round(m['bayescv_new_dataset_mean_masses'], 4).tolist()} / {np.round(m['bayescv_new_dataset_baycomp_reading'], 4).tolist()} | |",
    ]  # fmt: skip
    if isinstance(m.get("baycomp_new_dataset"), list):
        lines.append(
            f"| baycomp HierarchicalTest (Stan; share of draws where each mass is largest) | {np.round(m['baycomp_new_dataset'], 4).tolist()} | {m['baycomp_seconds']:.1f} s (Stan's compile and 4 x 50,000 iterations) |"
        )
    else:
        lines.append(f"| baycomp HierarchicalTest | {m['baycomp_new_dataset']} | |")
    (RESULTS / "compare_learners_peers.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
