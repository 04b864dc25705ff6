"""The page docs/shift.md: its examples run and print what the page shows."""

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "shift.md"


def blocks(text):
    """Python blocks, each with the text block that follows it (its printed output)."""
    return re.findall(r"```python\n(.*?)\n```\s*```text\n(.*?)\n```", text, flags=re.S)


def normalize(text):
    return [line.split() for line in text.strip().splitlines()]


def test_every_python_block_is_followed_by_its_output():
    text = DOC.read_text(encoding="utf-8")
    assert len(blocks(text)) == text.count("```python") == 4


def test_examples_run_and_print_what_the_page_shows():
    namespace = {}
    for code, shown in blocks(DOC.read_text(encoding="utf-8")):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(DOC), "exec"), namespace)
        assert normalize(out.getvalue()) == normalize(shown), code
    # The claims around the first example: plain CV reports 0.48, below the control-variate
    # interval; the control variate almost halves the variance.
    ds = namespace["ds"]
    assert ds.attrs["source_risk"] < ds["lower"].sel(method_name="iw_control_variate").item()
    assert ds.attrs["variance_ratio"] == pytest.approx(0.54, abs=0.005)


def test_figure_and_links_exist():
    text = DOC.read_text(encoding="utf-8")
    (image,) = re.findall(r"\]\((\.\./benchmarks/results/[^)]+\.png)\)", text)
    assert (DOC.parent / image).resolve().is_file()
