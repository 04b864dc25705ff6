import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import xarray as xr

from bayescv._provenance import child_seeds
from bayescv.compare import (
    TIMING_VARIABLES,
    BatesLogistic,
    Method,
    load_study,
    register_method,
    run_study,
    unregister_method,
)
from bayescv.compare._store import StoreInUseError, StudyStore, _host_tag
from bayescv.intervals import interval_dataset

TINY = BatesLogistic(n=40, p=3, n_splits=4)
METHODS = ["naive_points", "theta_3"]


def drop_timing(ds: xr.Dataset) -> xr.Dataset:
    return ds.drop_vars(list(TIMING_VARIABLES))


# A study slowed down by a method that sleeps, so that the kill lands mid-run.
SCRIPT = textwrap.dedent(
    """
    import sys, time
    from bayescv.compare import BatesLogistic, Method, register_method, run_study
    from bayescv.intervals import interval_dataset

    def slow(context, names):
        time.sleep(0.03)
        return interval_dataset(names, estimate=[0.5], lower=[0.4], upper=[0.6], se=[0.05],
                                level=context.level, target="err")

    register_method(Method("slow", slow, "err"))
    run_study(BatesLogistic(n=40, p=3, n_splits=4), methods=["naive_points", "slow"],
              n_replicates=int(sys.argv[2]), random_state=5, store=sys.argv[1],
              flush_interval=0, n_jobs=1)
    """
)


def slow(context, names):
    """The same method as the script's (the settings record names, not code)."""
    time.sleep(0.03)
    return interval_dataset(names, estimate=[0.5], lower=[0.4], upper=[0.6], se=[0.05],
                            level=context.level, target="err")  # fmt: skip


def test_resume_after_kill_loses_and_repeats_nothing(tmp_path):
    # Run in a subprocess, SIGKILL it once a few replicates are stored, run again with the
    # same store: the result equals an uninterrupted run, every replicate exactly once,
    # and the stored ones are loaded, not recomputed.
    store = tmp_path / "study.nc"
    n = 24
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(store), str(n)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    parts = tmp_path / "study.nc.parts"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if len(list(parts.glob("part-*.nc"))) >= 3:
            break
        time.sleep(0.01)
    assert proc.poll() is None, f"the study ended before it could be killed: {proc.stderr.read()}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    assert not store.exists()
    stored = {
        int(i) for p in parts.glob("part-*.nc") for i in xr.load_dataset(p)["replicate"].values
    }
    assert 3 <= len(stored) < n
    # a torn write of the killed process: removed on finishing (its writer is dead)
    torn = parts / f".part-000000999-deadbeef.nc.{_host_tag()}-{proc.pid}-deadbeef.tmp"
    torn.write_bytes(b"half a file")

    register_method(Method("slow", slow, "err"))
    try:
        resumed = run_study(TINY, methods=["naive_points", "slow"], n_replicates=n,
                            random_state=5, store=store)  # fmt: skip
        fresh = run_study(TINY, methods=["naive_points", "slow"], n_replicates=n, random_state=5)
    finally:
        unregister_method("slow")
    assert resumed.attrs["replicates_loaded"] == len(stored)
    np.testing.assert_array_equal(resumed["replicate"], np.arange(n))
    xr.testing.assert_equal(drop_timing(resumed), drop_timing(fresh))
    assert store.exists()
    assert not parts.exists()
    xr.testing.assert_equal(load_study(store), resumed)


def test_store_extends_and_serves_fewer(tmp_path):
    store = tmp_path / "s.nc"
    first = run_study(TINY, methods=METHODS, n_replicates=3, random_state=2, store=store)
    assert first.attrs["replicates_loaded"] == 0
    assert store.exists()
    more = run_study(TINY, methods=METHODS, n_replicates=5, random_state=2, store=store)
    assert more.attrs["replicates_loaded"] == 3
    fresh = run_study(TINY, methods=METHODS, n_replicates=5, random_state=2)
    xr.testing.assert_equal(drop_timing(more), drop_timing(fresh))
    fewer = run_study(TINY, methods=METHODS, n_replicates=2, random_state=2, store=store)
    xr.testing.assert_equal(fewer, more.isel(replicate=slice(0, 2)))
    assert load_study(store).sizes["replicate"] == 5
    # a store remembers its seed
    again = run_study(TINY, methods=METHODS, n_replicates=5, random_state=None, store=store)
    assert again.attrs["seed"] == 2
    assert again.attrs["replicates_loaded"] == 5


