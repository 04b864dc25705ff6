"""bayescv's on-disk cache of the numba log-density (:mod:`bayescv.bayes._cache`).

The process-level tests run in fresh interpreters (``subprocess``) with
``BAYESCV_CACHE_DIR`` pointing at a temporary directory, so they never touch the user's
cache. A cold process compiles the density for 10-25 s on a 2-core machine, so by default
the file runs two cold compiles (one fit that fills a cache, one process with the cache
off) and one warm process; two processes filling an empty cache at once are the slow test.
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bayescv.bayes import cache_dir, clear_cache
from bayescv.bayes._cache import cache_enabled

#: A short fit with the default sampler in a fresh process; prints one JSON line: the
#: sampler, the intervals and what numba loaded from its cache.
FIT_SCRIPT = """
import json, warnings
from bayescv.bayes import SamplingWarning, fit, posterior_intervals
from bayescv.bayes.simulate import simulate_losses

table = simulate_losses(
    [30, 25, 20, 35], mu=[0.3, 0.4, 0.2, 0.5], nu=0.5, gamma_sd=0.05, rho=0.2,
    scheme="random", random_state=0,
)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", SamplingWarning)  # short chains
    idata = fit(table, draws=100, tune=100, chains=2, random_state=0)
ci = posterior_intervals(idata)
report = {
    "sampler": idata.sample_stats.attrs["sampler"],
    "compile_seconds": idata.sample_stats.attrs["compile_seconds"],
    "lower": ci["lower"].values.tolist(),
    "estimate": ci["estimate"].values.tolist(),
    "upper": ci["upper"].values.tolist(),
}
if report["sampler"] == "nutpie":
    from bayescv.bayes import _density

    compiled = _density.callbacks()
    report["cfunc_cache_hits"] = {
        name: int(compiled[name].cache_hits) for name in ("logp", "expand")
    }
    report["dispatcher_cache_hits"] = sum(_density.logp_and_grad.stats.cache_hits.values())
print(json.dumps(report))
"""


def _env(cache, **extra):
    env = {k: v for k, v in os.environ.items() if k not in ("BAYESCV_NO_CACHE",)}
    env["BAYESCV_CACHE_DIR"] = str(cache)
    env.update(extra)
    return env


def _start(cache, **extra):
    return subprocess.Popen(
        [sys.executable, "-c", FIT_SCRIPT],
        env=_env(cache, **extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc, timeout=600):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the fit process timed out:\n{err}")
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err
    report = json.loads(out.strip().splitlines()[-1])
    assert report["lower"]
    for lo, est, hi in zip(report["lower"], report["estimate"], report["upper"], strict=True):
        assert math.isfinite(lo)
        assert math.isfinite(hi)
        assert lo < est < hi
    return report


def _cache_files(root):
    """Numba's index (.nbi) and data (.nbc) files under bayescv's numba directories."""
    return sorted(
        p for d in Path(root).glob("numba-*") for p in d.rglob("*") if p.suffix in (".nbi", ".nbc")
    )


# --- the functions, in this process ----------------------------------------------------------


def test_cache_dir_honours_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("BAYESCV_CACHE_DIR", str(tmp_path / "here"))
    assert cache_dir() == tmp_path / "here"
    monkeypatch.setenv("BAYESCV_CACHE_DIR", "~/some/where")
    assert cache_dir() == Path.home() / "some" / "where"
    import platformdirs

    default = Path(platformdirs.user_cache_dir("bayescv", appauthor=False))
    monkeypatch.setenv("BAYESCV_CACHE_DIR", "  ")  # blank: the default
    assert cache_dir() == default
    monkeypatch.delenv("BAYESCV_CACHE_DIR")
    assert cache_dir() == default
    assert cache_dir().name == "bayescv"


@pytest.mark.parametrize(
    ("value", "enabled"), [(None, True), ("", True), ("0", True), ("1", False), ("yes", False)]
)
def test_cache_enabled_reads_bayescv_no_cache(monkeypatch, value, enabled):
    if value is None:
        monkeypatch.delenv("BAYESCV_NO_CACHE", raising=False)
    else:
        monkeypatch.setenv("BAYESCV_NO_CACHE", value)
    assert cache_enabled() is enabled


def test_clear_cache_deletes_every_file_and_counts_them(monkeypatch, tmp_path):
    root = tmp_path / "cache"
    monkeypatch.setenv("BAYESCV_CACHE_DIR", str(root))
    assert clear_cache() == 0  # no directory yet
    files = [
        root / "numba-0.1-bayescv-0.0" / "sub" / "f.nbi",
        root / "numba-0.1-bayescv-0.0" / "sub" / "f.1.nbc",
        root / "numba-0.2-bayescv-0.1" / "g.nbi",
        root / "notes.txt",
    ]
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    assert clear_cache() == len(files)
    assert root.is_dir()
    assert list(root.iterdir()) == []
    assert clear_cache() == 0
    # Nothing outside the cache directory is touched.
    assert tmp_path.is_dir()


# --- fresh processes ---------------------------------------------------------------------------

#: The density and the C callbacks compiled (or loaded) without a fit; prints one JSON line.
COMPILE_SCRIPT = """
import json
import numpy as np
from bayescv.bayes import _density
from bayescv.bayes._stats import collapse
from bayescv.bayes.model import model_data
from bayescv.bayes.simulate import simulate_losses

