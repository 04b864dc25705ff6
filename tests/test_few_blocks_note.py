"""Score intervals of block-level methods on few blocks say that they under-covered there.

The score interval (the default for 0-1 losses) keeps the normal quantile. At K = 3 and 5
its block-level rows under-covered (benchmarks/results/small_k_quantile.md, 0-1 section):
``cv_intervals`` and ``bayescv variance`` now say so in one line, and name the method that
held up, instead of printing the rows without a word.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from bayescv.classical import cv_intervals
from bayescv.classical._kinds import FEW_BLOCKS, few_blocks_note
from bayescv.cli import main
from bayescv.losses import from_arrays

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def _zero_one(k: int, n: int = 200, seed: int = 0):
    rng = np.random.default_rng(seed)
    return from_arrays((rng.random(n) < 0.2).astype(float), np.repeat(np.arange(k), n // k))


def test_cv_intervals_notes_few_blocks_for_score_intervals_only():
    note = cv_intervals(_zero_one(5)).attrs["note"]
    assert note.startswith("with K = 5 blocks, the score intervals of naive_folds")
    assert "nadeau_bengio, a t procedure, held up" in note
    assert "naive_points" not in note.split(" use a ")[0]  # a point-level method: not named
    # More blocks, or t quantiles (losses not 0-1), or only point-level rows: no such line.
    assert "score intervals" not in cv_intervals(_zero_one(10)).attrs.get("note", "")
    squared = from_arrays(np.random.default_rng(1).random(200), np.repeat(np.arange(5), 40))
    assert "note" not in cv_intervals(squared).attrs
    assert "note" not in cv_intervals(_zero_one(5), ["naive_points", "nadeau_bengio"]).attrs


def test_bayescv_variance_says_it_in_text_and_json(tmp_path, capsys):
    table = _zero_one(4)
    path = tmp_path / "errors.csv"
    pd.DataFrame({"fold": table["block"].values, "loss": table["loss"].values}).to_csv(
        path, index=False
    )
    argv = ["variance", str(path), "--block-col", "fold"]
    assert main(argv) == 0
    assert "with K = 4 blocks, the score intervals of" in capsys.readouterr().out
    assert main([*argv, "--format", "json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert any(w.startswith("with K = 4 blocks") for w in warnings)


def test_the_note_quotes_the_measured_figures():
    """Its percentages are the 0-1 section's, rounded: naive_folds and nadeau_bengio at K = 3, 5."""
    text = (RESULTS / "small_k_quantile.md").read_text(encoding="utf-8")
    section = text[text.index("## 0-1 losses") :]
    coverage = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("| ") and cells[0].isdigit():
            coverage[int(cells[0]), cells[1].strip("`")] = float(cells[3].split(" ")[0])
    note = few_blocks_note("score", FEW_BLOCKS, ["naive_folds"])
    folds = [round(coverage[k, "naive_folds"]) for k in (3, 5)]
    nb = [round(coverage[k, "nadeau_bengio"]) for k in (3, 5)]
    assert f"naive_folds {folds[0]} and {folds[1]} %" in note
    assert f"held up ({nb[0]} and {nb[1]} %)" in note
    assert FEW_BLOCKS == 5  # the largest K measured
