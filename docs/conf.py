"""Sphinx configuration of the bayescv documentation.

Build with ``sphinx-build -W -b html docs docs/_build/html`` (warnings are errors). The
tutorial notebooks live in ``../notebooks`` (stored without outputs); they are copied into
``docs/notebooks/`` (ignored by git) and executed by myst-nb during the build. Set
``BAYESCV_DOCS_EXECUTE=off`` for a quick build without executing them, or ``force`` to
re-execute every notebook (the default, ``cache``, re-executes only changed notebooks).
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import bayescv

HERE = Path(__file__).resolve().parent
NOTEBOOKS = HERE.parent / "notebooks"

# -- Project -------------------------------------------------------------------------------

project = "bayescv"
author = "bayescv developers"
copyright = f"{date.today().year}, {author}"
release = bayescv.__version__
version = ".".join(release.split(".")[:2])

# -- General -------------------------------------------------------------------------------

extensions = [
    "myst_nb",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx_design",
]
templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "README.md",
    "_readme_proposal.md",
    "Thumbs.db",
    ".DS_Store",
    "**.ipynb_checkpoints",
    "jupyter_execute",
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
default_role = "code"
# The closed-form docstrings write sums as Σ and formulas in plain text: keep quotes as typed.
smartquotes = False
# Figures in benchmarks/results are referenced from the pages with relative paths.
suppress_warnings: list[str] = []

# -- autodoc, autosummary, numpydoc ------------------------------------------------------

autosummary_generate = True
autosummary_ignore_module_all = False  # list what each module's __all__ exports
autosummary_imported_members = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc "Parameters" sections carry the types
autodoc_preserve_defaults = True
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = False
numpydoc_xref_param_type = False

# -- MyST and myst-nb ---------------------------------------------------------------------

myst_enable_extensions = ["colon_fence", "dollarmath", "amsmath", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = os.environ.get("BAYESCV_DOCS_EXECUTE", "cache")
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_excludepatterns: list[str] = []
nb_merge_streams = True
nb_render_image_options = {"align": "center"}

# -- HTML ----------------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"bayescv {release}"
html_static_path = ["_static"]
html_css_files = ["bayescv.css"]
html_show_sourcelink = False
html_theme_options = {
    "github_url": "https://github.com/bayescv/bayescv",
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "header_links_before_dropdown": 6,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {
    "getting-started": [],
    "theory": [],
    "references": [],
    "notebooks/*": [],  # the tutorials page and the prev/next links navigate
}
html_context = {"default_mode": "light"}


# -- Notebooks: copy ../notebooks into the source tree ------------------------------------


def copy_notebooks() -> None:
    """Mirror ``notebooks/*.ipynb`` into ``docs/notebooks`` (only files that changed)."""
    target = HERE / "notebooks"
    target.mkdir(exist_ok=True)
    wanted = {path.name for path in NOTEBOOKS.glob("*.ipynb")}
    for stale in target.glob("*.ipynb"):
        if stale.name not in wanted:
            stale.unlink()
    for name in sorted(wanted):
        source, copy = NOTEBOOKS / name, target / name
        if not copy.exists() or copy.read_bytes() != source.read_bytes():
            shutil.copyfile(source, copy)


copy_notebooks()


# -- Links to re-exported names -----------------------------------------------------------
#
# Pages and docstrings write ``bayescv.cross_val_losses``; the API reference documents the
# function once, under the module that defines it for the user (``bayescv.cv``). This
# resolver sends a reference to any public alias of a documented object to its page.

DOCUMENTED_MODULES = (
    "bayescv.cv",
    "bayescv.losses",
    "bayescv.cv.loss_functions",
    "bayescv.moments",
    "bayescv.classical.estimators",
    "bayescv.classical.quadratic",
    "bayescv.classical.expectations",
    "bayescv.classical",
    "bayescv.classical.paired",
    "bayescv.intervals",
    "bayescv.nested",
    "bayescv.cv.learners",
    "bayescv.bayes",
    "bayescv.shift",
    "bayescv.compare",
    "bayescv.compare.plots",
    "bayescv.datasets",
    "bayescv.plots",
)


def _documented_names() -> dict[int, str]:
    names: dict[int, str] = {}
    for modname in DOCUMENTED_MODULES:
        try:
            module = importlib.import_module(modname)
        except ImportError:  # an optional subpackage that is not installed
            continue
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if callable(obj) or isinstance(obj, type):
                names.setdefault(id(obj), f"{modname}.{name}")
    return names


_CANONICAL = _documented_names()


def _lookup(target: str) -> Any:
    parts = target.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for attr in parts[split:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def resolve_alias(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """Resolve ``bayescv.<alias>`` references to the documented name of the same object."""
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    if not target.startswith("bayescv."):
        return None
    documented = _CANONICAL.get(id(_lookup(target)))
    if documented is None or documented == target:
        return None
    domain = env.get_domain("py")
    return domain.resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], documented, node, contnode
    )


# -- Docstring touch-ups ---------------------------------------------------------------------

# autosummary ends a summary at the first ". " it finds, so "(Bates eq. 9)" would be cut
# after "eq.". A word joiner (invisible) after such abbreviations in the first line keeps
# the summary whole.
_ABBREVIATION = re.compile(r"\b(eq|eqs|Eq|Prop|Fig|Sec|al|cf|e\.g|i\.e|vs)\. ")


def protect_abbreviations(
    app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]
):
    """Keep abbreviations in a docstring's first paragraph from ending its autosummary entry."""
    started = False
    for i, line in enumerate(lines):
        if not line.strip():
            if started:
                break
            continue
        started = True
        lines[i] = _ABBREVIATION.sub("\\1.\u2060 ", line)


def drop_object_base(app: Any, name: str, obj: Any, options: Any, bases: list[type]) -> None:
    """Do not print "Bases: object" for classes without a parent."""
    if bases == [object]:
        bases.clear()


def setup(app: Any) -> dict[str, Any]:
    """Register the alias resolver and the docstring touch-ups."""
    app.connect("missing-reference", resolve_alias)
    app.connect("autodoc-process-docstring", protect_abbreviations)
    app.connect("autodoc-process-bases", drop_object_base)
    return {"parallel_read_safe": True}