def test_store_refuses_other_settings(tmp_path):
    store = tmp_path / "s.nc"
    run_study(TINY, methods=METHODS, n_replicates=2, random_state=2, store=store)
    with pytest.raises(ValueError, match=r"other settings \(level\)"):
        run_study(TINY, methods=METHODS, n_replicates=2, random_state=2, store=store, level=0.8)
    with pytest.raises(ValueError, match=r"other settings \(.*scenario_hash.*\)"):
        run_study(BatesLogistic(n=41, p=3, n_splits=4), methods=METHODS, n_replicates=2,
                  random_state=2, store=store)  # fmt: skip


def _old_layout_study(path):
    """A tiny study as bayescv wrote it before 1.0: dim ``method``, no ``store_format``."""
    settings = {"scenario": "bates-logistic", "level": 0.9, "seed": 2, "methods": METHODS}
    ds = xr.Dataset(
        {"estimate": (("replicate", "method"), np.full((2, 2), 0.3))},
        coords={"replicate": [0, 1], "method": METHODS},
        attrs={"settings": json.dumps(settings)},
    )
    ds.to_netcdf(path, engine="h5netcdf")
    return settings


OLD = r"^\S+ holds a study written before store format 1 \(dimension 'method', now 'method_name'"


def test_a_store_written_before_1_0_is_refused_in_one_line(tmp_path):
    store = tmp_path / "old.nc"
    _old_layout_study(store)
    with pytest.raises(ValueError, match=OLD) as loading:
        load_study(store)
    assert "\n" not in str(loading.value)
    assert "run the study again" in str(loading.value)
    with pytest.raises(ValueError, match=OLD):  # not "other settings (level, scenario_hash...)"
        run_study(TINY, methods=METHODS, n_replicates=3, random_state=2, store=store)
    # an unfinished old store: its manifest has no store_format
    unfinished = tmp_path / "unfinished.nc"
    parts = tmp_path / "unfinished.nc.parts"
    parts.mkdir()
    (parts / "manifest.json").write_text(json.dumps(_old_layout_study(tmp_path / "x.nc")))
    with pytest.raises(ValueError, match=r"manifest\.json holds a study written before"):
        run_study(TINY, methods=METHODS, n_replicates=3, random_state=2, store=unfinished)


def test_a_store_of_another_format_is_refused(tmp_path):
    store = tmp_path / "s.nc"
    study = run_study(TINY, methods=METHODS, n_replicates=2, random_state=2)
    assert json.loads(study.attrs["settings"])["store_format"] == 1
    settings = {**json.loads(study.attrs["settings"]), "store_format": 99}
    study.assign_attrs(settings=json.dumps(settings)).to_netcdf(store, engine="h5netcdf")
    with pytest.raises(ValueError, match="store format 99, this bayescv reads format 1"):
        load_study(store)


def test_the_settings_hash_ignores_where_the_scenario_class_lives(monkeypatch):
    import types

    import joblib

    from bayescv.compare._scenario_base import scenario_hash

    # same name and state, another module: a pickle's hash differs, the settings' does not
    elsewhere = types.ModuleType("elsewhere")
    elsewhere.BatesLogistic = type("BatesLogistic", (BatesLogistic,), {"__module__": "elsewhere"})
    monkeypatch.setitem(sys.modules, "elsewhere", elsewhere)
    moved = elsewhere.BatesLogistic(n=40, p=3, n_splits=4)
    assert joblib.hash(moved) != joblib.hash(TINY)
    assert scenario_hash(moved) == scenario_hash(TINY)
    assert scenario_hash(BatesLogistic(n=41, p=3, n_splits=4)) != scenario_hash(TINY)


