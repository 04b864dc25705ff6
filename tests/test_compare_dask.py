import socket
import warnings

import pytest
import xarray as xr

from bayescv.compare import (
    TIMING_VARIABLES,
    BatesLogistic,
    Method,
    MultiSourceLinear,
    register_method,
    run_study,
    unregister_method,
)
from bayescv.intervals import interval_dataset

distributed = pytest.importorskip("distributed")

KWARGS = {
    "methods": ["naive_points", "theta_A", "bootstrap"],
    "n_replicates": 5,
    "random_state": 3,
    "method_options": {"bootstrap": {"n_bootstrap": 3}},
}
TINY = BatesLogistic(n=40, p=3, n_splits=4)


def drop_timing(ds):
    return ds.drop_vars(list(TIMING_VARIABLES))


def local_cluster(threads: int = 1):
    # In-process workers (threads), no fixed port: the dashboard takes any free one
    # (dashboard_address=None would mean Dask's default, :8787, which another program may hold).
    return distributed.LocalCluster(
        n_workers=1, threads_per_worker=threads, processes=False, dashboard_address=":0"
    )


@pytest.fixture
def client():
    with local_cluster() as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture
def port_8787():
    """Hold Dask's default dashboard port, as another program may."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", 8787))
            sock.listen()
        except OSError:  # already held by another program: the condition we test
            pass
        yield


@pytest.mark.parametrize(
    "scenario", [BatesLogistic(n=40, p=3, n_splits=4), MultiSourceLinear(4, 6)]
)
def test_dask_equals_joblib(client, scenario, tmp_path):
    with_joblib = run_study(scenario, n_jobs=1, **KWARGS)
    with_dask = run_study(
        scenario, backend="dask", chunk_size=2, store=tmp_path / "d.nc", **KWARGS
    )
    xr.testing.assert_equal(drop_timing(with_joblib), drop_timing(with_dask))
    assert with_dask.attrs["backend"] == "dask"


def test_dask_runs_while_another_program_holds_port_8787(port_8787):
    with local_cluster() as cluster, distributed.Client(cluster):
        study = run_study(TINY, methods=["naive_points"], n_replicates=2, random_state=0,
                          backend="dask")  # fmt: skip
    assert study.sizes["replicate"] == 2
    assert study.attrs["backend"] == "dask"


def _warning(context, names):
    # a warning that names its replicate, to tell the threads' records apart
    warnings.warn(f"careful {context.replicate_seed}", UserWarning, stacklevel=1)
    return interval_dataset(names, estimate=[0.5], lower=[0.4], upper=[0.6], se=[0.05],
                            level=context.level, target="err")  # fmt: skip


def test_warnings_are_recorded_per_replicate_on_threads_and_filters_restored():
    # Replicates on two threads of one worker: each replicate records its own warning only,
    # and the process's warning filters and showwarning are as before once the study ends.
    filters, show = list(warnings.filters), warnings.showwarning
    register_method(Method("warning", _warning, "err"))
    try:
        with local_cluster(threads=2) as cluster, distributed.Client(cluster):
            threaded = run_study(TINY, methods=["warning"], n_replicates=6, random_state=4,
                                 backend="dask", chunk_size=1)  # fmt: skip
        one = run_study(TINY, methods=["warning"], n_replicates=6, random_state=4, n_jobs=1)
    finally:
        unregister_method("warning")
    assert warnings.filters == filters
    assert warnings.showwarning is show
    xr.testing.assert_equal(drop_timing(threaded), drop_timing(one))
    records = threaded["warnings"].values.tolist()
    assert all(r.count("UserWarning: careful") == 1 for r in records)
    assert len(set(records)) == 6  # each replicate its own


def test_dask_without_a_client_explains():
    with pytest.raises(ValueError, match="current distributed Client"):
        run_study(TINY, methods=["naive_points"], n_replicates=1, backend="dask")


def test_cli_dask_cluster_binds_no_fixed_port(port_8787, capsys):
    from bayescv.cli import main

    code = main(["study", "--backend", "dask", "--n-jobs", "1", "--n-replicates", "2",
                 "--methods", "naive_points", "--no-progress"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "8787" not in captured.err
    assert "coverage" in captured.out
