"""The documentation sources: notebooks listed and stored clean, every public name in the API page.

Fast checks that need neither Sphinx nor a kernel; the docs build itself (which executes the
notebooks) runs in CI with ``sphinx-build -W``.
"""

import json
import re
from pathlib import Path

import pytest

import bayescv

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
TUTORIALS = ["01_quickstart", "02_bayesian_model", "03_comparing_learners",
             "04_coverage_study", "05_covariate_shift"]  # fmt: skip


def toctree_entries(page: Path) -> list[str]:
    """Entries of the MyST toctree directives of a page (explicit titles removed)."""
    entries = []
    for body in re.findall(r"```\{toctree\}\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
        for line in body.splitlines():
            line = line.strip()
            if line and not line.startswith(":"):
                match = re.fullmatch(r".*<(.+)>", line)
                entries.append(match.group(1) if match else line)
    return entries


def test_every_tutorial_exists_and_is_in_the_toctree():
    assert [path.stem for path in NOTEBOOKS] == TUTORIALS
    listed = toctree_entries(DOCS / "tutorials.md")
    assert listed == [f"notebooks/{name}" for name in TUTORIALS]


def test_every_capability_page_is_in_the_user_guide():
    listed = toctree_entries(DOCS / "user-guide.md")
    assert listed == ["estimators", "nested", "bayes", "shift", "comparing", "compare"]
    for name in listed:
        assert (DOCS / f"{name}.md").is_file(), name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_are_stored_without_outputs(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert code, "a notebook without code"
    for cell in code:
        assert cell["outputs"] == [], cell["source"]
        assert cell["execution_count"] is None
    first = notebook["cells"][0]
    assert first["cell_type"] == "markdown"
    assert "".join(first["source"]).startswith("# "), "the first cell is the title"


def test_every_top_level_name_is_in_the_api_page():
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    missing = [
        name for name in bayescv.__all__ if f".{name}`" not in text and name != "__version__"
    ]
    assert not missing, f"add to docs/api.md: {missing}"
    assert "bayescv.__version__" in text


def test_api_page_lists_every_public_module():
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"\.\. autosummary::\n(.*?)```", text, re.S)
    modules = [line.strip() for line in block.splitlines() if line.strip().startswith("bayescv")]
    package = ROOT / "bayescv"
    public = {
        f"bayescv.{path.stem}" for path in package.glob("*.py") if not path.stem.startswith("_")
    } | {f"bayescv.{path.parent.name}" for path in package.glob("*/__init__.py")}
    public -= {"bayescv.cli"}  # the command line is documented by `bayescv --help`
    assert public <= set(modules), f"add to docs/api.md: {sorted(public - set(modules))}"
