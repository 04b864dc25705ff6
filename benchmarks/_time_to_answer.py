"""Section "time to answer" of bench_bayes.py: wall time of fresh processes, imports included.

Every figure is the wall time of a new ``python`` process (so it includes importing bayescv,
NumPy, ArviZ and nutpie), measured side by side with ``bayescv variance`` on the same file:

* ``bayescv bayes`` on a 10-source CSV with an empty cache (``BAYESCV_CACHE_DIR`` pointed at a
  new directory) and then again with that cache warm;
* in one process, later fits of new tables with the same K (4 chains x (1000 + 1000));
* ``bayescv.bayes.paired_comparison`` on a 10 x 10 repeated K-fold table pair, cache warm;
* K = 10, 50, 200, 1000 sources (equal and unequal sizes), cache warm: the fit's wall time in a
  fresh process, its convergence, and the time per gradient evaluation.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

TARGETS = {"warm_cli_s": 5.0, "cold_cli_s": 40.0, "later_fit_s": 0.5, "compare_s": 5.0}
K_TARGETS = {200: 15.0, 1000: 90.0}


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{argv} failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds, done.stdout


def _source_csv(path: Path, k: int, sizes: np.ndarray, seed: int) -> None:
    rng = np.random.default_rng(seed)
    block = np.repeat(np.arange(k), sizes)
    loss = 0.3 + 0.05 * rng.standard_normal(k)[block] + 0.4 * rng.standard_normal(block.size)
    frame = pd.DataFrame({"loss": loss, "block": block, "source": [f"s{b}" for b in block]})
    frame.to_csv(path, index=False)


_FIT_SCRIPT = """
import json, sys, time
start = time.perf_counter()
import pandas as pd
from bayescv.bayes import fit
from bayescv.losses import from_frame
table = from_frame(pd.read_csv(sys.argv[1]), source="source", scheme="source")
idata = fit(table, random_state=0)
a = idata.sample_stats.attrs
steps = int(idata.sample_stats["n_steps"].values.sum())
print(json.dumps({"wall_in_process_s": time.perf_counter() - start,
    "sampling_s": a["sampling_seconds"], "compile_s": a["compile_seconds"],
    "rhat_max": a["rhat_max"], "ess_bulk_min": a["ess_bulk_min"],
    "ess_tail_min": a["ess_tail_min"], "divergences": a["divergences"],
    "converged": not a["problems"], "leapfrog_steps": steps,
    "s_per_gradient": a["sampling_seconds"] / steps}))
"""

_LATER_SCRIPT = """
import json, time
import numpy as np
from bayescv.bayes import fit
from bayescv.losses import from_arrays
def table(seed):
    rng = np.random.default_rng(seed)
    block = np.repeat(np.arange(10), 48)
    loss = 0.3 + 0.05 * rng.standard_normal(10)[block] + 0.4 * rng.standard_normal(block.size)
    return from_arrays(loss, block, scheme="source")
fit(table(0), random_state=0)
times = []
for seed in (1, 2, 3, 4, 5):
    t = table(seed)
    start = time.perf_counter()
    idata = fit(t, random_state=seed)
    times.append(time.perf_counter() - start)
print(json.dumps({"later_fit_s": times, "sampler": idata.sample_stats.attrs["sampler"],
    "sampling_s": idata.sample_stats.attrs["sampling_seconds"]}))
"""

_COMPARE_SCRIPT = """
import json, time
import numpy as np
from bayescv.bayes import paired_comparison
from bayescv.losses import from_arrays, stack_replicates
rng = np.random.default_rng(0)
folds = [rng.permutation(np.repeat(np.arange(10), 30)) for _ in range(10)]
def runs(rate):
    tables = [from_arrays((rng.random(300) < rate).astype(float), f, scheme="random")
              for f in folds]
    return stack_replicates(tables, replicate_kind="repeat")
a, b = runs(0.20), runs(0.23)
start = time.perf_counter()
idata, summary = paired_comparison(a, b, rope=0.01, random_state=0)
print(json.dumps({"in_process_s": time.perf_counter() - start,
    "p_better": float(summary["p_better"].sel(target="expected_cv"))}))
