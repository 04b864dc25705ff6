"""Coverage of intervals for 0-1 losses at error rates of about 1.5 %, 5 % and 20 % (issue 15).

Runs :func:`bayescv.compare.run_study` on multi-source logistic scenarios whose sources' Bayes
error is 0.005, 0.04 or 0.18 (:class:`bayescv.compare.MultiSourceErrorRate`: the coefficients
of :func:`bayescv.compare.bates_coefficient` and a heterogeneity of 5 % of them; the CV error
rates are then about 2 %, 4.5 % and 18.5 %, measured and reported): K = 10
sources, M = 50 or 200 points each, leave one source out, lightly regularised logistic
regression (C = 1), 95 % intervals. One bootstrap-replicated table per data set (B = 50) is
shared by the ``bootstrap`` row and both Bayesian rows.

Rows: the Bayesian model with its default likelihood for 0-1 tables (``bayes_*``: binomial
counts, :mod:`bayescv.bayes.binomial_model`) and with the Gaussian likelihood beside it
(``gauss_*``, registered here), the closed-form ``naive_points`` and ``theta_B`` and the
``bootstrap`` with the package's default bounds (normal in ``loss_shapes_binary.md``, which
was run before score bounds became the default for 0-1 tables; score bounds since), and,
computed from those rows' stored θ̂, their score (Wilson-type) intervals ``*_score`` on the
effective sample size μ̂(1 − μ̂)/θ̂ (issue 15, part 2). ``--seed 1,2`` pools the studies
of several seeds, ``--replicates`` each; ``--tau-sd`` and ``--gamma-sd`` set the binomial
rows' ``Priors(tau_sd=..., gamma_sd=...)`` (sensitivity checks; the Gaussian rows keep the
defaults). Sources
fixed: target ``expected_cv`` (the mean of μ̂ over the study's replicates). Sources redrawn (``--redrawn``): target ``ose`` (the mean
over replicates of ``ose_cv``, the fold models' error on new sources), M = 10, 50, 200.
Sources fixed, the last column is each row's mean θ̂ over the data sets divided by the variance
of μ̂ over them (:func:`variance_ratio`): how far the row's variance estimate sits from the one
it estimates.

Run by hand::

    python benchmarks/loss_shapes_binary.py --replicates 200 --n-jobs 2
    python benchmarks/loss_shapes_binary.py --replicates 200 --n-jobs 2 --redrawn
    python benchmarks/loss_shapes_binary.py --replicates 200 --n-jobs 2 --redrawn \
        --cells 4.5% --heterogeneity 0.2

Results: ``benchmarks/results/loss_shapes_binary*.{json,md}`` (``--name`` or the design);
the studies themselves go to ``--store`` (NetCDF, one file per cell and seed).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import xarray as xr
from scipy import stats
from sklearn.linear_model import LogisticRegression

from bayescv.bayes import Priors
from bayescv.compare import (
    Method,
    MultiSourceErrorRate,
    get_method,
    register_method,
    run_study,
    summarize,
)
from bayescv.compare.registry import bayes_hier

RESULTS = Path(__file__).resolve().parent / "results"
K = 10
LEVEL = 0.95
SETTINGS = {"2%": 0.005, "4.5%": 0.04, "18.5%": 0.18}
#: MultiSourceErrorRate's default spread of the sources' coefficients (a fraction of c).
HETEROGENEITY = 0.05
GAUSS = {"gauss_expected_cv": "expected_cv", "gauss_ose": "ose", "gauss_new_source": "new_source"}


def scenario(
    bayes_error: float, m: int, design: str, heterogeneity: float = HETEROGENEITY
) -> MultiSourceErrorRate:
    """Multi-source logistic sources whose Bayes error is `bayes_error`."""
    return MultiSourceErrorRate(
        bayes_error, K, m, design=design, source_seed=0, heterogeneity=heterogeneity
    )


def _gauss(context, names, **options):
    out = bayes_hier(context, [n.replace("gauss_", "bayes_") for n in names], **options)
    renamed = [str(n).replace("bayes_", "gauss_") for n in out["method_name"].values]
    return out.assign_coords(method_name=renamed)


def register_gaussian() -> None:
    """Register ``bayes_gauss``: the Bayesian model with ``likelihood="gaussian"``."""
    register_method(
        Method(
            "bayes_gauss", _gauss, GAUSS, "posterior", outputs=tuple(GAUSS),
            description="the Bayesian model with the Gaussian likelihood",
            options=get_method("bayes_hier").option_names,
        ),
        replace=True,
    )  # fmt: skip


def wilson(estimate: np.ndarray, theta: np.ndarray, level: float = LEVEL):
    """Score bounds on the effective size n_eff = p(1 − p)/θ (Wilson 1927); NaN for θ ≤ 0."""
    z = stats.norm.ppf(0.5 + level / 2)
    p = np.asarray(estimate, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.where(theta > 0, p * (1 - p) / theta, np.nan)
        centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
        half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return centre - half, centre + half


def with_score_rows(st: xr.Dataset) -> xr.Dataset:
    """Append ``<row>_score`` for the closed-form rows, from their stored estimate and θ̂."""
    rows = []
    for name in ("naive_points", "theta_B", "bootstrap"):
        if name not in st["method_name"].values:
            continue
        row = st.sel(method_name=[name])
        lo, hi = wilson(row["estimate"].values, row["theta_hat"].values)
        rows.append(
            row.assign(lower=(row["lower"].dims, lo), upper=(row["upper"].dims, hi)).assign_coords(
                method_name=[f"{name}_score"]
            )
        )
    if not rows:
        return st
    out = xr.concat(
        [st, *rows], dim="method_name", data_vars="minimal", coords="different",
        compat="equals", join="outer",
    )  # fmt: skip
    for name in st.data_vars:  # concat puts method_name first; keep the study's layout
        out[name] = out[name].transpose(*st[name].dims)
    out.attrs = st.attrs
    return out


def spread_tag(heterogeneity: float) -> str:
    """File-name tag of a non-default heterogeneity, ``_h0p2`` for 0.2 (no dot: not a suffix)."""
    return "" if heterogeneity == HETEROGENEITY else f"_h{heterogeneity:g}".replace(".", "p")


def one_study(args, sc, label: str, m: int, design: str, seed: int) -> xr.Dataset:
    """Run (or load from ``--store``) one seed's study of a cell."""
    spread = spread_tag(args.heterogeneity)
    tag = "" if seed == 1 else f"_seed{seed}"
    if args.tau_sd is not None:
        tag += f"_tau{args.tau_sd:g}".replace(".", "p")
    if args.gamma_sd is not None:
        tag += f"_gamma{args.gamma_sd:g}".replace(".", "p")
    path = Path(args.store) / f"{design}_{label.replace('%', 'pct')}_m{m}{spread}{tag}.nc"
    if path.exists():
        return xr.load_dataset(path)
    methods = ["naive_points", "theta_B", "bootstrap", "bayes_hier", "bayes_gauss"]
    binomial = {"n_bootstrap": 50}
    priors = {
        name: value
        for name, value in (("tau_sd", args.tau_sd), ("gamma_sd", args.gamma_sd))
        if value is not None
    }
    if priors:  # a sensitivity check of the binomial rows' priors only
        binomial["priors"] = Priors(**priors)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st = run_study(
            sc, LogisticRegression(C=1.0, max_iter=5000), methods, args.replicates,
            method_options={"bootstrap": {"n_bootstrap": 50}, "bayes_hier": binomial,
                            "bayes_gauss": {"n_bootstrap": 50, "likelihood": "gaussian"}},
            random_state=seed, n_jobs=args.n_jobs, progress=False,
        )  # fmt: skip
    st.to_netcdf(path)
    return st


