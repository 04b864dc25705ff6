"""The documentation read and run as a new user would (docs pass, round 41).

Each test holds one defect found by reading a page or running its example in a fresh
process; each failed on the code and docs before the fix.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import bayescv

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def api_section(title: str) -> str:
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    return text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_api_top_level_table_shows_short_names_only_for_top_level_names():
    """A name rendered short (``~``) under "The top-level namespace" reads as ``bayescv.name``.

    ``bayescv.losses_on_folds``, ``bayescv.tail_shape`` or ``bayescv.UnshuffledFoldsWarning``
    (to filter it) raised AttributeError: the table showed them as bare names beside the
    top-level ones. Those that live only in their module are written out in full.
    """
    section = api_section("The top-level namespace")
    refs = re.findall(r"\{(?:func|class|data)\}`(~?)([\w.]+)`", section)
    assert len(refs) > 40
    short = [name for tilde, name in refs if tilde]
    full = [name for tilde, name in refs if not tilde]
    assert [n for n in short if n.rsplit(".", 1)[1] not in bayescv.__all__] == []
    assert {"bayescv.cv.losses_on_folds", "bayescv.tails.tail_shape"} <= set(full)
    assert [n for n in full if n.rsplit(".", 1)[1] in bayescv.__all__] == []


def test_api_page_names_every_subpackage_attribute():
    """The sentence listing the subpackages left out two of ``bayescv.__all__``."""
    section = " ".join(api_section("The top-level namespace").split())
    sentence = section.split("The subpackages are attributes too:", 1)[1].split(". ")[0]
    modules = [n for n in bayescv.__all__ if type(getattr(bayescv, n)).__name__ == "module"]
    assert len(modules) >= 9
    assert [m for m in modules if f"`bayescv.{m}`" not in sentence] == []


def notebook_markdown(name: str) -> str:
    cells = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return " ".join(text.split())


def test_coverage_notebook_says_what_its_three_studies_show():
    """Notebook 04 said θ_A under-covers ``expected_cv`` at every M; at M = 100 it covers 95.5%.

    The three studies are the notebook's own (same scenario, methods, replicates and seeds;
    results do not depend on ``n_jobs``). Reference: nominal coverage 0.95; the relative size
    of the between-block terms is (ω term + γ term) / θ of ``decompose``.
    """
    from bayescv.compare import MultiSourceLinear, decompose, run_study, summarize

    coverage, between = {}, {}
    for m in (10, 30, 100):
        study = run_study(
            MultiSourceLinear(n_sources=10, points_per_source=m),
            methods=["naive_points", "theta_gamma", "theta_A", "theta_B"],
            n_replicates=200,
            random_state=1,
            n_jobs=1,
        )
        covered = summarize(study)["coverage"].sel(target="expected_cv")
        names = covered.method_name.values.tolist()
        coverage[m] = dict(zip(names, covered.values.tolist(), strict=True))
        parts = decompose(study)
        between[m] = float((parts["omega_term"] + parts["gamma_term"]) / parts["theta"])
    assert all(coverage[m]["naive_points"] < 0.95 for m in coverage)
    # θ_A: short of 95 % at M = 10 and 30 by less than two Monte Carlo standard errors
    # (sqrt(0.95 * 0.05 / 200) = 1.5 points), above it at M = 100: the figures the text quotes.
    mc_se = (0.95 * 0.05 / 200) ** 0.5
    for m in (10, 30):
        assert 0.95 - 2 * mc_se < coverage[m]["theta_A"] < 0.95
    assert coverage[100]["theta_A"] >= 0.95
    quoted = [f"{100 * coverage[m]['theta_A']:.1f}%" for m in (10, 30, 100)]
    assert all(coverage[m]["theta_B"] > 0.95 for m in coverage)
    assert coverage[10]["theta_gamma"] < 0.95 < coverage[100]["theta_gamma"]
    assert between[10] > between[30] > between[100] > 0.1  # "not negligible", "smallest"
    text = notebook_markdown("04_coverage_study.ipynb")
    assert "the naive interval and θ_A, which leave them out, under-cover at every M" not in text
    assert (
        f"θ_A, which leaves them out too, covers {quoted[0]} and {quoted[1]} at M = 10 and 30, "
        f"short of 95% by less than the Monte Carlo error bars, and {quoted[2]} at M = 100" in text
    )


def test_docs_readme_names_every_page_whose_code_the_build_executes():
    """docs/README.md named two of the three pages executed by myst-nb (not comparing.md)."""
    executed = sorted(
        p.name for p in DOCS.glob("*.md") if "file_format: mystnb" in p.read_text(encoding="utf-8")
    )
    assert len(executed) >= 3
    readme = " ".join((DOCS / "README.md").read_text(encoding="utf-8").split())
    sentence = readme.split("executes every notebook and the code cells of", 1)[1].split("(")[0]
    assert [name for name in executed if f"`{name}`" not in sentence] == []


def test_getting_started_names_every_optional_part():
    """The install section named `bayes`, `dask`, `data` and `all`, not `bayes-fast`.

    Reference: ``[project.optional-dependencies]`` of pyproject.toml, less the developer
    extras (``test``, ``docs``, ``dev``).
    """
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = set(project["optional-dependencies"]) - {"test", "docs", "dev"}
    assert {"bayes", "bayes-fast", "all"} <= extras
    page = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    section = " ".join(page.split("The optional parts are", 1)[1].split("### ", 1)[0].split())
    assert sorted(e for e in extras if f"`{e}`" not in section) == []
