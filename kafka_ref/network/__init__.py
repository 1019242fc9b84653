"""The in-process network: node inboxes, request/response envelopes, fault injection."""

from kafka_ref.network.network import (
    DisconnectException,
    Envelope,
    Network,
    NetworkTimeoutException,
)

__all__ = ["DisconnectException", "Envelope", "Network", "NetworkTimeoutException"]
