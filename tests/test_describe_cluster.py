"""DescribeCluster (KIP-700) on brokers in both metadata modes.

After Kafka's DescribeClusterRequestTest (the cluster id, the alive brokers and a controller id
that is one of them; authorized operations only when asked) and KafkaApisTest's endpoint-type
cases (testDescribeClusterWithInvalidEndpointType: UNSUPPORTED_ENDPOINT_TYPE from v1,
INVALID_REQUEST at v0; a CONTROLLER request to a broker: MISMATCHED_ENDPOINT_TYPE).
"""

from __future__ import annotations

import pytest

from kafka_ref import Cluster, Errors
from kafka_ref.common.requests.describe_cluster import (
    AUTHORIZED_OPERATIONS_OMITTED,
    CLUSTER_OPERATIONS,
    ENDPOINT_TYPE_CONTROLLER,
    DescribeClusterRequest,
    operations_bit_field,
)

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_describe_cluster_matches_metadata(mode: str) -> None:
    """Cluster id, brokers and controller id as Metadata has them; operations omitted by default, else per principal."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=2) as cluster:
        response = await cluster.network.send("admin", 1, DescribeClusterRequest(), 5000)
        metadata = cluster.broker(1).metadata_cache.get_topic_metadata([])
        assert response.error_code == Errors.NONE.code
        assert response.cluster_id == cluster.broker(1).cluster_id and response.cluster_id
        assert sorted(b.broker_id for b in response.brokers) == [0, 1, 2]
        assert response.controller_id in (0, 1, 2)
        if mode == "zk":       # the real controller
            assert response.controller_id == cluster.controller_id() == metadata.controller_id
        # (KRaft brokers name a random alive broker, in Metadata and here alike: clients send
        # controller-bound requests to it and the broker forwards them.)
        assert response.cluster_authorized_operations == AUTHORIZED_OPERATIONS_OMITTED
        request = DescribeClusterRequest(include_cluster_authorized_operations=True)
        as_client = await cluster.network.send("admin", 1, request, 5000, principal="User:ANONYMOUS")
        assert as_client.cluster_authorized_operations == operations_bit_field(set(CLUSTER_OPERATIONS) - {"CLUSTER_ACTION"})
        assert as_client.cluster_authorized_operations == (1 << 5) | (1 << 7) | (1 << 8) | (1 << 10) | (1 << 11) | (1 << 12)
        as_broker = await cluster.network.send("admin", 1, request, 5000)   # the inter-broker principal: a super user
        assert as_broker.cluster_authorized_operations == as_client.cluster_authorized_operations | (1 << 9)


async def test_describe_cluster_endpoint_types() -> None:
    """An unknown endpoint type and the controller type, at v1 and at v0."""
    async with Cluster(brokers=1, metadata_mode="zk", seed=2) as cluster:
        answers = []
        for endpoint_type, version in ((9, 1), (9, 0), (ENDPOINT_TYPE_CONTROLLER, 1), (ENDPOINT_TYPE_CONTROLLER, 0)):
            # As the wire listener does: the header's version rides on the envelope.
            envelope = cluster.network.post("admin", 0, DescribeClusterRequest(endpoint_type=endpoint_type))
            envelope.api_version = version
            answers.append(Errors.for_code((await cluster.network.wait(envelope, 5000)).error_code))
        assert answers == [Errors.UNSUPPORTED_ENDPOINT_TYPE, Errors.INVALID_REQUEST,
                           Errors.MISMATCHED_ENDPOINT_TYPE, Errors.INVALID_REQUEST]
