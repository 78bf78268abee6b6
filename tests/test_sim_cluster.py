"""The cluster path (docs/verification.md, "On a cluster"; docs/exploration.md): a campaign
and a sweep handed a Dask cluster's executor, here a ``LocalCluster`` of two worker
processes on this machine, give the report and the rows that the process pool gives for
the same seed and points."""

import pytest
from dask import distributed

from tma_unit.explore import Point, explore
from tma_unit.sim.campaign import run_campaign

from units import DEFAULT, grouped


@pytest.fixture(scope="module")
def client():
    """A Dask client of a two-worker, one-thread-each cluster on this machine: the workers
    are processes of their own, which import the project and load the compiled unit as a
    cluster's machines would."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=True) as cluster, distributed.Client(cluster) as client:
        yield client


def counters(report: dict) -> dict:
    """A campaign report's coverage without its wall time, which no two runs share."""
    return {name: value for name, value in report["coverage"].to_dict().items() if name != "seconds"}


@pytest.mark.slow          # two campaigns and a compiled unit
@grouped("verilator", DEFAULT[1])
def test_a_campaign_on_a_cluster_reports_what_the_process_pool_reports(client):
    """The same seed and scenarios, in chunks of 10 (so both workers take some), on the
    cluster and on a pool of two processes: equal coverage, scenario for scenario, and no
    difference from the model on either. On the default unit under Verilator, the
    quickest to build (its C++ is made once, before either takes a chunk)."""
    config = DEFAULT[1]
    pooled = run_campaign(config, "verilator", seed=45, scenarios=60, chunk=10, workers=2)
    clustered = run_campaign(config, "verilator", seed=45, scenarios=60, chunk=10, workers=2,
                             executor=client.get_executor())
    assert not pooled["failures"] and not clustered["failures"]
    assert clustered["scenarios"] == pooled["scenarios"] == 60
    assert counters(clustered) == counters(pooled)
    assert sum(pooled["coverage"].requests.values()) > 60


@grouped("verilator", DEFAULT[1])           # with the test above, so that one worker starts the cluster
def test_a_sweep_on_a_cluster_gives_the_process_pool_s_rows(client):
    points = [Point(1, 8), Point(2, 8), Point(8, 8, modes="tiled", swizzles="sm90")]
    workloads = ["gemm-cutlass-sm90", "gather-moe-rows"]
    pooled = explore(points, workloads, progress=False, synthesis="none")
    clustered = explore(points, workloads, executor=client.get_executor(), progress=False, synthesis="none")
    assert clustered == pooled
    assert len(pooled) == 5         # the tiled sm90 unit leaves gather-moe-rows out