@pytest.mark.skipif(importlib.util.find_spec("zarr") is None, reason="zarr not installed")
def test_zarr_store(tmp_path):
    store = tmp_path / "s.zarr"
    first = run_study(TINY, methods=METHODS, n_replicates=2, random_state=1, store=store)
    more = run_study(TINY, methods=METHODS, n_replicates=3, random_state=1, store=store)
    assert more.attrs["replicates_loaded"] == 2
    xr.testing.assert_equal(load_study(store), more)
    xr.testing.assert_equal(more.isel(replicate=slice(0, 2)), first)


def _fail_on_third(context, names):
    if context.X[0, 0] == THIRD_X:
        raise RuntimeError("replicate 2 fails")
    return interval_dataset(names, estimate=[0.5], lower=[0.4], upper=[0.6], se=[0.05],
                            level=context.level, target="err")  # fmt: skip


def _first_feature(seed: int, n: int, i: int) -> float:
    """X[0, 0] of replicate i: its data seed is child 0 of the replicate's seed."""
    data_seed = child_seeds(child_seeds(seed, n)[i], 5)[0]
    return TINY.draw(np.random.default_rng(data_seed)).X[0, 0]


THIRD_X = _first_feature(9, 4, 2)


def test_an_error_keeps_the_finished_replicates(tmp_path):
    store = tmp_path / "s.nc"
    register_method(Method("fragile", _fail_on_third, "err"))
    try:
        with pytest.raises(RuntimeError, match="replicate 2 fails"):
            run_study(TINY, methods=["fragile"], n_replicates=4, random_state=9, store=store,
                      flush_interval=100)  # fmt: skip
        parts = list((tmp_path / "s.nc.parts").glob("part-*.nc"))
        assert sorted(int(i) for p in parts for i in xr.load_dataset(p)["replicate"].values) == [
            0,
            1,
        ]
        study = run_study(TINY, methods=["fragile"], n_replicates=4, random_state=9, store=store,
                          error_score=np.nan)  # fmt: skip
    finally:
        unregister_method("fragile")
    assert study.attrs["replicates_loaded"] == 2
    assert study["flag"].values[:, 0].tolist() == [
        "",
        "",
        "error: RuntimeError: replicate 2 fails",
        "",
    ]


# --------------------------------------------------------------------- concurrent writers
# A study that holds its store until the test lets it go: its method waits for a file.
HOLDER = textwrap.dedent(
    """
    import pathlib, sys, time
    from bayescv.compare import BatesLogistic, Method, register_method, run_study
    from bayescv.intervals import interval_dataset

    go = pathlib.Path(sys.argv[3])

    def slow(context, names):
        deadline = time.monotonic() + 60
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return interval_dataset(names, estimate=[0.5], lower=[0.4], upper=[0.6], se=[0.05],
                                level=context.level, target="err")

    register_method(Method("slow", slow, "err"))
    run_study(BatesLogistic(n=40, p=3, n_splits=4), methods=["naive_points", "slow"],
              n_replicates=int(sys.argv[2]), random_state=5, store=sys.argv[1],
              flush_interval=0, n_jobs=1)
    """
)


def test_a_second_writer_is_refused_and_names_the_first(tmp_path):
    # Two processes on one store: while the first holds it, a second run_study is refused
    # with the first's pid and host; the first finishes undisturbed, and the store is then
    # free again (the lock and its owner file do not outlive the writer).
    store, go = tmp_path / "study.nc", tmp_path / "go"
    n = 4
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store), str(n), str(go)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    owner = tmp_path / "study.nc.lock.json"
    register_method(Method("slow", slow, "err"))
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and not owner.exists():
            time.sleep(0.01)
        assert proc.poll() is None, f"the first writer ended early: {proc.stderr.read()}"
        expected = f"being written by process {proc.pid} on host {socket.gethostname()}"
        with pytest.raises(StoreInUseError, match=expected):
            run_study(TINY, methods=["naive_points", "slow"], n_replicates=n, random_state=5,
                      store=store)  # fmt: skip
        go.touch()  # let the first writer finish
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
        assert not owner.exists()
        assert not (tmp_path / "study.nc.parts").exists()
        again = run_study(TINY, methods=["naive_points", "slow"], n_replicates=n,
                          random_state=5, store=store)  # fmt: skip
    finally:
        unregister_method("slow")
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert again.attrs["replicates_loaded"] == n
    np.testing.assert_array_equal(load_study(store)["replicate"], np.arange(n))


