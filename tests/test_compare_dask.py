import pytest
import xarray as xr

from bayescv.compare import TIMING_VARIABLES, BatesLogistic, MultiSourceLinear, run_study

distributed = pytest.importorskip("distributed")

KWARGS = {
    "methods": ["naive_points", "theta_A", "bootstrap"],
    "n_replicates": 5,
    "random_state": 3,
    "method_options": {"bootstrap": {"n_bootstrap": 3}},
}


def drop_timing(ds):
    return ds.drop_vars(list(TIMING_VARIABLES))


@pytest.fixture
def client():
    # In-process workers (threads), one thread each, no dashboard: light enough for CI.
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@pytest.mark.parametrize(
    "scenario", [BatesLogistic(n=40, p=3, n_folds=4), MultiSourceLinear(4, 6)]
)
def test_dask_equals_joblib(client, scenario, tmp_path):
    with_joblib = run_study(scenario, n_jobs=1, **KWARGS)
    with_dask = run_study(
        scenario, backend="dask", chunk_size=2, store=tmp_path / "d.nc", **KWARGS
    )
    xr.testing.assert_equal(drop_timing(with_joblib), drop_timing(with_dask))
    assert with_dask.attrs["backend"] == "dask"


def test_dask_without_a_client_explains():
    with pytest.raises(ValueError, match="current distributed Client"):
        run_study(BatesLogistic(n=40, p=3, n_folds=4), methods=["naive_points"],
                  n_replicates=1, backend="dask")  # fmt: skip
