"""A store does not resume a study after the code of one of its user methods changed.

Resuming would mix intervals of the old code (the stored replicates) with those of the new
one. The store records a fingerprint of each user method's syntax tree: a change of what it
computes is refused, a change of comments or layout is not, and a method whose source Python
cannot read (as in ``python -c``) is not fingerprinted, as before.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap

import pytest

from bayescv.compare import BatesLogistic, Method, register_method, run_study, unregister_method
from bayescv.compare._settings import method_fingerprint

TINY = BatesLogistic(n=40, p=3, n_splits=4)

METHOD = """
from bayescv.intervals import interval_dataset


def width(context, names):
    # a fixed interval around one half
    return interval_dataset(names, estimate=[0.5], lower=[0.5 - {half}], upper=[0.5 + {half}],
                            se=[0.05], level=context.level, target="err")
"""


def _load(tmp_path, name: str, source: str):
    """Import `source` as module `name` from a file, as a user's own module would be."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.width


def _run(func, store, n_replicates):
    register_method(Method("width", func, "err"), replace=True)
    try:
        return run_study(TINY, methods=["naive_points", "width"], n_replicates=n_replicates,
                         random_state=3, store=store)  # fmt: skip
    finally:
        unregister_method("width")


def test_fingerprint_ignores_comments_and_layout_not_code(tmp_path):
    original = _load(tmp_path, "width_a", METHOD.format(half=0.1))
    commented = _load(
        tmp_path, "width_b", METHOD.format(half=0.1).replace("# a fixed", "# an unchanged")
    )
    reindented = _load(tmp_path, "width_c", "\n\n" + METHOD.format(half="0.1"))
    edited = _load(tmp_path, "width_d", METHOD.format(half=0.2))
    assert method_fingerprint(original) == method_fingerprint(commented)
    assert method_fingerprint(original) == method_fingerprint(reindented)
    assert method_fingerprint(original) != method_fingerprint(edited)


def test_resuming_after_the_method_changed_is_refused(tmp_path):
    store = tmp_path / "study.nc"
    _run(_load(tmp_path, "first", METHOD.format(half=0.1)), store, 2)
    edited = _load(tmp_path, "second", METHOD.format(half=0.2))
    with pytest.raises(ValueError, match=r"the code of method\(s\) \['width'\] changed"):
        _run(edited, store, 3)
    # The same code under a comment change resumes: the two stored replicates are read.
    same = _load(tmp_path, "third", METHOD.format(half=0.1).replace("# a fixed", "# still"))
    assert _run(same, store, 3).attrs["replicates_loaded"] == 2


def test_package_methods_and_unreadable_sources_record_no_fingerprint(tmp_path):
    store = tmp_path / "builtin.nc"
    run_study(TINY, methods=["naive_points"], n_replicates=2, random_state=3, store=store)
    from bayescv.compare._store import StudyStore

    assert "method_code" not in StudyStore(store).stored_settings()
    namespace = {}
    exec(compile(textwrap.dedent(METHOD.format(half=0.1)), "<string>", "exec"), namespace)
    assert method_fingerprint(namespace["width"]) is None  # as for python -c
    store = tmp_path / "unreadable.nc"
    _run(namespace["width"], store, 2)
    settings = json.loads(json.dumps(StudyStore(store).stored_settings()))
    assert "method_code" not in settings
    # Resumed with a readable version of it: nothing to compare against, so it resumes.
    readable = _load(tmp_path, "readable", METHOD.format(half=0.1))
    assert _run(readable, store, 3).attrs["replicates_loaded"] == 2
