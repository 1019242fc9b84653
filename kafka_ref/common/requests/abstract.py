"""What every request and response dataclass shares.

Mirrors org.apache.kafka.common.requests.AbstractRequest, AbstractResponse and
AbstractControlRequest.

Kafka wraps each generated ``*Data`` message in a request or response object that also knows
its version. Here one frozen dataclass plays both parts and always holds the newest (3.8)
shape of the message, so a broker and a client in the same process never need to downgrade a
message. Where Kafka's broker reads a message differently by version (Fetch names topics by id
from v13, AlterPartition from v2), the dataclass carries a ``version`` (a header field, not part
of the schema) that defaults to the version Kafka's own sender would choose.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import ClassVar

from kafka_ref.common.requests.api_keys import ApiKeys


# Metadata of a dataclass field that is not in the message schema but in the request header
# (the ``version`` some requests carry): a codec leaves it out of the body and fills it from the
# header's api_version.
REQUEST_HEADER_FIELD = {"request_header": True}


class AbstractRequest:
    """Mirrors org.apache.kafka.common.requests.AbstractRequest.

    Base of every request dataclass. Subclasses declare ``API_KEY`` (an ApiKeys member),
    ``API_NAME`` (Kafka's message name) and ``RESPONSE_TYPE`` (the response dataclass), and
    implement ``get_error_response(error_code, throttle_time_ms=0)``, which answers the whole
    request with one error the way Kafka's ``getErrorResponse`` does.
    """

    __slots__ = ()

    API_KEY: ClassVar[ApiKeys]
    API_NAME: ClassVar[str]
    RESPONSE_TYPE: ClassVar[type[AbstractResponse]]


class AbstractResponse:
    """Mirrors org.apache.kafka.common.requests.AbstractResponse.

    Base of every response dataclass. Subclasses declare ``API_KEY``, ``API_NAME`` and
    ``REQUEST_TYPE`` and implement ``error_counts()``: how many times each error code occurs
    in the response, the number Kafka feeds into its per-error request metrics.
    """

    __slots__ = ()

    API_KEY: ClassVar[ApiKeys]
    API_NAME: ClassVar[str]
    REQUEST_TYPE: ClassVar[type[AbstractRequest]]

    DEFAULT_THROTTLE_TIME: ClassVar[int] = 0


class ControlRequestType(enum.IntEnum):
    """Mirrors org.apache.kafka.common.requests.AbstractControlRequest.Type.

    Whether a LeaderAndIsr or UpdateMetadata request lists every partition (FULL) or only the
    changed ones (INCREMENTAL). Only a KRaft controller in ZooKeeper-migration mode sets it;
    the ZooKeeper controller leaves it UNKNOWN.
    """

    UNKNOWN = 0
    INCREMENTAL = 1
    FULL = 2


class AbstractControlRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.AbstractControlRequest.

    Base of the three controller-to-broker requests (LeaderAndIsr, StopReplica,
    UpdateMetadata). Each carries controller_id, controller_epoch and broker_epoch; a broker
    epoch of -1 means the sender did not know it.
    """

    __slots__ = ()

    UNKNOWN_BROKER_EPOCH: ClassVar[int] = -1


def error_counts_of(error_codes: Iterable[int]) -> dict[int, int]:
    """Mirrors org.apache.kafka.common.requests.AbstractResponse#errorCounts(Stream).

    Counts how often each error code occurs (NONE, code 0, included).
    """
    # 1. Tally every code.
    counts: dict[int, int] = {}
    for code in error_codes:
        counts[code] = counts.get(code, 0) + 1
    return counts


def update_error_counts(counts: dict[int, int], error_code: int) -> None:
    """Mirrors org.apache.kafka.common.requests.AbstractResponse#updateErrorCounts.

    Adds one occurrence of ``error_code`` to ``counts`` in place.
    """
    counts[error_code] = counts.get(error_code, 0) + 1