def test_the_lock_refuses_in_process_and_is_released_after_an_error(tmp_path):
    store = tmp_path / "s.nc"
    with StudyStore(store).locked():
        owner = json.loads((tmp_path / "s.nc.lock.json").read_text())
        assert owner["pid"] == os.getpid()
        assert owner["host"] == socket.gethostname()
        with pytest.raises(RuntimeError, match=f"process {os.getpid()} on host"):
            run_study(TINY, methods=METHODS, n_replicates=1, random_state=0, store=store)
    run_study(TINY, methods=METHODS, n_replicates=1, random_state=0, store=store)
    with pytest.raises(ValueError, match="other settings"):  # raised while holding the lock
        run_study(TINY, methods=METHODS, n_replicates=1, random_state=0, store=store, level=0.8)
    assert not (tmp_path / "s.nc.lock.json").exists()
    run_study(TINY, methods=METHODS, n_replicates=2, random_state=0, store=store)  # free again


def test_temporary_files_of_other_writers_are_left_alone(tmp_path):
    # Files in the parts directory that this run did not write and that may belong to a
    # live process (another pid of this host, another host, a name not ours) survive
    # loading and finishing; only the run's own parts and manifest are removed.
    store = tmp_path / "s.nc"
    parts = tmp_path / "s.nc.parts"
    parts.mkdir()
    live = parts / f".part-000000007-0badf00d.nc.{_host_tag()}-{os.getppid()}-0badf00d.tmp"
    other_host = parts / ".part-000000008-0badf00d.nc.00000000-1-0badf00d.tmp"
    foreign = parts / ".part-000000009-deadbeef.nc.tmp"
    for path in (live, other_host, foreign):
        path.write_bytes(b"being written")
    study = run_study(TINY, methods=METHODS, n_replicates=3, random_state=1, store=store,
                      flush_interval=0)  # fmt: skip
    assert sorted(p.name for p in parts.iterdir()) == sorted(
        p.name for p in (live, other_host, foreign)
    )
    assert all(p.read_bytes() == b"being written" for p in (live, other_host, foreign))
    xr.testing.assert_equal(load_study(store), study)
    again = run_study(TINY, methods=METHODS, n_replicates=3, random_state=1, store=store)
    assert again.attrs["replicates_loaded"] == 3
    assert live.exists()


def test_a_truncated_part_file_is_named_for_deletion(tmp_path):
    store = tmp_path / "s.nc"
    register_method(Method("fragile", _fail_on_third, "err"))
    try:
        with pytest.raises(RuntimeError, match="replicate 2 fails"):
            run_study(TINY, methods=["fragile"], n_replicates=4, random_state=9, store=store,
                      flush_interval=0)  # fmt: skip
        first, *_ = sorted((tmp_path / "s.nc.parts").glob("part-*.nc"))
        data = first.read_bytes()
        first.write_bytes(data[: len(data) // 2])  # a disk that lost the end of the file
        with pytest.raises(ValueError, match=f"part file {first} is unreadable") as info:
            run_study(TINY, methods=["fragile"], n_replicates=4, random_state=9, store=store,
                      error_score=np.nan)  # fmt: skip
        assert "delete it and run again" in str(info.value)
        assert "\n" not in str(info.value)
        first.unlink()  # as the message says: its replicates are computed again
        study = run_study(TINY, methods=["fragile"], n_replicates=4, random_state=9,
                          store=store, error_score=np.nan)  # fmt: skip
    finally:
        unregister_method("fragile")
    assert study.attrs["replicates_loaded"] == 1
    np.testing.assert_array_equal(study["replicate"], np.arange(4))
