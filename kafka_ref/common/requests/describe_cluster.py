"""DescribeCluster: the cluster id, the controller and the live brokers (KIP-700).

Mirrors org.apache.kafka.common.requests.DescribeClusterRequest / DescribeClusterResponse and the
message schemas DescribeClusterRequest.json / DescribeClusterResponse.json (versions 0-1; v1
adds the endpoint type, 1 = brokers, 2 = controllers). Admin clients that see the API use it
instead of a Metadata request for ``describeCluster``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys

# org.apache.kafka.common.requests.DescribeClusterRequest's EndpointType ids.
ENDPOINT_TYPE_BROKER = 1
ENDPOINT_TYPE_CONTROLLER = 2
# The schema's default for cluster_authorized_operations: not asked for.
AUTHORIZED_OPERATIONS_OMITTED = -2147483648
# org.apache.kafka.common.acl.AclOperation codes a CLUSTER resource supports (AclEntry#supportedOperations),
# as the bit field clients decode: ALTER 7, DESCRIBE 8, CREATE 5, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10,
# ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12.
CLUSTER_OPERATIONS = {"CREATE": 5, "ALTER": 7, "DESCRIBE": 8, "CLUSTER_ACTION": 9, "DESCRIBE_CONFIGS": 10,
                      "ALTER_CONFIGS": 11, "IDEMPOTENT_WRITE": 12}


def operations_bit_field(names: list[str] | set[str]) -> int:
    """Mirrors kafka.server.AuthHelper#authorizedOperations' encoding: one bit per AclOperation code."""
    return sum(1 << CLUSTER_OPERATIONS[n] for n in names)


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeClusterBroker:
    """Mirrors org.apache.kafka.common.message.DescribeClusterResponseData.DescribeClusterBroker."""

    broker_id: int = 0
    host: str = ""
    port: int = 0
    rack: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeClusterResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.DescribeClusterResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.DESCRIBE_CLUSTER
    API_NAME: ClassVar[str] = ApiKeys.DESCRIBE_CLUSTER.api_name

    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = None
    endpoint_type: int = ENDPOINT_TYPE_BROKER
    cluster_id: str = ""
    controller_id: int = -1
    brokers: tuple[DescribeClusterBroker, ...] = ()
    cluster_authorized_operations: int = AUTHORIZED_OPERATIONS_OMITTED

    def error_counts(self) -> dict[int, int]:
        """Mirrors DescribeClusterResponse#errorCounts."""
        return error_counts_of([self.error_code])


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeClusterRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.DescribeClusterRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.DESCRIBE_CLUSTER
    API_NAME: ClassVar[str] = ApiKeys.DESCRIBE_CLUSTER.api_name
    RESPONSE_TYPE: ClassVar[type[DescribeClusterResponse]] = DescribeClusterResponse

    include_cluster_authorized_operations: bool = False
    endpoint_type: int = ENDPOINT_TYPE_BROKER

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0,
                           error_message: str | None = None) -> DescribeClusterResponse:
        """Mirrors DescribeClusterRequest#getErrorResponse."""
        return DescribeClusterResponse(throttle_time_ms=throttle_time_ms, error_code=error_code, error_message=error_message)


DescribeClusterResponse.REQUEST_TYPE = DescribeClusterRequest
