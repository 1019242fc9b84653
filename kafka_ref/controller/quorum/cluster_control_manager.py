"""The controller's view of brokers: registrations (in the log) and heartbeats (in memory).

Mirrors org.apache.kafka.controller.ClusterControlManager and BrokerHeartbeatManager (Kafka
3.4). Registrations and fencing are metadata records; heartbeats are soft state only the
active controller keeps: the time of each broker's last contact (loop time, nanoseconds), the
metadata offset it last reported, and the offset a controlled shutdown waits for. A broker
whose last contact is older than ``broker.session.timeout.ms`` is fenced.
"""

from __future__ import annotations

import enum
import random
from dataclasses import dataclass
from typing import Any, Callable

from kafka_ref.common.errors import (
    DuplicateBrokerRegistrationException,
    InconsistentClusterIdException,
    StaleBrokerEpochException,
    UnsupportedVersionException,
)
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import Time
from kafka_ref.common.uuid import Uuid
from kafka_ref.image.records import (
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from kafka_ref.image.registrations import BrokerRegistration
from kafka_ref.controller.quorum.replica_placer import StripedReplicaPlacer, UsableBroker


METADATA_VERSION_FEATURE = "metadata.version"
# MetadataVersion.MINIMUM_KRAFT_VERSION (3.0-IV1) as a feature level.
MINIMUM_KRAFT_METADATA_VERSION_LEVEL = 1


class BrokerControlState(enum.Enum):
    """Mirrors org.apache.kafka.controller.BrokerControlState: (fenced, in controlled shutdown, should shut down)."""

    FENCED = (True, False, False)
    UNFENCED = (False, False, False)
    CONTROLLED_SHUTDOWN = (False, True, False)
    SHUTDOWN_NOW = (True, False, True)

    @property
    def fenced(self) -> bool:
        return self.value[0]

    @property
    def in_controlled_shutdown(self) -> bool:
        return self.value[1]

    @property
    def should_shut_down(self) -> bool:
        return self.value[2]


@dataclass(slots=True)
class BrokerHeartbeatState:
    """Mirrors BrokerHeartbeatManager.BrokerHeartbeatState."""

    id: int
    fenced: bool
    last_contact_ns: int
    metadata_offset: int = -1
    controlled_shutdown_offset: int = -1

    @property
    def shutting_down(self) -> bool:
        return self.controlled_shutdown_offset >= 0


class BrokerHeartbeatManager:
    """Mirrors org.apache.kafka.controller.BrokerHeartbeatManager."""

    def __init__(self, time: Time, session_timeout_ns: int) -> None:
        self.time = time
        self.session_timeout_ns = session_timeout_ns
        self.brokers: dict[int, BrokerHeartbeatState] = {}

    def _state_or_throw(self, broker_id: int) -> BrokerHeartbeatState:
        state = self.brokers.get(broker_id)
        if state is None:
            raise RuntimeError(f"Broker {broker_id} is not registered.")
        return state

    def register(self, broker_id: int, fenced: bool) -> None:
        """Mirrors BrokerHeartbeatManager#register: track the broker and note a contact now."""
        state = self.brokers.get(broker_id)
        metadata_offset = -1
        if state is None:
            self.brokers[broker_id] = BrokerHeartbeatState(broker_id, fenced, self.time.nanoseconds())
        elif state.fenced != fenced:
            metadata_offset = state.metadata_offset
        self.touch(broker_id, fenced, metadata_offset)

    def touch(self, broker_id: int, fenced: bool, metadata_offset: int) -> None:
        """Mirrors BrokerHeartbeatManager#touch: last contact now; a fenced broker leaves controlled shutdown."""
        state = self._state_or_throw(broker_id)
        state.fenced = fenced
        state.metadata_offset = metadata_offset
        state.last_contact_ns = self.time.nanoseconds()
        if fenced:
            state.controlled_shutdown_offset = -1

    def fence(self, broker_id: int) -> None:
        """Mirrors BrokerHeartbeatManager#fence."""
        state = self.brokers.get(broker_id)
        if state is not None:
            state.fenced = True

    def remove(self, broker_id: int) -> None:
        """Mirrors BrokerHeartbeatManager#remove."""
        self.brokers.pop(broker_id, None)

    def has_valid_session(self, broker_id: int) -> bool:
        """Mirrors BrokerHeartbeatManager#hasValidSession: unfenced and heard from within the session timeout."""
        state = self.brokers.get(broker_id)
        if state is None or state.fenced:
            return False
        return state.last_contact_ns + self.session_timeout_ns >= self.time.nanoseconds()

    def _unfenced_by_contact(self) -> list[BrokerHeartbeatState]:
        return sorted((s for s in self.brokers.values() if not s.fenced), key=lambda s: (s.last_contact_ns, s.id))

    def find_one_stale_broker(self) -> int | None:
        """Mirrors BrokerHeartbeatManager#findOneStaleBroker: the least recently heard unfenced broker, if expired."""
        unfenced = self._unfenced_by_contact()
        if unfenced and not self.has_valid_session(unfenced[0].id):
            return unfenced[0].id
        return None

    def next_check_time_ns(self) -> int | None:
        """Mirrors BrokerHeartbeatManager#nextCheckTimeNs: when the oldest unfenced session expires (None: never)."""
        unfenced = self._unfenced_by_contact()
        return unfenced[0].last_contact_ns + self.session_timeout_ns if unfenced else None

    def lowest_active_offset(self) -> int:
        """Mirrors BrokerHeartbeatManager#lowestActiveOffset: the smallest offset reported by an active broker."""
        active = [s.metadata_offset for s in self.brokers.values() if not s.fenced and not s.shutting_down]
        return min(active) if active else 2**63 - 1

    def maybe_update_controlled_shutdown_offset(self, broker_id: int, offset: int) -> None:
        """Mirrors BrokerHeartbeatManager#maybeUpdateControlledShutdownOffset (only the first time)."""
        state = self._state_or_throw(broker_id)
        if state.fenced:
            raise RuntimeError("Fenced brokers cannot enter controlled shutdown.")
        if state.controlled_shutdown_offset < 0:
            state.controlled_shutdown_offset = offset

    def current_broker_state(self, state: BrokerHeartbeatState) -> BrokerControlState:
        """Mirrors BrokerHeartbeatManager#currentBrokerState."""
        if state.shutting_down:
            return BrokerControlState.CONTROLLED_SHUTDOWN
        return BrokerControlState.FENCED if state.fenced else BrokerControlState.UNFENCED

    def calculate_next_broker_state(
        self, broker_id: int, request: Any, register_broker_record_offset: int, has_leaderships: Callable[[], bool]
    ) -> tuple[BrokerControlState, BrokerControlState]:
        """Mirrors BrokerHeartbeatManager#calculateNextBrokerState: (current, next) for a heartbeat.

        Fenced: shut down if asked; unfence once the broker asks to and has caught up with its
        own registration record. Unfenced: fence or shut down on request; a shutdown with
        leaderships left goes through controlled shutdown. Controlled shutdown: done when no
        leadership is left and every active broker has seen the moves.
        """
        state = self._state_or_throw(broker_id)
        current = self.current_broker_state(state)
        if current is BrokerControlState.FENCED:
            # 1. A fenced broker may leave at once, or be unfenced once caught up.
            if request.want_shut_down:
                return current, BrokerControlState.SHUTDOWN_NOW
            if not request.want_fence and request.current_metadata_offset >= register_broker_record_offset:
                return current, BrokerControlState.UNFENCED
            return current, BrokerControlState.FENCED
        if current is BrokerControlState.UNFENCED:
            # 2. An unfenced broker asks to be fenced, to shut down, or nothing.
            if request.want_fence:
                return current, BrokerControlState.SHUTDOWN_NOW if request.want_shut_down else BrokerControlState.FENCED
            if request.want_shut_down:
                if has_leaderships():
                    return current, BrokerControlState.CONTROLLED_SHUTDOWN
                return current, BrokerControlState.SHUTDOWN_NOW
            return current, BrokerControlState.UNFENCED
        # 3. Controlled shutdown: wait for leaderships to move and for active brokers to see it.
        if has_leaderships():
            return current, BrokerControlState.CONTROLLED_SHUTDOWN
        if state.controlled_shutdown_offset <= self.lowest_active_offset():
            return current, BrokerControlState.SHUTDOWN_NOW
        return current, BrokerControlState.CONTROLLED_SHUTDOWN


class ClusterControlManager:
    """Mirrors org.apache.kafka.controller.ClusterControlManager."""

    def __init__(self, time: Time, session_timeout_ms: int, rng: Any, feature_control: Any, controller_id: int,
                 cluster_id: str | None = None) -> None:
        self.time = time
        # ClusterControlManager.Builder#build: a random cluster id when none is given (drawn from a
        # generator of its own, so the placer's draws from ``rng`` stay what they were).
        self.cluster_id = cluster_id if cluster_id is not None else str(Uuid.random_uuid(random.Random(controller_id)))
        self.feature_control = feature_control
        self.broker_registrations: dict[int, BrokerRegistration] = {}
        self.register_broker_record_offsets: dict[int, int] = {}
        self.heartbeat_manager = BrokerHeartbeatManager(time, session_timeout_ms * 1_000_000)
        self.replica_placer = StripedReplicaPlacer(rng)
        self._log = state_change_logger(controller_id=controller_id)

    # -- registration ------------------------------------------------------------------------

    def register_broker(self, request: Any, broker_epoch: int,
                        finalized_features: dict[str, int] | None = None) -> tuple[list[Any], int]:
        """Mirrors ClusterControlManager#registerBroker; returns (records, broker epoch).

        A broker id already registered by another incarnation is refused while that
        incarnation's session is still valid (DUPLICATE_BROKER_REGISTRATION); once it expired
        (or was fenced) the old session is dropped and the new incarnation registers. The same
        incarnation registering again amends its registration: the record keeps the fenced and
        in-controlled-shutdown states the registration has. ``finalized_features`` (feature name
        → level) is what the broker's feature ranges are checked against; None: the controller's
        own (FeatureControlManager#finalizedFeatures, as QuorumController#registerBroker passes).
        """
        if finalized_features is None:
            finalized_features = self.feature_control.finalized_features()
        # 1. The cluster id must be ours (kafka_ref's liberty: a request without one is let through,
        # as the hand-built requests of its tests carry none).
        if request.cluster_id and request.cluster_id != self.cluster_id:
            raise InconsistentClusterIdException(
                f"Expected cluster ID {self.cluster_id}, but got cluster ID {request.cluster_id}")
        broker_id = request.broker_id
        existing = self.broker_registrations.get(broker_id)
        # 2. Another live incarnation owns this id; an expired one loses its session.
        if existing is not None and existing.incarnation_id != request.incarnation_id:
            if self.heartbeat_manager.has_valid_session(broker_id):
                raise DuplicateBrokerRegistrationException(
                    f"Another broker is registered with that broker id ({broker_id}).")
            self.heartbeat_manager.remove(broker_id)
        # 3. The record; the broker epoch is its offset. A new incarnation starts fenced; the
        # same incarnation keeps its states.
        fenced, in_controlled_shutdown = True, False
        if existing is not None and existing.incarnation_id == request.incarnation_id:
            fenced, in_controlled_shutdown = existing.fenced, existing.in_controlled_shutdown
        # 4. Every feature the broker lists must accept the finalized version; a broker that lists
        # no metadata.version is taken to support only the first one.
        features = [self.process_registration_feature(broker_id, finalized_features, f.name, f.min_supported_version,
                                                      f.max_supported_version) for f in request.features]
        if not any(f.name == METADATA_VERSION_FEATURE for f in request.features):
            features.append(self.process_registration_feature(
                broker_id, finalized_features, METADATA_VERSION_FEATURE, MINIMUM_KRAFT_METADATA_VERSION_LEVEL,
                MINIMUM_KRAFT_METADATA_VERSION_LEVEL))
        record = RegisterBrokerRecord(
            broker_id=broker_id, incarnation_id=request.incarnation_id, broker_epoch=broker_epoch,
            end_points=tuple(BrokerEndpoint(name=l.name, host=l.host, port=l.port, security_protocol=l.security_protocol)
                             for l in request.listeners),
            features=tuple(features), rack=request.rack, fenced=fenced, in_controlled_shutdown=in_controlled_shutdown,
        )
        # 5. Start its session now (fenced until it asks to be unfenced and has caught up).
        self.heartbeat_manager.register(broker_id, record.fenced)
        self._log.info("broker_registration_accepted", registering_broker=broker_id, broker_epoch=broker_epoch,
                       incarnation_id=str(request.incarnation_id))
        return [record], broker_epoch

    def process_registration_feature(self, broker_id: int, finalized_features: dict[str, int], name: str,
                                     min_supported_version: int, max_supported_version: int) -> BrokerFeature:
        """Mirrors ClusterControlManager#processRegistrationFeature: the broker's range must hold the finalized version."""
        # 1. The finalized version (FinalizedControllerFeatures#versionOrDefault: metadata.version
        # defaults to 1, any other feature to 0).
        finalized = finalized_features.get(name, 1 if name == METADATA_VERSION_FEATURE else 0)
        # 2. Out of the broker's range: refused.
        if not min_supported_version <= finalized <= max_supported_version:
            raise UnsupportedVersionException(
                f"Unable to register because the broker does not support version {finalized} of {name}. "
                f"It wants a version between {min_supported_version} and {max_supported_version}, inclusive.")
        # 3. A feature the controller does not know is logged and kept (Kafka 3.8's list of
        # production feature names is empty, so it logs metadata.version too; kafka_ref does not).
        if name != METADATA_VERSION_FEATURE:
            self._log.warning("broker_registered_unknown_feature", registering_broker=broker_id, feature=name)
        return BrokerFeature(name=name, min_supported_version=min_supported_version,
                             max_supported_version=max_supported_version)

    def activate(self) -> None:
        """Mirrors ClusterControlManager#activate: a fresh BrokerHeartbeatManager, every broker's session starting now."""
        self.heartbeat_manager = BrokerHeartbeatManager(self.time, self.heartbeat_manager.session_timeout_ns)
        for broker_id, registration in sorted(self.broker_registrations.items()):
            self.heartbeat_manager.register(broker_id, registration.fenced)

    def check_broker_epoch(self, broker_id: int, broker_epoch: int) -> None:
        """Mirrors ClusterControlManager#checkBrokerEpoch."""
        registration = self.broker_registrations.get(broker_id)
        if registration is None:
            raise StaleBrokerEpochException(f"No broker registration found for broker {broker_id}")
        if registration.epoch != broker_epoch:
            raise StaleBrokerEpochException(
                f"Expected broker epoch {registration.epoch}, but got broker epoch {broker_epoch}")

    # -- replay ------------------------------------------------------------------------------

    def replay_register(self, record: RegisterBrokerRecord, offset: int) -> None:
        """Mirrors ClusterControlManager#replay(RegisterBrokerRecord, offset).

        1. Note the record's offset; 2. the registration replaces any earlier one; 3. a broker
        registered before gets a fresh heartbeat session (its last contact, reported offset and
        controlled-shutdown offset start over).
        """
        # 1. Where the record is.
        self.register_broker_record_offsets[record.broker_id] = offset
        # 2. The registration.
        previous = self.broker_registrations.get(record.broker_id)
        self.broker_registrations[record.broker_id] = BrokerRegistration.from_record(record)
        # 3. The session.
        if previous is not None:
            self.heartbeat_manager.remove(record.broker_id)
        self.heartbeat_manager.register(record.broker_id, record.fenced)

    def replay_unregister(self, record: UnregisterBrokerRecord) -> None:
        """Mirrors ClusterControlManager#replay(UnregisterBrokerRecord): the registration must exist at that epoch."""
        # 1. Forget the record's offset.
        self.register_broker_record_offsets.pop(record.broker_id, None)
        # 2. Only the registration the record names can go.
        registration = self.broker_registrations.get(record.broker_id)
        if registration is None:
            raise RuntimeError(f"Unable to replay {record}: no broker registration found for that id")
        if registration.epoch != record.broker_epoch:
            raise RuntimeError(f"Unable to replay {record}: no broker registration with that epoch found")
        # 3. Its session and registration go.
        self.heartbeat_manager.remove(record.broker_id)
        del self.broker_registrations[record.broker_id]

    def replay_fencing(self, record: FenceBrokerRecord | UnfenceBrokerRecord | BrokerRegistrationChangeRecord) -> None:
        """Mirrors ClusterControlManager#replayRegistrationChange (Fence/Unfence/BrokerRegistrationChange).

        1. The registration must exist at the record's epoch; 2. the change applies; 3. the
        broker's heartbeat state is registered again with its fenced state, changed or not
        (BrokerHeartbeatManager#register: contact now; the reported offset kept only when the
        fenced state flipped).
        """
        from kafka_ref.image.records import BrokerRegistrationFencingChange as F
        from kafka_ref.image.records import BrokerRegistrationInControlledShutdownChange as C

        if isinstance(record, FenceBrokerRecord):
            broker_id, epoch, fencing, shutdown = record.id, record.epoch, F.FENCE, C.NONE
        elif isinstance(record, UnfenceBrokerRecord):
            broker_id, epoch, fencing, shutdown = record.id, record.epoch, F.UNFENCE, C.NONE
        else:
            broker_id, epoch, fencing, shutdown = record.broker_id, record.broker_epoch, record.fenced, record.in_controlled_shutdown
        # 1. The registration the record names.
        registration = self.broker_registrations.get(broker_id)
        if registration is None:
            raise RuntimeError(f"Unable to replay {record}: no broker registration found for that id")
        if registration.epoch != epoch:
            raise RuntimeError(f"Unable to replay {record}: no broker registration with that epoch found")
        # 2. The change.
        changed = registration.clone_with(fencing, shutdown)
        self.broker_registrations[broker_id] = changed
        # 3. The heartbeat state follows, whether or not the fenced state moved.
        self.heartbeat_manager.register(broker_id, changed.fenced)

    # -- queries -----------------------------------------------------------------------------

    def registration(self, broker_id: int) -> BrokerRegistration | None:
        """Mirrors ClusterControlManager#registration."""
        return self.broker_registrations.get(broker_id)

    def is_active(self, broker_id: int) -> bool:
        """Mirrors ClusterControlManager#isActive: registered, unfenced, not shutting down."""
        registration = self.broker_registrations.get(broker_id)
        if registration is None or registration.fenced or registration.in_controlled_shutdown:
            return False
        state = self.heartbeat_manager.brokers.get(broker_id)
        return state is None or not state.shutting_down

    def in_controlled_shutdown(self, broker_id: int) -> bool:
        """Mirrors ClusterControlManager#inControlledShutdown."""
        registration = self.broker_registrations.get(broker_id)
        return registration is not None and registration.in_controlled_shutdown

    def register_broker_record_offset(self, broker_id: int) -> int | None:
        """Mirrors ClusterControlManager#registerBrokerRecordOffset (None: not registered)."""
        return self.register_broker_record_offsets.get(broker_id)

    def is_unfenced(self, broker_id: int) -> bool:
        """Mirrors ClusterControlManager#isUnfenced: registered and not fenced."""
        registration = self.broker_registrations.get(broker_id)
        return registration is not None and not registration.fenced

    def usable_brokers(self) -> list[UsableBroker]:
        """Mirrors ClusterControlManager#usableBrokers (BrokerHeartbeatManager#usableBrokers).

        The heartbeat manager decides: every broker it tracks that is not shutting down by its
        heartbeats, fenced or not as it last saw it. A registration marked in controlled
        shutdown whose heartbeats have not said so (as on a newly activated controller) stays
        usable; the ISR of what is placed on it is still only the active brokers.
        """
        out = []
        for broker_id in sorted(self.heartbeat_manager.brokers):
            state = self.heartbeat_manager.brokers[broker_id]
            if state.shutting_down:
                continue
            registration = self.broker_registrations.get(broker_id)
            out.append(UsableBroker(broker_id, registration.rack if registration is not None else None, state.fenced))
        return out
