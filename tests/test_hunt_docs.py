"""What the documentation shows a new user, held against the package and the benchmark files.

Found by reading the docs as a new user and running their examples: block-level intervals
computed silently on pointwise-elpd tables whose blocks are arbitrary pairs of points, speed-ups
quoted differently from the benchmark they cite, a docs index naming a file that does not
exist, internal note and issue numbers in user-facing pages, and an accuracy gap misquoted.
"""

import re
from pathlib import Path

import numpy as np
import pytest

import bayescv
from bayescv.losses import from_elpd, read_table, to_netcdf

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RESULTS = ROOT / "benchmarks" / "results"


def _pair_table(seed: int, n: int = 40):
    """Pointwise elpd of PSIS-LOO as the getting-started page builds it: blocks are pairs."""
    return from_elpd(np.random.default_rng(seed).normal(-1.0, 0.5, n), blocks="pairs")


# --- pointwise elpd paired by from_elpd(blocks="pairs") --------------------------------------


def test_cv_intervals_on_point_pairs_gives_naive_points_alone():
    """The pairs are not folds (docs/getting-started.md: "for point-level methods such as
    naive_points only"), so the default and "all" must not read them as folds; before, ten
    rows came back, θ_4 and bayle_within with a standard error 27 % below the naive one. The
    one row left is the naive interval, whose se is sqrt(var(e, ddof=1)/N) exactly (Bates,
    Hastie & Tibshirani 2024, eq. 5)."""
    table = _pair_table(0)
    loss = table["loss"].values
    for methods in (None, "all"):
        ci = bayescv.cv_intervals(table, methods)
        assert ci["method_name"].values.tolist() == ["naive_points"]
        assert ci["se"].item() == pytest.approx(np.sqrt(loss.var(ddof=1) / loss.size), rel=1e-12)
    # the paired comparison goes through the same door, on the differences of two pair tables
    paired = bayescv.paired_comparison(table, _pair_table(1))
    assert paired["method_name"].values.tolist() == ["naive_points"]


@pytest.mark.parametrize("method", ["naive_folds", "theta_4", "bayle_within", "nadeau_bengio"])
def test_a_block_method_named_on_point_pairs_is_refused(method):
    """Asked for by name, a block-level method is refused with the way out, as
    compare_learners already refused it (docs/comparing.md); before, it was computed."""
    with pytest.raises(ValueError, match=r"consecutive pairs of points.*blocks=folds"):
        bayescv.cv_intervals(_pair_table(0), ["naive_points", method])


def test_a_pair_table_stored_before_block_kind_keeps_the_protection(tmp_path):
    """Files written before the `block_kind` attribute existed say "consecutive pairs" in the
    prose of `blocks`; compare_learners reads that, so cv_intervals must too."""
    table = _pair_table(2)
    table.attrs.pop("block_kind")
    path = tmp_path / "old.nc"
    to_netcdf(table, path)
    assert bayescv.cv_intervals(read_table(path))["method_name"].values.tolist() == [
        "naive_points"
    ]


def test_elpd_with_real_folds_keeps_every_method():
    """With the fold of every point (pointwise elpd from K-fold CV) the blocks are folds, and
    cv_intervals keeps its default methods for a random K-fold table."""
    values = np.random.default_rng(3).normal(-1.0, 0.5, 40)
    table = from_elpd(values, blocks=np.repeat(np.arange(5), 8))
    got = bayescv.cv_intervals(table)["method_name"].values.tolist()
    assert got == list(bayescv.classical.intervals.default_methods("random"))


# --- numbers and names the pages quote --------------------------------------------------------


def _speedups(path: Path) -> dict[tuple[str, int], float]:
    """{(learner, n): median speed-up} from a bench_batched results table."""
    rows = re.findall(
        r"^\| (ridge|logistic) \| (\d+) \| .*? \| ([\d.]+)x \|", path.read_text(), re.M
    )
    return {(learner, int(n)): float(x) for learner, n, x in rows}


def test_api_page_quotes_the_batched_speedups_of_its_benchmark():
    """docs/api.md quotes the speed-ups of benchmarks/results/bench_batched.md (n = 100) and of
    its glibc top_pad rerun (ridge, n = 1000); they said 130x, 32x and 15x -> 26x against the
    files' 134.4x, 30.9x and 13.5x -> 25.7x."""
    text = " ".join((DOCS / "api.md").read_text(encoding="utf-8").split())
    plain = _speedups(RESULTS / "bench_batched.md")
    padded = _speedups(RESULTS / "bench_batched_top_pad.md")
    ridge, logistic = round(plain[("ridge", 100)]), round(plain[("logistic", 100)])
    assert f"ridge about {ridge}×, logistic regression about {logistic}× the per-fit loop" in text
    before, after = plain[("ridge", 1000)], padded[("ridge", 1000)]
    assert f"(ridge at n = 1000: {before}× → {after}×)" in text
    assert "`benchmarks/results/bench_batched_top_pad.md`" in text


