"""Misusing the Python API fails at once with one clear exception (issue: the learner's experience).

Before: ``Cluster(brokers=0)`` waited 30 s of loop time for a controller, ``kill_broker(9)`` was a
bare ``KeyError: 9`` and an error raised inside ``async with Cluster(...)`` arrived wrapped in a
nest of ExceptionGroups (one per task group: cluster, broker, client).
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref.cluster import Cluster


@pytest.mark.parametrize("brokers", [0, -1, 1.5, "3", True])
def test_cluster_rejects_a_bad_broker_count_at_construction(brokers):
    with pytest.raises(ValueError, match=r"brokers must be a whole number of at least 1, got "):
        Cluster(brokers=brokers)


@pytest.mark.anyio
async def test_kill_broker_names_the_brokers_that_exist():
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        with pytest.raises(ValueError, match=r"^kill_broker\(9\): no such broker; this cluster has brokers \[0, 1, 2\]$"):
            cluster.kill_broker(9)
        assert cluster.live_broker_ids() == [0, 1, 2]


@pytest.mark.anyio
async def test_error_in_the_body_arrives_as_itself():
    with pytest.raises(LookupError, match="^raised in the body$") as caught:
        async with Cluster(brokers=1, metadata_mode="manual"):
            raise LookupError("raised in the body")
    assert type(caught.value) is LookupError


@pytest.mark.anyio
async def test_error_in_a_background_task_arrives_as_itself():
    """An exception in a task the cluster runs cancels the body and arrives unwrapped."""
    async def fail() -> None:
        await anyio.sleep(1)
        raise LookupError("raised in a cluster task")

    with pytest.raises(LookupError, match="^raised in a cluster task$") as caught:
        async with Cluster(brokers=1, metadata_mode="zk") as cluster:
            cluster._tg.start_soon(fail)
            await anyio.sleep(60)
    assert type(caught.value) is LookupError
    assert caught.value.__suppress_context__


@pytest.mark.anyio
async def test_two_independent_errors_stay_a_group():
    """Two exceptions of equal standing are both kept: nothing is silently dropped."""
    async def fail(msg: str) -> None:
        raise LookupError(msg)

    with pytest.raises(BaseExceptionGroup) as caught:
        async with Cluster(brokers=1, metadata_mode="manual") as cluster:
            cluster._tg.start_soon(fail, "first")
            cluster._tg.start_soon(fail, "second")
            await anyio.sleep_forever()
    leaves = sorted(str(e) for e in caught.value.exceptions)
    assert leaves == ["first", "second"]