def variance_ratio(theta: np.ndarray, mu: np.ndarray, draws: int = 2000) -> tuple[float, float]:
    """Mean θ̂ over the data sets / the variance of μ̂ over them, and its bootstrap se.

    With the sources fixed, Var(μ̂) over the study's data sets is what every ``expected_cv``
    row estimates (θ̂; a posterior variance for the Bayesian rows); a ratio above 1 widens the
    normal interval by its square root, and 2Φ(1.96·√ratio) − 1 is the coverage that follows.
    The se resamples the data sets (seed 0).
    """
    ok = np.isfinite(theta) & np.isfinite(mu)
    theta, mu = theta[ok], mu[ok]
    ratio = theta.mean() / mu.var(ddof=1)
    idx = np.random.default_rng(0).integers(0, theta.size, (draws, theta.size))
    boot = theta[idx].mean(axis=1) / mu[idx].var(axis=1, ddof=1)
    return float(ratio), float(boot.std(ddof=1))


def pooled(studies: list[xr.Dataset]) -> xr.Dataset:
    """Stack studies of one cell run with different seeds along ``replicate``."""
    if len(studies) == 1:
        return studies[0]
    out = xr.concat(studies, dim="replicate", data_vars="minimal", coords="minimal",
                    compat="override", combine_attrs="override")  # fmt: skip
    return out.assign_coords(replicate=np.arange(out.sizes["replicate"]))


