"""A broker's TCP listener for the Kafka wire protocol.

Mirrors kafka.network.SocketServer with its Acceptor and Processor (Kafka 3.x): one listener per
broker; each accepted connection reads size-prefixed frames, parses the request header (v1, or
v2 for flexible versions), hands the decoded request to the broker's KafkaApis through the
in-process network (exactly as the in-process clients do) and writes the response back. As in
Kafka, a connection is muted while its request is in flight, so requests on one connection are
handled one at a time and answered in order.

What closes a connection (never the broker): a frame size below zero or above
``socket.request.max.bytes``; a frame too short for a header; an API key or version the broker
does not advertise (ApiVersions aside, which is answered UNSUPPORTED_VERSION, KIP-511); a body
that does not decode; the broker going away. Each of these is logged once per connection.
"""

from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from kafka_ref.common.errors import Errors
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.requests.api_versions import ApiVersionsRequest
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.network.network import ANONYMOUS_PRINCIPAL, Network
from kafka_ref.wire.apis import WIRE_APIS, Addresses, WireApi
from kafka_ref.wire.codec import from_wire, to_wire

# Kafka's socket.request.max.bytes default (100 MiB).
SOCKET_REQUEST_MAX_BYTES = 104_857_600
# How long a connection waits for the broker's answer before giving up on it (a silent,
# isolated broker); clients time out well before this.
RESPONSE_WAIT_MS = 120_000
# How many unanswered acks=0 produces a connection remembers to notice a late failure.
ACKS0_WATCHED = 1000

_HEADER_PREFIX = struct.Struct(">hhi")  # api key, api version, correlation id
_connection_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class WireClient:
    """A client connection as a node of the in-process network (the envelope's ``src``).

    Carries what Kafka's RequestContext knows about the caller: the client id of its first
    request and its address as Java's InetAddress#toString prints it (``/127.0.0.1``, no port:
    RequestContext#clientAddress), which the group coordinator records per member.
    """

    broker_id: int
    connection_id: int
    client_id: str
    client_host: str

    def __str__(self) -> str:
        return self.client_id


class InvalidRequestError(Exception):
    """A request the listener cannot accept; its connection is closed (Kafka's InvalidRequestException)."""