"""


def bench_time_to_answer() -> dict[str, Any]:
    """Measure the figures of the module docstring; see the module docstring."""
    out: dict[str, Any] = {
        "targets": TARGETS,
        "k_targets": {str(k): v for k, v in K_TARGETS.items()},
    }
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = {**os.environ, "BAYESCV_CACHE_DIR": str(tmp / "cache")}
        csv = tmp / "sources10.csv"
        _source_csv(csv, 10, np.full(10, 48), seed=0)
        bayes = ["bayescv", "bayes", str(csv), "--source-col", "source", "--format", "json"]
        variance = ["bayescv", "variance", str(csv), "--source-col", "source"]
        cold, _ = _run(bayes, env)
        warm, text = [], ""
        var = []
        for _ in range(3):  # interleaved with `bayescv variance` on the same file
            seconds, text = _run(bayes, env)
            warm.append(seconds)
            var.append(_run(variance, env)[0])
        result = json.loads(text)
        out["cli"] = {
            "cold_s": cold,
            "warm_s": warm,
            "warm_median_s": float(np.median(warm)),
            "variance_s": var,
            "variance_median_s": float(np.median(var)),
            "ratio_warm_cold": float(np.median(warm)) / cold,
            "diagnostics": result["diagnostics"],
        }
        out["later"] = json.loads(_run([sys.executable, "-c", _LATER_SCRIPT], env)[1])
        out["later"]["median_s"] = float(np.median(out["later"]["later_fit_s"]))
        cmp_s, text = _run([sys.executable, "-c", _COMPARE_SCRIPT], env)
        out["compare"] = {"wall_s": cmp_s, **json.loads(text)}
        rows = []
        rng = np.random.default_rng(1)
        for k in (10, 50, 200, 1000):
            for layout in ("equal", "unequal"):
                sizes = np.full(k, 30) if layout == "equal" else rng.integers(10, 60, k)
                path = tmp / f"k{k}_{layout}.csv"
                _source_csv(path, k, sizes, seed=k)
                seconds, text = _run([sys.executable, "-c", _FIT_SCRIPT, str(path)], env)
                rows.append({"k": k, "layout": layout, "wall_s": seconds, **json.loads(text)})
                print(f"    K = {k} {layout}: {seconds:.1f} s", flush=True)
        out["sources"] = rows
    return out


def markdown_time_to_answer(r: dict[str, Any]) -> list[str]:
    """Lines of the section's report."""
    c, t = r["cli"], r["targets"]
    later = r["later"]

    def met(value: float, target: float) -> str:
        return "met" if value <= target else "NOT met"

    lines = [
        "## 6. Time to answer (fresh processes, imports included; default sampler)",
        "",
        "Each figure is the wall time of a new Python process, side by side with "
        "`bayescv variance` on the same 10-source CSV (480 losses).",
        "",
        f"- `bayescv bayes`, empty cache: **{c['cold_s']:.1f} s** (target ≤ {t['cold_cli_s']:g} s:"
        f" {met(c['cold_s'], t['cold_cli_s'])})",
        f"- `bayescv bayes`, cache warm: median **{c['warm_median_s']:.1f} s** "
        f"({', '.join(f'{x:.1f}' for x in c['warm_s'])}; target ≤ {t['warm_cli_s']:g} s: "
        f"{met(c['warm_median_s'], t['warm_cli_s'])}); second / first = "
        f"{c['ratio_warm_cold']:.2f}",
        f"- `bayescv variance`: median {c['variance_median_s']:.1f} s",
        f"- later fit in one process ({later['sampler']}, 4 chains x (1000 + 1000)): median "
        f"**{later['median_s']:.2f} s** (target ≤ {t['later_fit_s']:g} s: "
        f"{met(later['median_s'], t['later_fit_s'])})",
        f"- `paired_comparison` on a 10 x 10 repeated K-fold pair, cache warm: "
        f"**{r['compare']['wall_s']:.1f} s** (target ≤ {t['compare_s']:g} s: "
        f"{met(r['compare']['wall_s'], t['compare_s'])})",
        f"- the fit's diagnostics: r̂ max {c['diagnostics']['rhat_max']:.3f}, ESS bulk min "
        f"{c['diagnostics']['ess_bulk_min']:.0f}, divergences {c['diagnostics']['divergences']}",
        "",
        "| K | sizes | wall (fresh process) | sampling | µs per gradient | r̂ max | ESS bulk "
        "min | ESS tail min | divergences | converged | target |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in r["sources"]:
        target = r["k_targets"].get(str(row["k"]))
        verdict = "" if target is None else f"≤ {target:g} s: {met(row['wall_s'], target)}"
        lines.append(
            f"| {row['k']} | {row['layout']} | {row['wall_s']:.1f} s | {row['sampling_s']:.2f} s "
            f"| {1e6 * row['s_per_gradient']:.1f} | {row['rhat_max']:.3f} | "
            f"{row['ess_bulk_min']:.0f} | {row['ess_tail_min']:.0f} | {row['divergences']} | "
            f"{row['converged']} | {verdict} |"
        )
    lines += [
        "",
        "Sizes: equal, 30 points per source; unequal, 10 to 59 points drawn at random. "
        "µs per gradient: sampling time over the leapfrog steps of all chains (the chains run "
        "in parallel on the two cores, so this is about half the cost of one evaluation).",
        "",
    ]
    return lines
