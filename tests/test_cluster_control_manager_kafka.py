"""Mirrors org.apache.kafka.controller.ClusterControlManagerTest (Kafka 3.8.0).

A ClusterControlManager runs alone, as Kafka's tests build it: a MockTime at zero, a session
timeout of 1000 ns (the constructor takes milliseconds; 0.001 ms), a FeatureControlManager, and
the placer on a copy of Kafka's MockRandom. Records are replayed by hand at the offsets the Kafka
tests give.

Not ported:
- testRegisterControlWithOlderMetadataVersion: controller registrations (KIP-919) are not modelled.
- testRegisterWithDuplicateDirectoryId, testHasOnlineDir, testDefaultDir: no KIP-858 log
  directories (JBOD).
"""

from __future__ import annotations

import pytest

from kafka_ref.common.errors import (
    InconsistentClusterIdException,
    StaleBrokerEpochException,
    UnsupportedVersionException,
)
from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.requests.broker_requests import (
    SUPPORTED_METADATA_VERSION_FEATURE,
    BrokerRegistrationRequest,
    Feature,
)
from kafka_ref.common.time import MockTime
from kafka_ref.common.uuid import Uuid
from kafka_ref.controller.quorum.cluster_control_manager import ClusterControlManager
from kafka_ref.controller.quorum.configuration_control_manager import _FEATURE_LEVELS, FeatureControlManager
from kafka_ref.image.records import (
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationFencingChange,
    BrokerRegistrationInControlledShutdownChange,
    FenceBrokerRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from kafka_ref.image.registrations import BrokerRegistration
from test_replication_control_manager_kafka import JavaMockRandom

# Kafka's tests set 1000 ns; kafka_ref's constructor takes milliseconds.
SESSION_TIMEOUT_MS = 0.001
CLUSTER_ID = "fPZv1VBsRFmnlRvmGcOW9w"
PLAINTEXT = BrokerEndpoint(name="PLAINTEXT", host="example.com", port=9092, security_protocol=0)


def new_cluster_control(cluster_id: str | None = None, metadata_version: str = "3.8") -> ClusterControlManager:
    """ClusterControlManager.Builder as the Kafka tests call it."""
    return ClusterControlManager(MockTime(), SESSION_TIMEOUT_MS, JavaMockRandom(),
                                 FeatureControlManager(MetadataVersion.parse(metadata_version)), 0,
                                 cluster_id=cluster_id)


@pytest.mark.parametrize("pre_3_3", [True, False], ids=["IBP_3_0_IV1", "IBP_3_3_IV2"])
def test_replay(pre_3_3):
    """Mirrors ClusterControlManagerTest#testReplay. Before metadata.version 3.3 fencing travels in
    Fence/UnfenceBrokerRecord, from 3.3 in BrokerRegistrationChangeRecord; replay takes both."""
    cluster_control = new_cluster_control()
    cluster_control.activate()
    assert cluster_control.is_unfenced(0) is False

    cluster_control.replay_register(RegisterBrokerRecord(broker_id=1, broker_epoch=100, end_points=(PLAINTEXT,)), 100)
    cluster_control.check_broker_epoch(1, 100)
    with pytest.raises(StaleBrokerEpochException):
        cluster_control.check_broker_epoch(1, 101)
    with pytest.raises(StaleBrokerEpochException):
        cluster_control.check_broker_epoch(2, 100)
    assert (cluster_control.is_unfenced(0), cluster_control.is_unfenced(1)) == (False, False)

    if pre_3_3:
        cluster_control.replay_fencing(UnfenceBrokerRecord(id=1, epoch=100))
    else:
        cluster_control.replay_fencing(BrokerRegistrationChangeRecord(
            broker_id=1, broker_epoch=100, fenced=BrokerRegistrationFencingChange.UNFENCE))
    assert (cluster_control.is_unfenced(0), cluster_control.is_unfenced(1)) == (False, True)

    if pre_3_3:
        cluster_control.replay_fencing(FenceBrokerRecord(id=1, epoch=100))
    else:
        cluster_control.replay_fencing(BrokerRegistrationChangeRecord(
            broker_id=1, broker_epoch=100, fenced=BrokerRegistrationFencingChange.FENCE))
    assert (cluster_control.is_unfenced(0), cluster_control.is_unfenced(1)) == (False, False)


def test_replay_register_broker_record():
    """Mirrors ClusterControlManagerTest#testReplayRegisterBrokerRecord: a RegisterBrokerRecord replayed
    again replaces the registration's fenced and in-controlled-shutdown states."""
    cluster_control = new_cluster_control(CLUSTER_ID)
    assert (cluster_control.is_unfenced(0), cluster_control.in_controlled_shutdown(0)) == (False, False)

    record = RegisterBrokerRecord(broker_id=0, broker_epoch=100, rack=None, fenced=True, in_controlled_shutdown=True,
                                  end_points=(PLAINTEXT,))
    cluster_control.replay_register(record, 100)
    assert (cluster_control.is_unfenced(0), cluster_control.in_controlled_shutdown(0)) == (False, True)

    record = RegisterBrokerRecord(broker_id=0, broker_epoch=100, rack=None, fenced=True, in_controlled_shutdown=False,
                                  end_points=(PLAINTEXT,))
    cluster_control.replay_register(record, 100)
    assert (cluster_control.is_unfenced(0), cluster_control.in_controlled_shutdown(0)) == (False, False)
    assert cluster_control.register_broker_record_offset(0) == 100

    record = RegisterBrokerRecord(broker_id=0, broker_epoch=100, rack=None, fenced=False, in_controlled_shutdown=False,
                                  end_points=(PLAINTEXT,))
    cluster_control.replay_register(record, 100)
    assert (cluster_control.is_unfenced(0), cluster_control.in_controlled_shutdown(0)) == (True, False)


def test_replay_broker_registration_change_record():
    """Mirrors ClusterControlManagerTest#testReplayBrokerRegistrationChangeRecord: an UNFENCE change
    leaves the in-controlled-shutdown state as it was."""
    cluster_control = new_cluster_control(CLUSTER_ID)
    assert (cluster_control.is_unfenced(0), cluster_control.in_controlled_shutdown(0)) == (False, False)

    cluster_control.replay_register(RegisterBrokerRecord(broker_id=0, broker_epoch=100, rack=None, fenced=False,
                                                         end_points=(PLAINTEXT,)), 100)
    assert (cluster_control.is_unfenced(0), cluster_control.in_controlled_shutdown(0)) == (True, False)

    cluster_control.replay_fencing(BrokerRegistrationChangeRecord(
        broker_id=0, broker_epoch=100,
        in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN))
    assert (cluster_control.is_unfenced(0), cluster_control.in_controlled_shutdown(0)) == (True, True)

    cluster_control.replay_fencing(BrokerRegistrationChangeRecord(
        broker_id=0, broker_epoch=100, fenced=BrokerRegistrationFencingChange.UNFENCE))
    assert (cluster_control.is_unfenced(0), cluster_control.in_controlled_shutdown(0)) == (True, True)


def test_registration_with_incorrect_cluster_id():
    """Mirrors ClusterControlManagerTest#testRegistrationWithIncorrectClusterId."""
    cluster_control = new_cluster_control(CLUSTER_ID)
    cluster_control.activate()
    with pytest.raises(InconsistentClusterIdException) as exc:
        cluster_control.register_broker(BrokerRegistrationRequest(
            cluster_id="WIjw3grwRZmR2uOpdpVXbg", broker_id=0, rack=None,
            incarnation_id=Uuid.from_string("0H4fUu1xQEKXFYwB1aBjhg")), 123)
    assert str(exc.value) == f"Expected cluster ID {CLUSTER_ID}, but got cluster ID WIjw3grwRZmR2uOpdpVXbg"
    assert cluster_control.broker_registrations == {}
    assert cluster_control.heartbeat_manager.brokers == {}


@pytest.mark.parametrize("metadata_version", ["3.3", "3.7", "3.8"])
def test_register_broker_record_version(metadata_version):
    """Mirrors ClusterControlManagerTest#testRegisterBrokerRecordVersion, without what kafka_ref does
    not model: the record's version (kafka_ref's records carry none) and log directories (3.7-IV2+).
    A broker that lists no features, against no finalized feature, is taken to support
    metadata.version 1 only; the record is fenced and not in controlled shutdown."""
    cluster_control = new_cluster_control(CLUSTER_ID, metadata_version)
    cluster_control.activate()
    incarnation = Uuid.from_string("0H4fUu1xQEKXFYwB1aBjhg")
    records, epoch = cluster_control.register_broker(BrokerRegistrationRequest(
        cluster_id=CLUSTER_ID, broker_id=0, rack=None, incarnation_id=incarnation, features=()), 123, {})
    assert epoch == 123
    assert records == [RegisterBrokerRecord(
        broker_epoch=123, broker_id=0, rack=None, incarnation_id=incarnation, fenced=True,
        features=(BrokerFeature(name="metadata.version", min_supported_version=1, max_supported_version=1),),
        in_controlled_shutdown=False)]
    # (kafka_ref's addition) the registration keeps the features: written back, the record is the same.
    cluster_control.replay_register(records[0], 123)
    level = cluster_control.feature_control.metadata_version_level
    assert cluster_control.registration(0).to_record(level, pytest.fail) == records[0]


def test_registration_with_unsupported_metadata_version():
    """Mirrors ClusterControlManagerTest#testRegistrationWithUnsupportedMetadataVersion. Kafka finalizes
    3.3-IV0 (level 4); kafka_ref's metadata.version steps by release (3.3 is level 7, which the
    second broker supports), so 3.2 (level 3) stands in: both brokers are refused, by the same texts."""
    cluster_control = new_cluster_control(CLUSTER_ID, "3.2")
    cluster_control.activate()
    finalized = cluster_control.feature_control.finalized_features()
    assert finalized == {"metadata.version": 3}
    incarnation = Uuid.from_string("0H4fUu1xQEKXFYwB1aBjhg")
    with pytest.raises(UnsupportedVersionException) as exc:
        cluster_control.register_broker(BrokerRegistrationRequest(
            cluster_id=CLUSTER_ID, broker_id=0, rack=None, incarnation_id=incarnation, features=()), 123, finalized)
    assert str(exc.value) == ("Unable to register because the broker does not support version 3 of "
                              "metadata.version. It wants a version between 1 and 1, inclusive.")
    with pytest.raises(UnsupportedVersionException) as exc:
        cluster_control.register_broker(BrokerRegistrationRequest(
            cluster_id=CLUSTER_ID, broker_id=0, rack=None, incarnation_id=incarnation,
            features=(Feature(name="metadata.version", min_supported_version=7, max_supported_version=7),)),
            123, finalized)
    assert str(exc.value) == ("Unable to register because the broker does not support version 3 of "
                              "metadata.version. It wants a version between 7 and 7, inclusive.")
    assert cluster_control.heartbeat_manager.brokers == {}


def test_unregister():
    """Mirrors ClusterControlManagerTest#testUnregister."""
    incarnation = Uuid.from_string("fPZv1VBsRFmnlRvmGcOW9w")
    record = RegisterBrokerRecord(broker_id=1, broker_epoch=100, incarnation_id=incarnation, rack="arack",
                                  end_points=(PLAINTEXT,))
    cluster_control = new_cluster_control()
    cluster_control.activate()
    cluster_control.replay_register(record, 100)
    assert cluster_control.broker_registrations[1] == BrokerRegistration(
        id=1, epoch=100, incarnation_id=incarnation, listeners=(PLAINTEXT,), rack="arack", fenced=True,
        in_controlled_shutdown=False)
    assert cluster_control.register_broker_record_offset(1) == 100
    cluster_control.replay_unregister(UnregisterBrokerRecord(broker_id=1, broker_epoch=100))
    assert 1 not in cluster_control.broker_registrations
    assert cluster_control.register_broker_record_offset(1) is None
    assert 1 not in cluster_control.heartbeat_manager.brokers


@pytest.mark.parametrize("metadata_version", ["3.2", "3.3"])
def test_registrations_to_records(metadata_version):
    """Mirrors ClusterControlManagerTest#testRegistrationsToRecords (IBP_3_3_IV2, IBP_3_3_IV3). kafka_ref's
    metadata.version steps by release: 3.2 stands for the version without the in-controlled-shutdown
    state, 3.3 (level 7) is 3.3-IV3 with it; the record version is not modelled. The lost state is
    reported to the loss handler (Kafka's test ignores it)."""
    cluster_control = new_cluster_control(None, metadata_version)
    cluster_control.activate()
    assert cluster_control.is_unfenced(0) is False
    for i in range(3):
        cluster_control.replay_register(RegisterBrokerRecord(
            broker_epoch=100, broker_id=i, rack=None,
            end_points=(BrokerEndpoint(name="PLAINTEXT", host="example.com", port=9092 + i, security_protocol=0),)), 100)
    for i in range(2):
        cluster_control.replay_fencing(UnfenceBrokerRecord(id=i, epoch=100))
    cluster_control.replay_fencing(BrokerRegistrationChangeRecord(
        broker_id=0, broker_epoch=100,
        in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN))
    level = cluster_control.feature_control.metadata_version_level
    losses: list[str] = []

    def endpoint(port: int) -> tuple[BrokerEndpoint, ...]:
        return (BrokerEndpoint(name="PLAINTEXT", host="example.com", port=port, security_protocol=0),)

    supported = cluster_control.feature_control.is_in_controlled_shutdown_state_supported()
    assert supported is (metadata_version == "3.3")
    assert cluster_control.broker_registrations[0].to_record(level, losses.append) == RegisterBrokerRecord(
        broker_epoch=100, broker_id=0, rack=None, end_points=endpoint(9092), in_controlled_shutdown=supported,
        fenced=False)
    assert cluster_control.broker_registrations[1].to_record(level, losses.append) == RegisterBrokerRecord(
        broker_epoch=100, broker_id=1, rack=None, end_points=endpoint(9093), fenced=False)
    assert cluster_control.broker_registrations[2].to_record(level, losses.append) == RegisterBrokerRecord(
        broker_epoch=100, broker_id=2, rack=None, end_points=endpoint(9094), fenced=True)
    assert losses == ([] if supported else ["the inControlledShutdown state of one or more brokers"])


@pytest.mark.parametrize("num_usable_brokers", [3, 10])
def test_place_replicas(num_usable_brokers):
    """Mirrors ClusterControlManagerTest#testPlaceReplicas: a hundred placements of one partition,
    three replicas, each a set of distinct registered brokers."""
    cluster_control = new_cluster_control()
    cluster_control.activate()
    for i in range(num_usable_brokers):
        cluster_control.replay_register(RegisterBrokerRecord(broker_id=i, broker_epoch=100, end_points=(PLAINTEXT,)), 100)
        cluster_control.replay_fencing(UnfenceBrokerRecord(id=i, epoch=100))
        cluster_control.heartbeat_manager.touch(i, False, 0)
    for i in range(num_usable_brokers):
        assert cluster_control.is_unfenced(i), f"broker {i} was not unfenced."
    seen_anywhere: set[int] = set()
    for _ in range(100):
        [replicas] = cluster_control.replica_placer.place(0, 1, 3, cluster_control.usable_brokers())
        assert len(replicas) == 3
        assert len(set(replicas)) == 3
        assert all(0 <= r < num_usable_brokers for r in replicas)
        seen_anywhere.update(replicas)
    # (kafka_ref's addition) over a hundred draws every broker gets some replica.
    assert seen_anywhere == set(range(num_usable_brokers))


# ------------------------------------------------------------------------------ kafka_ref's own checks


BROKER_FEATURES = (BrokerFeature(name="metadata.version", min_supported_version=1, max_supported_version=20),)


def test_a_broker_supports_every_metadata_version_kafka_ref_models():
    """BrokerFeatures#defaultSupportedFeatures as kafka_ref's brokers send it: metadata.version from
    1 (3.0-IV1) to the latest level kafka_ref knows, so a broker registers whatever the cluster runs."""
    assert (SUPPORTED_METADATA_VERSION_FEATURE.min_supported_version,
            SUPPORTED_METADATA_VERSION_FEATURE.max_supported_version) == (1, max(_FEATURE_LEVELS.values()))
    for release in ("3.0", "3.3", "3.8"):
        cluster_control = new_cluster_control(CLUSTER_ID, release)
        cluster_control.activate()
        records, _epoch = cluster_control.register_broker(registration_request(Uuid(1, 1)), 5)
        assert records[0].features == BROKER_FEATURES


def registration_request(incarnation: Uuid, broker_id: int = 0) -> BrokerRegistrationRequest:
    return BrokerRegistrationRequest(cluster_id=CLUSTER_ID, broker_id=broker_id, incarnation_id=incarnation)


def test_same_incarnation_registering_again_keeps_its_states():
    """ClusterControlManager#registerBroker's amended registration (behind testReplayRegisterBrokerRecord):
    the same incarnation registering again gets a record with the fenced and in-controlled-shutdown
    states its registration has; a new incarnation (once the old session lapsed) starts fenced."""
    cluster_control = new_cluster_control(CLUSTER_ID)
    cluster_control.activate()
    incarnation = Uuid.from_string("0H4fUu1xQEKXFYwB1aBjhg")
    records, epoch = cluster_control.register_broker(registration_request(incarnation), 123)
    assert (records, epoch) == ([RegisterBrokerRecord(broker_id=0, incarnation_id=incarnation, broker_epoch=123,
                                                      features=BROKER_FEATURES, fenced=True,
                                                      in_controlled_shutdown=False)], 123)
    cluster_control.replay_register(records[0], 123)
    cluster_control.replay_fencing(BrokerRegistrationChangeRecord(
        broker_id=0, broker_epoch=123, fenced=BrokerRegistrationFencingChange.UNFENCE,
        in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN))
    # The same incarnation again: unfenced and in controlled shutdown, as registered.
    records, _epoch = cluster_control.register_broker(registration_request(incarnation), 130)
    assert records == [RegisterBrokerRecord(broker_id=0, incarnation_id=incarnation, broker_epoch=130,
                                            features=BROKER_FEATURES, fenced=False, in_controlled_shutdown=True)]
    cluster_control.replay_register(records[0], 130)
    assert (cluster_control.is_unfenced(0), cluster_control.in_controlled_shutdown(0)) == (True, True)
    # Another incarnation once the session lapsed: fenced, not shutting down.
    cluster_control.time.advance(1)
    other = Uuid.from_string("kxAT73dKQsitIedpiPtwBA")
    records, _epoch = cluster_control.register_broker(registration_request(other), 140)
    assert records == [RegisterBrokerRecord(broker_id=0, incarnation_id=other, broker_epoch=140,
                                            features=BROKER_FEATURES, fenced=True, in_controlled_shutdown=False)]


def test_replayed_registration_starts_a_fresh_heartbeat_session():
    """ClusterControlManager#replay(RegisterBrokerRecord): a broker registered before loses its
    heartbeat state (reported offset, controlled-shutdown offset) and its session starts now."""
    cluster_control = new_cluster_control(CLUSTER_ID)
    cluster_control.activate()
    cluster_control.replay_register(RegisterBrokerRecord(broker_id=0, broker_epoch=100, fenced=False), 100)
    heartbeats = cluster_control.heartbeat_manager
    heartbeats.touch(0, False, 57)
    heartbeats.maybe_update_controlled_shutdown_offset(0, 60)
    assert heartbeats.brokers[0].shutting_down is True
    cluster_control.time.advance(5)
    cluster_control.replay_register(RegisterBrokerRecord(broker_id=0, broker_epoch=110, fenced=False), 110)
    state = heartbeats.brokers[0]
    assert (state.fenced, state.metadata_offset, state.controlled_shutdown_offset, state.last_contact_ns) == (
        False, -1, -1, cluster_control.time.nanoseconds())


def test_replay_unregister_needs_the_registration_at_its_epoch():
    """ClusterControlManager#replay(UnregisterBrokerRecord): no registration, or another epoch, is an error."""
    cluster_control = new_cluster_control()
    cluster_control.activate()
    with pytest.raises(RuntimeError, match="no broker registration found for that id"):
        cluster_control.replay_unregister(UnregisterBrokerRecord(broker_id=1, broker_epoch=100))
    cluster_control.replay_register(RegisterBrokerRecord(broker_id=1, broker_epoch=100), 100)
    with pytest.raises(RuntimeError, match="no broker registration with that epoch found"):
        cluster_control.replay_unregister(UnregisterBrokerRecord(broker_id=1, broker_epoch=99))
    assert cluster_control.registration(1).epoch == 100


def test_registration_change_registers_the_heartbeat_state_again():
    """ClusterControlManager#replayRegistrationChange → BrokerHeartbeatManager#register, every time:
    contact is now; the reported offset survives a flip of the fenced state and is dropped when
    the fenced state stays (here: only the in-controlled-shutdown state changes). A change for an
    unknown id or another epoch is an error."""
    cluster_control = new_cluster_control(CLUSTER_ID)
    cluster_control.activate()
    time = cluster_control.time
    heartbeats = cluster_control.heartbeat_manager
    cluster_control.replay_register(RegisterBrokerRecord(broker_id=0, broker_epoch=100), 100)
    heartbeats.touch(0, True, 120)
    time.advance(3)
    cluster_control.replay_fencing(BrokerRegistrationChangeRecord(
        broker_id=0, broker_epoch=100, fenced=BrokerRegistrationFencingChange.UNFENCE))
    state = heartbeats.brokers[0]
    assert (state.fenced, state.metadata_offset, state.last_contact_ns) == (False, 120, time.nanoseconds())
    time.advance(3)
    cluster_control.replay_fencing(BrokerRegistrationChangeRecord(
        broker_id=0, broker_epoch=100,
        in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN))
    state = heartbeats.brokers[0]
    assert (state.fenced, state.metadata_offset, state.last_contact_ns) == (False, -1, time.nanoseconds())
    with pytest.raises(RuntimeError, match="no broker registration found for that id"):
        cluster_control.replay_fencing(FenceBrokerRecord(id=1, epoch=100))
    with pytest.raises(RuntimeError, match="no broker registration with that epoch found"):
        cluster_control.replay_fencing(FenceBrokerRecord(id=0, epoch=99))