class SocketServer:
    """Mirrors kafka.network.SocketServer (one PLAINTEXT listener of one broker)."""

    def __init__(self, network: Network, broker_id: int, addresses: Addresses) -> None:
        self.network = network
        self.broker_id = broker_id
        self.addresses = addresses
        self.connections = 0
        self.closed_for_errors = 0
        self._log = state_change_logger(broker_id=broker_id)

    async def serve(self, listener: Any) -> None:
        """Mirrors kafka.network.Acceptor#run: accept until the listener is closed (the broker died)."""
        try:
            await listener.serve(self.handle_connection)
        except anyio.ClosedResourceError:
            return
        except BaseExceptionGroup as group:  # (the listener's own task group wraps it)
            _closed, rest = group.split(anyio.ClosedResourceError)
            if rest is not None:
                raise rest from None

    async def handle_connection(self, stream: SocketStream) -> None:
        """Mirrors kafka.network.Processor#run for one connection: frames in, responses out."""
        connection_id = next(_connection_ids)
        try:
            peer = stream.extra(anyio.abc.SocketAttribute.remote_address)
            client_host = f"/{peer[0]}"
        except RUN_ENDING:
            raise
        except Exception:
            client_host = "/unknown"
        node: Any = None
        self.connections += 1
        async with stream:
            reader = BufferedByteReceiveStream(stream)
            pending_acks0: list[Any] = []
            try:
                while True:
                    # 1. A size-prefixed frame; a bad size closes the connection.
                    size = int.from_bytes(await reader.receive_exactly(4), "big", signed=True)
                    if size < 0 or size > SOCKET_REQUEST_MAX_BYTES:
                        raise InvalidRequestError(f"invalid frame size {size}")
                    frame = await reader.receive_exactly(size)
                    # 2. An acks=0 produce that failed earlier closes the connection (KafkaApis
                    #    closes it so the producer notices; here when the client next writes).
                    if any(e.error is not None for e in pending_acks0):
                        raise InvalidRequestError("an acks=0 produce failed")
                    # A successful acks=0 produce is never answered; the broker handles a
                    # connection's requests in order, so only the most recent can still fail.
                    del pending_acks0[:-ACKS0_WATCHED]
                    # 3. Decode, dispatch, encode (the connection is named by its first client id).
                    if node is None:
                        node = WireClient(self.broker_id, connection_id, _client_id_of(frame), client_host)
                    response = await self.process(node, frame, pending_acks0)
                    if response is not None:
                        # Answered: every earlier request of this connection has been handled.
                        if any(e.error is not None for e in pending_acks0):
                            raise InvalidRequestError("an acks=0 produce failed")
                        pending_acks0.clear()
                        await stream.send(response)
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            except InvalidRequestError as exc:
                self.closed_for_errors += 1
                self._log.info("wire_connection_closed", connection=connection_id, reason=str(exc))

    async def process(self, node: Any, frame: bytes, pending_acks0: list[Any]) -> bytes | None:
        """One request: header, version check, body, KafkaApis, response bytes (None: no answer)."""
        # 1. The header prefix tells the API, version and correlation id.
        if len(frame) < _HEADER_PREFIX.size:
            raise InvalidRequestError(f"frame of {len(frame)} bytes has no request header")
        api_key, version, correlation_id = _HEADER_PREFIX.unpack_from(frame)
        api = WIRE_APIS.get(api_key)
        # 2. ApiVersions at a version we do not know: answered as v0 with UNSUPPORTED_VERSION.
        if api_key == ApiKeys.API_VERSIONS and api is not None and version > api.max_version:
            return await self._dispatch(api, node, ApiVersionsRequest(), -1, 0, correlation_id, None)
        # 3. Anything else we do not advertise closes the connection.
        if api is None or not api.min_version <= version <= api.max_version:
            raise InvalidRequestError(f"api key {api_key} version {version} is not supported")
        # 4. Parse header and body with the schema classes; a malformed body closes.
        try:
            message = api.wire_request.decode(frame, version=version, header=True)
            request = from_wire(message, api.request_type, version)
            if api.request_in is not None:
                request = api.request_in(message, version, request)
        except RUN_ENDING:
            raise
        except Exception as exc:
            raise InvalidRequestError(f"cannot parse {api.key.api_name} v{version}: {exc}") from exc
        return await self._dispatch(api, node, request, version, version, correlation_id, pending_acks0)

    async def _dispatch(self, api: WireApi, node: Any, request: Any, api_version: int, response_version: int,
                        correlation_id: int, pending_acks0: list[Any] | None) -> bytes | None:
        # 1. Into the broker's request queue, as an anonymous client.
        envelope = self.network.post(node, self.broker_id, request, ANONYMOUS_PRINCIPAL)
        envelope.api_version = api_version
        # 2. acks=0: no answer is ever written.
        if api.key == ApiKeys.PRODUCE and request.acks == 0:
            if pending_acks0 is not None:
                pending_acks0.append(envelope)
            return None
        # 3. Wait for KafkaApis (possibly a purgatory); a dead or silent broker closes.
        try:
            response = await self.network.wait(envelope, RESPONSE_WAIT_MS)
        except RUN_ENDING:
            raise
        except Exception as exc:
            raise InvalidRequestError(f"broker {self.broker_id} did not answer: {exc}") from exc
        if isinstance(response, Errors) or response is None:
            raise InvalidRequestError(f"no {api.key.api_name} response ({response})")
        # 4. Encode at the request's version (version first, then the header).
        wire = to_wire(response, api.wire_response, response_version)
        if api.response_out is not None:
            api.response_out(response, response_version, wire, self.addresses)
        wire.API_VERSION = response_version
        wire.with_header(correlation_id=correlation_id)
        return wire.encode(header=True, framed=True)


def _client_id_of(frame: bytes) -> str:
    """The client id of a request header (v1 and v2 both start with a nullable int16-length string)."""
    if len(frame) >= 10:
        length = int.from_bytes(frame[8:10], "big", signed=True)
        if 0 <= length <= len(frame) - 10:
            return frame[10:10 + length].decode("utf-8", errors="replace")
    return ""