def cell(args, label: str, m: int, design: str) -> dict:
    sc = scenario(SETTINGS[label], m, design, args.heterogeneity)
    start = time.perf_counter()
    seeds = [int(v) for v in str(args.seed).split(",")]
    st = pooled([one_study(args, sc, label, m, design, seed) for seed in seeds])
    # Time of the replicates themselves (the sum over workers), also when loaded from the store.
    seconds = float(st["time_total"].sum()) if "time_total" in st else time.perf_counter() - start
    st = with_score_rows(st)
    target = "expected_cv" if design == "sources_fixed" else "ose"
    summary = summarize(st, targets=[target])
    truth = json.loads(summary.attrs["truths"])[target]
    rows = {}
    for name in summary["method_name"].values:
        s = summary.sel(method_name=name, target=target)
        if str(summary["method_target"].sel(method_name=name).item()) != target:
            continue
        width = (st["upper"] - st["lower"]).sel(method_name=name)
        outside = ((st["lower"] < 0) | (st["upper"] > 1)).sel(method_name=name)
        est, se = st["estimate"].sel(method_name=name), st["se"].sel(method_name=name)
        offset = ((est - truth) / se).values
        rows[str(name)] = {
            "coverage": float(s["coverage"]), "coverage_se": float(s["coverage_se"]),
            "miss_low": float(s["miss_low"]), "miss_high": float(s["miss_high"]),
            "mean_width": float(width.mean()), "outside_0_1": int(outside.sum()),
            "centre_offset_sd": float(offset.mean()),
            "centre_offset_se": float(offset.std(ddof=1) / np.sqrt(offset.size)),
            # The data's share of that offset: the CV error itself, in the same units.
            "cv_offset_sd": float(((st["mu_hat"] - truth) / se).mean()),
            "not_converged": int((st["flag"].sel(method_name=name) == "not_converged").sum()),
        }  # fmt: skip
        if design == "sources_fixed":
            ratio = variance_ratio(
                st["theta_hat"].sel(method_name=name).values, st["mu_hat"].values
            )
            rows[str(name)]["variance_ratio"], rows[str(name)]["variance_ratio_se"] = ratio
    mu = st["mu_hat"].values
    return {
        "label": label, "bayes_error": SETTINGS[label], "m": m, "design": design,
        "heterogeneity": args.heterogeneity,
        "replicates": int(st.sizes["replicate"]), "truth": truth,
        "mean_errors": float(mu.mean() * K * m), "mean_error_rate": float(mu.mean()),
        "seconds": seconds, "rows": rows,
    }  # fmt: skip