table = simulate_losses([5, 6, 7], mu=0.0, nu=1.0, gamma_sd=0.1, rho=0.0, random_state=0)
vec, scal, scatter = _density.pack(model_data(collapse(table)))
value, _ = _density.logp_and_grad(np.zeros(9), True, vec, scal, scatter)
compiled = _density.callbacks()
print(json.dumps({
    "finite": bool(np.isfinite(value)),
    "cfunc_cache_hits": {name: int(compiled[name].cache_hits) for name in ("logp", "expand")},
}))
"""


@pytest.fixture(scope="module")
def nutpie_installed():
    pytest.importorskip("numba")
    pytest.importorskip("nutpie")


@pytest.fixture(scope="module")
def filled_cache(tmp_path_factory, nutpie_installed):
    """A cache directory filled by one fit (a cold process)."""
    root = tmp_path_factory.mktemp("bayescv_cache")
    return root, _finish(_start(root))


def test_a_fit_writes_numba_cache_files_there(filled_cache):
    root, report = filled_cache
    assert report["sampler"] == "nutpie"
    assert report["cfunc_cache_hits"] == {"logp": 0, "expand": 0}  # compiled, not loaded
    files = _cache_files(root)
    assert {p.suffix for p in files} == {".nbi", ".nbc"}, files
    names = " ".join(p.name for p in files)
    for function in ("_logp_callback", "_expand_callback"):
        assert function in names
    # Every file bayescv wrote is in its numba directory.
    assert {p for p in root.rglob("*") if p.is_file()} == set(files)


def test_a_later_process_loads_from_the_cache(filled_cache):
    root, cold = filled_cache
    before = {p: p.stat().st_mtime_ns for p in _cache_files(root)}
    report = _finish(_start(root))
    # The C callbacks nutpie calls were loaded, not compiled (numba counts the loads) ...
    assert report["cfunc_cache_hits"] == {"logp": 1, "expand": 1}
    # ... and nothing was written: the same files, untouched.
    assert {p: p.stat().st_mtime_ns for p in _cache_files(root)} == before
    # The same seed gives the same draws whether the code was compiled or loaded.
    assert report["estimate"] == cold["estimate"]


def test_no_cache_writes_nothing(tmp_path):
    pytest.importorskip("numba")
    # With the cache off, numba compiles in memory: nothing in bayescv's directory, and no
    # fall-through to numba's own cache directory either.
    root, numba_default = tmp_path / "cache", tmp_path / "numba_default"
    env = _env(root, BAYESCV_NO_CACHE="1", NUMBA_CACHE_DIR=str(numba_default))
    proc = subprocess.run(
        [sys.executable, "-c", COMPILE_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["finite"]
    assert report["cfunc_cache_hits"] == {"logp": 0, "expand": 0}
    assert not root.exists() or not any(root.rglob("*"))
    assert not numba_default.exists() or not any(numba_default.rglob("*"))


@pytest.mark.slow
def test_concurrent_processes_fill_an_empty_cache(tmp_path, nutpie_installed):
    # A study's workers start at once on an empty cache: numba writes each entry under a
    # temporary name and renames it, so both compile and succeed, whichever renames last,
    # and the cache they leave serves a later process. (Two more cold compiles: slow.)
    root = tmp_path / "cache"
    procs = [_start(root) for _ in range(2)]
    reports = [_finish(proc) for proc in procs]
    for report in reports:
        assert report["sampler"] == "nutpie"
    assert reports[0]["estimate"] == reports[1]["estimate"]
    assert {p.suffix for p in _cache_files(root)} == {".nbi", ".nbc"}
    later = _finish(_start(root))
    assert later["cfunc_cache_hits"] == {"logp": 1, "expand": 1}
    assert later["estimate"] == reports[0]["estimate"]


def test_an_unwritable_cache_directory_warns_once_and_compiles_in_memory(tmp_path):
    # BAYESCV_CACHE_DIR names a file: nothing can be written under it. The fit must still
    # work (compiled in memory), after one RuntimeWarning naming the directory.
    pytest.importorskip("nutpie")
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    code = (
        "import warnings, numpy as np\n"
        "from bayescv.losses import from_arrays\n"
        "from bayescv.bayes import fit, posterior_intervals\n"
        "b = np.repeat(np.arange(4), 20)\n"
        "t = from_arrays(np.random.default_rng(0).normal(1, 0.3, 80) + 0.1 * b, b,"
        " scheme='source')\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    ci = posterior_intervals(fit(t, draws=100, tune=100, chains=2, random_state=0))\n"
        "mine = [str(w.message) for w in caught if 'cannot write its cache' in str(w.message)]\n"
        "print(len(mine), bool(np.isfinite(ci['lower'].values).all()))\n"
    )
    env = {**os.environ, "BAYESCV_CACHE_DIR": str(blocker)}
    env.pop("BAYESCV_NO_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "True"]