def test_docs_readme_lists_the_pages_and_files_that_exist():
    """docs/README.md, the map of the docs folder, named a `_readme_proposal.md` that is not
    there and left `comparing.md` out of the capability pages (the first column of its table: what
    the folder holds in git)."""
    text = (DOCS / "README.md").read_text(encoding="utf-8")
    # the first column of its table: the files and folders kept in git (the table's second
    # column also names the generated, git-ignored `notebooks/` and `api/`)
    first_cells = re.findall(r"^\| (.+?) \|", text, re.M)
    named = [name for cell in first_cells for name in re.findall(r"`([^`]+)`", cell)]
    missing = [name for name in named if not (DOCS / name).exists()]
    assert not missing, missing
    pages = {p.name for p in DOCS.glob("*.md")} - {"README.md"}
    assert pages <= set(named), sorted(pages - set(named))


def test_user_pages_cite_no_internal_note_or_issue_numbers():
    """DESIGN.md: the note numbers 000-004 are file names for the developers, never for users,
    and an issue number or "the issue" points to a tracker the reader cannot see. theory.md
    sent readers to '"000" in the docstrings', which no docstring uses."""
    pages = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    internal = re.compile(r'"00[0-4]"|\bissue \d+|\bthe issue\b|\bissue\'s\b', re.I)
    hits = [
        (page.name, match.group(0))
        for page in pages
        for match in internal.finditer(page.read_text(encoding="utf-8"))
    ]
    assert not hits, hits


def test_comparing_page_quotes_the_accuracy_gap_of_its_example():
    """docs/comparing.md: "The logistic regression is better by about N points of accuracy"
    for its 10 x 10-fold example on the breast-cancer data. Recomputed with scikit-learn alone
    (the mean over the 100 folds of the accuracy difference, the estimate the page's table
    shows negated), it is 5.75 points: about six, not five as the page said."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import RepeatedStratifiedKFold, cross_validate
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    X, y = load_breast_cancer(return_X_y=True)
    cv = RepeatedStratifiedKFold(n_splits=10, n_repeats=10, random_state=0)
    logistic = make_pipeline(StandardScaler(), LogisticRegression())
    tree = DecisionTreeClassifier(random_state=0)
    gap = np.mean(
        cross_validate(logistic, X, y, cv=cv)["test_score"]
        - cross_validate(tree, X, y, cv=cv)["test_score"]
    )
    words = {5: "five", 6: "six", 7: "seven"}
    text = " ".join((DOCS / "comparing.md").read_text(encoding="utf-8").split())
    assert f"better by about {words[round(100 * gap)]} points of accuracy" in text


def test_bayesian_fit_refuses_point_pairs():
    """The hierarchical model reads blocks as folds or sources; on a pair table it fitted the
    random K-fold model with 20 pairs as folds, silently. Refused with the way out (checked
    before any sampling, so the test costs no fit); the paired fit goes through the same
    door, its difference table keeping A's attributes."""
    pytest.importorskip("pymc")
    from bayescv.bayes import fit, paired_comparison

    with pytest.raises(ValueError, match=r"consecutive pairs of points.*blocks=folds"):
        fit(_pair_table(0))
    with pytest.raises(ValueError, match="consecutive pairs of points"):
        paired_comparison(_pair_table(0), _pair_table(1), rope=0.01)


def test_cli_variance_shows_no_block_quantity_on_point_pairs(tmp_path, capsys):
    """``bayescv variance`` printed θ_1 ... θ_gamma, se_folds and σ²_within for a pair table
    (only the interval table had been restricted). Now the JSON holds null for them with the
    reason among the warnings, and the text omits them; the naive se stays
    sqrt(var(e, ddof=1)/N)."""
    import json

    from bayescv.cli import main
    from bayescv.losses import to_csv

    table = _pair_table(0)
    path = tmp_path / "pairs.csv"
    to_csv(table, path)
    assert main(["variance", str(path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("theta_1", "theta_4", "theta_B", "theta_gamma", "se_folds", "sigma2_within"):
        assert out[key] is None, key
    loss = table["loss"].values
    assert out["se_points"] == pytest.approx(np.sqrt(loss.var(ddof=1) / loss.size), rel=1e-9)
    assert list(out["intervals"]) == ["naive_points"]
    assert any("consecutive pairs of points" in w for w in out["warnings"])
    assert main(["variance", str(path)]) == 0
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert "theta_4" not in rows
    assert "se_folds" not in rows
    assert "se_points" in rows