def report(results: list[dict], command: str, out: Path) -> None:
    lines = [f"# {out.stem}", "", f"Command: `{command}`", ""]
    for r in results:
        lines += [
            f"## {r['label']} (Bayes error {r['bayes_error']}), M = {r['m']}, {r['design']}"
            + (
                ""
                if r["heterogeneity"] == HETEROGENEITY
                else f", heterogeneity {r['heterogeneity']:g} c"
            ),
            "",
            f"{r['replicates']} data sets; mean CV error rate {r['mean_error_rate']:.4f}, "
            f"mean errors per data set {r['mean_errors']:.1f}; truth "
            f"({'expected_cv' if r['design'] == 'sources_fixed' else 'ose'}) {r['truth']:.4f}; "
            f"{r['seconds']:.0f} s of replicate time.",
            "",
            "| interval | coverage % | miss low % | miss high % | mean width | bounds outside [0, 1] "
            "| centre − truth (se units) | CV error − truth (se units) | not converged "
            "| mean θ̂ / Var(μ̂) |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name, v in r["rows"].items():
            lines.append(
                f"| {name} | {100 * v['coverage']:.1f} ± {100 * v['coverage_se']:.1f} | "
                f"{100 * v['miss_low']:.1f} | {100 * v['miss_high']:.1f} | {v['mean_width']:.4f} | "
                f"{v['outside_0_1']} | {v['centre_offset_sd']:+.2f} ± {v['centre_offset_se']:.2f} "
                f"| {v['cv_offset_sd']:+.2f} | {v['not_converged']} | "
                + (
                    f"{v['variance_ratio']:.2f} ± {v['variance_ratio_se']:.2f} |"
                    if "variance_ratio" in v
                    else "— |"
                )
            )
        lines.append("")
    out.with_suffix(".md").write_text("\n".join(lines))
    out.with_suffix(".json").write_text(json.dumps(results, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument(
        "--seed", default="1",
        help="study seed; several, comma-separated, pool their studies (each --replicates)",
    )  # fmt: skip
    parser.add_argument("--redrawn", action="store_true")
    parser.add_argument("--store", default="/tmp/loss_shapes_binary")
    parser.add_argument("--cells", default=None, help="comma-separated labels, e.g. 4.5%%,18.5%%")
    parser.add_argument(
        "--heterogeneity", type=float, default=HETEROGENEITY,
        help=f"sd of the sources' coefficients around c, as a fraction of c ({HETEROGENEITY})",
    )  # fmt: skip
    parser.add_argument("--m", default=None, help="comma-separated source sizes (default: all)")
    parser.add_argument("--name", default=None, help="results file name (default from the design)")
    parser.add_argument(
        "--tau-sd", type=float, default=None,
        help="Priors(tau_sd=...) for the binomial rows (default: the package default, 2)",
    )  # fmt: skip
    parser.add_argument(
        "--gamma-sd", type=float, default=None,
        help="Priors(gamma_sd=...) for the binomial rows (default: the package default, 1)",
    )  # fmt: skip
    args = parser.parse_args()
    Path(args.store).mkdir(parents=True, exist_ok=True)
    register_gaussian()
    labels = args.cells.split(",") if args.cells else list(SETTINGS)
    design = "sources_redrawn" if args.redrawn else "sources_fixed"
    sizes = (10, 50, 200) if args.redrawn else (50, 200)
    if args.m:
        sizes = tuple(int(m) for m in args.m.split(","))
    plan = [(label, m, design) for label in labels for m in sizes]
    results = []
    for label, m, design in plan:
        results.append(cell(args, label, m, design))
        print(json.dumps({k: v for k, v in results[-1].items() if k != "rows"}), flush=True)
    name = "loss_shapes_binary" + ("_redrawn" if args.redrawn else "")
    name += spread_tag(args.heterogeneity)
    name = args.name or name
    command = "python benchmarks/loss_shapes_binary.py " + " ".join(
        f"--{k.replace('_', '-')} {v}"
        for k, v in vars(args).items()
        if v not in (None, False) and not (k == "heterogeneity" and v == HETEROGENEITY)
    ).replace("--redrawn True", "--redrawn")
    report(results, command, RESULTS / name)


if __name__ == "__main__":
    main()
