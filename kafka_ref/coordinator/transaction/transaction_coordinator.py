"""Producer ids for idempotent producers.

Mirrors the non-transactional path of kafka.coordinator.transaction.TransactionCoordinator
#handleInitProducerId and the producer-id allocation of kafka.coordinator.transaction
.ProducerIdManager (Kafka 3.7). Kafka hands each broker blocks of ids from a cluster-wide
counter (``/latest_producer_id_block`` in ZooKeeper mode, AllocateProducerIds to the KRaft
controller). Here a broker's block is derived from its broker epoch and id, which no other
broker incarnation shares (ZooKeeper czxids and KRaft registration offsets are unique), so
ids are unique across the cluster without a shared counter; a restarted broker gets a new
epoch and therefore a fresh block. Transactions are not modelled: a transactional id is
answered UNSUPPORTED_VERSION.
"""

from __future__ import annotations

from typing import Any

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from kafka_ref.common.state_change import state_change_logger

# Ids per broker incarnation (Kafka's blocks hold 1000 and are renewed; ours is one large block).
BLOCK_SIZE = 1 << 20
MAX_BROKER_IDS = 4096


class ProducerIdManager:
    """Mirrors kafka.coordinator.transaction.ProducerIdManager#generateProducerId (one block per incarnation)."""

    def __init__(self, broker_id: int, broker_epoch: int) -> None:
        block = max(broker_epoch, 0) * MAX_BROKER_IDS + broker_id % MAX_BROKER_IDS
        self.block_start = block * BLOCK_SIZE
        self.next_producer_id = self.block_start

    def generate_producer_id(self) -> int:
        # 1. The next id of the block; 2. an exhausted block is an error (Kafka would fetch a new one).
        if self.next_producer_id >= self.block_start + BLOCK_SIZE:
            raise RuntimeError("producer id block exhausted")
        producer_id = self.next_producer_id
        self.next_producer_id += 1
        return producer_id


class TransactionCoordinator:
    """Mirrors kafka.coordinator.transaction.TransactionCoordinator (InitProducerId, idempotent only)."""

    def __init__(self, broker: Any) -> None:
        self.broker = broker
        self.producer_id_manager = ProducerIdManager(broker.broker_id, broker.broker_epoch)
        self._log = state_change_logger(broker_id=broker.broker_id)

    def handle_init_producer_id_request(self, envelope: Any) -> None:
        """Mirrors kafka.server.KafkaApis#handleInitProducerIdRequest (the broker side, before the coordinator).

        1. A producer id without an epoch, or an epoch without an id, is INVALID_REQUEST (both
        -1: a new producer; both set: a producer asking to bump its epoch); 2. the coordinator
        answers (``handle_init_producer_id``). No ACLs on transactional ids or IDEMPOTENT_WRITE
        here, so the authorization step always passes.
        """
        request: InitProducerIdRequest = envelope.request
        # 1. Id and epoch come together.
        if (request.producer_id == -1) != (request.producer_epoch == -1):
            envelope.respond(request.get_error_response(Errors.INVALID_REQUEST.code))
            return
        # 2. The coordinator.
        self.handle_init_producer_id(envelope)

    def handle_init_producer_id(self, envelope: Any) -> None:
        """Mirrors kafka.coordinator.transaction.TransactionCoordinator#handleInitProducerId for a null transactional id.

        1. A transactional id asks for transactions, which this broker does not model;
        2. otherwise a fresh producer id with epoch 0 (Kafka does the same for idempotent
           producers, also when they name their current id to bump the epoch).
        """
        request: InitProducerIdRequest = envelope.request
        # 1. Transactions: not supported.
        if request.transactional_id is not None:
            envelope.respond(request.get_error_response(Errors.UNSUPPORTED_VERSION.code))
            return
        # 2. A new id, epoch 0.
        producer_id = self.producer_id_manager.generate_producer_id()
        self._log.info("producer_id_allocated", producer_id=producer_id)
        envelope.respond(InitProducerIdResponse(error_code=Errors.NONE.code, producer_id=producer_id, producer_epoch=0))


def install_transaction_coordinator(broker: Any) -> None:
    """Register InitProducerId with the broker's KafkaApis (KafkaServer#startup's transaction
    coordinator, for idempotent producers only).

    The coordinator is made on the first request, once the broker is registered: its producer
    id block comes from the broker epoch, which is known only then (ZooKeeper czxid, KRaft
    registration offset).
    """
    coordinators: dict[int, TransactionCoordinator] = {}

    def handle(envelope: Any) -> None:
        coordinator = coordinators.get(broker.broker_epoch)
        if coordinator is None:
            coordinator = coordinators[broker.broker_epoch] = TransactionCoordinator(broker)
        coordinator.handle_init_producer_id_request(envelope)

    broker.apis.register(InitProducerIdRequest, handle)
