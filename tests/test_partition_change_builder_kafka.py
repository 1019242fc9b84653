"""Mirrors org.apache.kafka.controller.PartitionChangeBuilderTest (Kafka 3.8.0).

The builder turns a wished-for partition state into the PartitionChangeRecord that gets there
(or nothing). Kafka parameterises most cases over PartitionChangeRecord versions 0–2, which it
maps to metadata.version 3.7-IV0, 3.7-IV2 and 3.9-IV0; versions 1 and 2 differ from 0 only by the
log directories (v1) and eligible leader replicas (v2) fields, which kafka_ref does not model, so
each case here runs at 3.7-IV0 (version 0). Cases parameterised over a metadata.version run at
every version Kafka names.

Not ported:
- testChangeRecordIsNoOp's schema checks (tagged field count) and its ELR/directories fields: no
  such schema or fields in kafka_ref (the remaining fields are checked).
- testLeaderEpochBumpOnIsrShrinkWithZkMigration, and the zkMigrationEnabled half of
  testChangeInLeadershipDoesNotChangeRecoveryState / testUncleanSetsLeaderRecoveringState:
  kafka_ref models no ZooKeeper-to-KRaft migration.
- testEligibleLeaderReplicas_IsrExpandAboveMinISR, _IsrAddNewMemberNotInELR,
  _RemoveUncleanShutdownReplicasFromElr, _ElrCanBeElected, _IsrCanShrinkToZero,
  _ElectLastKnownLeader, _ElectLastKnownLeaderShouldFail (and the version-2 halves of the other
  ELR cases): KIP-966 eligible leader replicas are not modelled (the partitions carry ELR state).
- testKeepsDirectoriesAfterReassignment, testUpdateDirectories: KIP-858 log directories are not
  modelled.
"""

from __future__ import annotations

import pytest

from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.uuid import Uuid
from kafka_ref.controller.quorum.configuration_control_manager import FeatureControlManager
from kafka_ref.controller.quorum.partition_change_builder import (
    Election,
    PartitionChangeBuilder,
    change_record_is_no_op,
)
from kafka_ref.controller.quorum.partition_reassignment import PartitionReassignmentReplicas, PartitionReassignmentRevert
from kafka_ref.image.records import NO_LEADER, NO_LEADER_CHANGE, LeaderRecoveryState, PartitionChangeRecord
from kafka_ref.image.registrations import PartitionRegistration

RECOVERED = LeaderRecoveryState.RECOVERED
RECOVERING = LeaderRecoveryState.RECOVERING

# PartitionChangeRecord version 0 is written at metadata.version 3.7-IV0.
VERSION_0_MV = "3.7-IV0"

FOO_ID = Uuid.from_string("FbrrdcfiR-KC2CPSTHaJrg")
BAR_ID = Uuid.from_string("LKfUsCBnQKekvL9O5dY9nw")
BAZ_ID = Uuid.from_string("wQzt5gkSTwuQNXZF5gIw7A")
OFFLINE_ID = Uuid.from_string("LKfUsCBnQKekvL9O5dY9nw")

FOO = PartitionRegistration(replicas=(2, 1, 3), isr=(2, 1, 3), leader=1, leader_recovery_state=RECOVERED,
                            leader_epoch=100, partition_epoch=200)
BAR = PartitionRegistration(replicas=(1, 2, 3, 4), isr=(1, 2, 3), removing_replicas=(1,), adding_replicas=(4,),
                            leader=1, leader_recovery_state=RECOVERED, leader_epoch=100, partition_epoch=200)
BAZ = PartitionRegistration(replicas=(2, 1, 3), isr=(1, 3), leader=3, leader_recovery_state=RECOVERED,
                            leader_epoch=100, partition_epoch=200)
OFFLINE = PartitionRegistration(replicas=(2, 1, 3), isr=(3,), leader=NO_LEADER, leader_recovery_state=RECOVERED,
                                leader_epoch=100, partition_epoch=200)


def builder_at(partition: PartitionRegistration, topic_id: Uuid, acceptable, metadata_version: str) -> PartitionChangeBuilder:
    """A builder whose version switches are the ones FeatureControlManager derives from the metadata.version."""
    features = FeatureControlManager(MetadataVersion.parse(metadata_version))
    return PartitionChangeBuilder(
        partition, topic_id, 0, acceptable,
        is_leader_recovery_supported=features.is_leader_recovery_supported(),
        bump_leader_epoch_on_isr_shrink=features.is_leader_epoch_bump_required_on_isr_shrink(),
    )


def foo_builder(metadata_version: str = VERSION_0_MV) -> PartitionChangeBuilder:
    return builder_at(FOO, FOO_ID, lambda r: r != 3, metadata_version)


def bar_builder() -> PartitionChangeBuilder:
    return builder_at(BAR, BAR_ID, lambda r: r != 3, VERSION_0_MV)


def baz_builder() -> PartitionChangeBuilder:
    return builder_at(BAZ, BAZ_ID, lambda r: True, VERSION_0_MV)


def offline_builder() -> PartitionChangeBuilder:
    return builder_at(OFFLINE, OFFLINE_ID, lambda r: r == 1, VERSION_0_MV)


def leader_recovery_mv(supported: bool) -> str:
    # Leader recovery (KIP-704) arrived with metadata.version 3.2-IV0.
    return "3.2-IV0" if supported else "3.1-IV0"


def test_change_record_is_no_op():
    """Mirrors PartitionChangeBuilderTest#testChangeRecordIsNoOp (the fields kafka_ref's record has)."""
    def rec(**fields) -> PartitionChangeRecord:
        return PartitionChangeRecord(partition_id=0, topic_id=FOO_ID, **fields)

    assert change_record_is_no_op(rec()) is True
    assert change_record_is_no_op(rec(leader=1)) is False
    assert change_record_is_no_op(rec(isr=(1, 2, 3))) is False
    assert change_record_is_no_op(rec(removing_replicas=(1,))) is False
    assert change_record_is_no_op(rec(adding_replicas=(4,))) is False
    assert change_record_is_no_op(rec(replicas=(1, 2))) is False
    assert change_record_is_no_op(rec(leader_recovery_state=int(RECOVERED))) is False
    # NO_LEADER (-1) is a change of leader; only NO_LEADER_CHANGE (-2) is not.
    assert change_record_is_no_op(rec(leader=NO_LEADER)) is False
    assert change_record_is_no_op(rec(leader=NO_LEADER_CHANGE)) is True


def test_elect_leader():
    """Mirrors PartitionChangeBuilderTest#testElectLeader."""
    assert foo_builder().set_election(Election.PREFERRED).elect_leader() == (2, False)
    assert foo_builder().elect_leader() == (1, False)
    assert foo_builder().set_election(Election.UNCLEAN).elect_leader() == (1, False)
    assert foo_builder().set_target_isr([1, 3]).elect_leader() == (1, False)
    assert foo_builder().set_election(Election.UNCLEAN).set_target_isr([1, 3]).elect_leader() == (1, False)
    # Only broker 3 in the ISR, and 3 may not lead: no clean leader; unclean picks 2, the first acceptable replica.
    assert foo_builder().set_target_isr([3]).elect_leader() == (NO_LEADER, False)
    assert foo_builder().set_election(Election.UNCLEAN).set_target_isr([3]).elect_leader() == (2, True)
    # A replica added with the ISR is a clean choice.
    assert foo_builder().set_election(Election.UNCLEAN).set_target_isr([4]).set_target_replicas(
        [2, 1, 3, 4]).elect_leader() == (4, False)

    assert baz_builder().set_election(Election.PREFERRED).elect_leader() == (3, False)
    assert baz_builder().elect_leader() == (3, False)
    assert baz_builder().set_election(Election.UNCLEAN).elect_leader() == (3, False)


def trigger_leader_epoch_bump(builder: PartitionChangeBuilder, record: dict) -> int:
    """PartitionChangeBuilderTest#testTriggerLeaderEpochBumpIfNeeded: both triggers, the ISR set in between."""
    builder.trigger_leader_epoch_bump_for_replica_reassignment_if_needed(record)
    record["isr"] = tuple(builder.target_isr)
    builder.trigger_leader_epoch_bump_for_isr_shrink_if_needed(record)
    return record.get("leader", NO_LEADER_CHANGE)


def test_no_leader_epoch_bump_if_nothing_changed():
    """Mirrors PartitionChangeBuilderTest#testNoLeaderEpochBumpIfNothingChanged."""
    assert trigger_leader_epoch_bump(foo_builder(), {}) == NO_LEADER_CHANGE


@pytest.mark.parametrize("mv", ["3.6-IV0", "3.7-IV2", "3.9-IV0"])
def test_no_leader_epoch_bump_on_isr_shrink(mv):
    """Mirrors PartitionChangeBuilderTest#testNoLeaderEpochBumpOnIsrShrink."""
    assert trigger_leader_epoch_bump(foo_builder(mv).set_target_isr([2, 1]), {}) == NO_LEADER_CHANGE


@pytest.mark.parametrize("mv", ["3.4-IV0", "3.5-IV2"])
def test_leader_epoch_bump_on_isr_shrink(mv):
    """Mirrors PartitionChangeBuilderTest#testLeaderEpochBumpOnIsrShrink (KAFKA-15021)."""
    assert trigger_leader_epoch_bump(foo_builder(mv).set_target_isr([2, 1]), {}) == 1


@pytest.mark.parametrize("mv", ["3.4-IV0", "3.5-IV2", "3.6-IV0", "3.7-IV2", "3.9-IV0"])
def test_no_leader_epoch_bump_on_isr_expansion(mv):
    """Mirrors PartitionChangeBuilderTest#testNoLeaderEpochBumpOnIsrExpansion."""
    assert trigger_leader_epoch_bump(foo_builder(mv).set_target_isr([2, 1, 3, 4]), {}) == NO_LEADER_CHANGE


@pytest.mark.parametrize("mv", ["3.4-IV0", "3.5-IV2", "3.6-IV0", "3.7-IV2", "3.9-IV0"])
def test_leader_epoch_bump_on_new_replica_set_disjoint(mv):
    """Mirrors PartitionChangeBuilderTest#testLeaderEpochBumpOnNewReplicaSetDisjoint."""
    assert trigger_leader_epoch_bump(foo_builder(mv).set_target_replicas([2, 1, 4]), {}) == 1


@pytest.mark.parametrize("mv", ["3.4-IV0", "3.5-IV2", "3.6-IV0", "3.7-IV2", "3.9-IV0"])
def test_no_leader_epoch_bump_on_empty_target_isr(mv):
    """Mirrors PartitionChangeBuilderTest#testNoLeaderEpochBumpOnEmptyTargetIsr (KAFKA-16624): an empty
    target assignment with no ISR in the record triggers no ISR-shrink bump, even where shrinks bump."""
    partition = PartitionRegistration(replicas=(2,), isr=(2,), leader=2, leader_recovery_state=RECOVERED,
                                      leader_epoch=100, partition_epoch=200)
    builder = builder_at(partition, FOO_ID, lambda r: True, mv).set_target_replicas([])
    record: dict = {}
    builder.trigger_leader_epoch_bump_for_isr_shrink_if_needed(record)
    assert record.get("leader", NO_LEADER_CHANGE) == NO_LEADER_CHANGE


def test_no_leader_epoch_bump_on_empty_target_isr_build():
    """PartitionChangeBuilderTest#testNoLeaderEpochBumpOnEmptyTargetIsr through build (kafka_ref's own
    check): before 3.6, dropping the only ISR member, who is not the leader, writes no record."""
    partition = PartitionRegistration(replicas=(2, 1), isr=(2,), leader=NO_LEADER, leader_recovery_state=RECOVERED,
                                      leader_epoch=100, partition_epoch=200)
    builder = builder_at(partition, FOO_ID, lambda r: False, "3.5-IV2").set_target_isr([])
    assert builder.build() is None


def test_no_change():
    """Mirrors PartitionChangeBuilderTest#testNoChange."""
    assert foo_builder().build() is None
    assert foo_builder().set_election(Election.UNCLEAN).build() is None
    assert bar_builder().build() is None
    assert bar_builder().set_election(Election.UNCLEAN).build() is None
    assert baz_builder().set_election(Election.PREFERRED).build() is None


def test_isr_change_doesnt_bump_leader_epoch():
    """Mirrors PartitionChangeBuilderTest#testIsrChangeDoesntBumpLeaderEpoch."""
    assert foo_builder().set_target_isr([2, 1]).build() == PartitionChangeRecord(
        partition_id=0, topic_id=FOO_ID, isr=(2, 1))


def test_isr_change_and_leader_change():
    """Mirrors PartitionChangeBuilderTest#testIsrChangeAndLeaderChange."""
    assert foo_builder().set_target_isr([2, 3]).build() == PartitionChangeRecord(
        partition_id=0, topic_id=FOO_ID, isr=(2, 3), leader=2)


def test_reassignment_rearranges_replicas():
    """Mirrors PartitionChangeBuilderTest#testReassignmentRearrangesReplicas."""
    assert foo_builder().set_target_replicas([3, 2, 1]).build() == PartitionChangeRecord(
        partition_id=0, topic_id=FOO_ID, replicas=(3, 2, 1))


def test_isr_enlargement_completes_reassignment():
    """Mirrors PartitionChangeBuilderTest#testIsrEnlargementCompletesReassignment."""
    assert bar_builder().set_target_isr([1, 2, 3, 4]).build() == PartitionChangeRecord(
        partition_id=0, topic_id=BAR_ID, replicas=(2, 3, 4), isr=(2, 3, 4), leader=2,
        removing_replicas=(), adding_replicas=())


def test_revert_reassignment():
    """Mirrors PartitionChangeBuilderTest#testRevertReassignment."""
    revert = PartitionReassignmentRevert.of(BAR.replicas, BAR.isr, BAR.removing_replicas, BAR.adding_replicas)
    assert revert.replicas == (1, 2, 3)
    assert revert.isr == (1, 2, 3)
    change = (bar_builder().set_target_replicas(revert.replicas).set_target_isr(revert.isr)
              .set_target_removing([]).set_target_adding([]).build())
    # Broker 4 leaves the assignment: the same leader is written again, bumping the leader epoch.
    assert change == PartitionChangeRecord(partition_id=0, topic_id=BAR_ID, replicas=(1, 2, 3), leader=1,
                                           removing_replicas=(), adding_replicas=())


def test_removing_replica_reassignment():
    """Mirrors PartitionChangeBuilderTest#testRemovingReplicaReassignment."""
    replicas = PartitionReassignmentReplicas.from_assignments(FOO.replicas, [1, 2])
    assert replicas.removing == (3,)
    assert replicas.adding == ()
    assert replicas.replicas == (1, 2, 3)
    change = foo_builder().set_target_replicas(replicas.replicas).set_target_removing(replicas.removing).build()
    # The ISR already holds 1 and 2, so the reassignment completes in the same record.
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO_ID, replicas=(1, 2), isr=(2, 1), leader=1)


def test_adding_replica_reassignment():
    """Mirrors PartitionChangeBuilderTest#testAddingReplicaReassignment."""
    replicas = PartitionReassignmentReplicas.from_assignments(FOO.replicas, [1, 2, 3, 4])
    assert replicas.removing == ()
    assert replicas.adding == (4,)
    assert replicas.replicas == (1, 2, 3, 4)
    change = foo_builder().set_target_replicas(replicas.replicas).set_target_adding(replicas.adding).build()
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO_ID, replicas=(1, 2, 3, 4), adding_replicas=(4,))


def test_unclean_leader_election():
    """Mirrors PartitionChangeBuilderTest#testUncleanLeaderElection (version 0: no ELR to clear)."""
    assert foo_builder().set_election(Election.UNCLEAN).set_target_isr([3]).build() == PartitionChangeRecord(
        partition_id=0, topic_id=FOO_ID, isr=(2,), leader=2, leader_recovery_state=int(RECOVERING))
    expected = PartitionChangeRecord(partition_id=0, topic_id=OFFLINE_ID, isr=(1,), leader=1,
                                     leader_recovery_state=int(RECOVERING))
    assert offline_builder().set_election(Election.UNCLEAN).build() == expected
    assert offline_builder().set_election(Election.UNCLEAN).set_target_isr([2]).build() == expected


@pytest.mark.parametrize("leader_recovery_supported", [True, False])
def test_change_in_leadership_does_not_change_recovery_state(leader_recovery_supported):
    """Mirrors PartitionChangeBuilderTest#testChangeInLeadershipDoesNotChangeRecoveryState (without ZK migration)."""
    leader_id = 1
    registration = PartitionRegistration(replicas=(1, 2, 3), isr=(leader_id,), leader=leader_id,
                                         leader_recovery_state=RECOVERING, leader_epoch=100, partition_epoch=200)
    mv = leader_recovery_mv(leader_recovery_supported)
    # The last leader goes offline: no leader, the ISR (never empty) keeps it, still RECOVERING.
    change = builder_at(registration, FOO_ID, lambda b: False, mv).set_target_isr([]).build()
    assert change.leader_recovery_state == LeaderRecoveryState.NO_CHANGE
    assert change.leader == NO_LEADER
    registration = registration.merge(change)
    assert registration.leader == NO_LEADER
    assert registration.isr[0] == leader_id
    assert registration.leader_recovery_state is RECOVERING
    # It comes back: elected from the ISR, still RECOVERING.
    change = builder_at(registration, FOO_ID, lambda b: True, mv).build()
    assert change.leader_recovery_state == LeaderRecoveryState.NO_CHANGE
    registration = registration.merge(change)
    assert registration.leader == leader_id
    assert registration.isr[0] == leader_id
    assert registration.leader_recovery_state is RECOVERING
    assert (registration.leader_epoch, registration.partition_epoch) == (102, 202)


@pytest.mark.parametrize("leader_recovery_supported", [True, False])
def test_unclean_sets_leader_recovering_state(leader_recovery_supported):
    """Mirrors PartitionChangeBuilderTest#testUncleanSetsLeaderRecoveringState (without ZK migration)."""
    leader_id = 1
    registration = PartitionRegistration(replicas=(1, 2, 3), isr=(2, 3), leader=NO_LEADER,
                                         leader_recovery_state=RECOVERED, leader_epoch=100, partition_epoch=200)
    builder = builder_at(registration, FOO_ID, lambda b: b == leader_id,
                         leader_recovery_mv(leader_recovery_supported)).set_election(Election.UNCLEAN)
    change = builder.build()
    expected_change = int(RECOVERING) if leader_recovery_supported else LeaderRecoveryState.NO_CHANGE
    assert change.leader_recovery_state == expected_change
    assert change.leader == leader_id
    assert change.isr == (leader_id,)
    registration = registration.merge(change)
    assert registration.leader == leader_id
    assert registration.isr == (leader_id,)
    assert registration.leader_recovery_state is (RECOVERING if leader_recovery_supported else RECOVERED)


def test_stopped_leader_is_demoted_after_reassignment_completes_even_if_no_new_eligible_leaders():
    """Mirrors PartitionChangeBuilderTest#testStoppedLeaderIsDemotedAfterReassignmentCompletesEvenIfNoNewEligibleLeaders."""
    # A move from [0, 1] to [2, 3] under way; the leader 0 is being removed and nobody may lead.
    part = PartitionRegistration(replicas=(2, 3, 0, 1), isr=(0, 1), removing_replicas=(0, 1), adding_replicas=(2, 3),
                                 leader=0, leader_recovery_state=RECOVERED, leader_epoch=0, partition_epoch=0)
    topic_id = Uuid(7, 7)
    builder = builder_at(part, topic_id, lambda b: False, leader_recovery_mv(False))
    assert part.leader == 0
    assert builder.set_target_isr([0, 1, 2, 3]).build() == PartitionChangeRecord(
        partition_id=0, topic_id=topic_id, replicas=(2, 3), isr=(2, 3), removing_replicas=(), adding_replicas=(),
        leader=NO_LEADER)


def test_eligible_leader_replicas_isr_shrink_below_min_isr_without_elr():
    """Mirrors PartitionChangeBuilderTest#testEligibleLeaderReplicas_IsrShrinkBelowMinISR at version 0
    (ELR off): the ISR shrinks, the preferred leader stays, and no leader epoch bump at 3.7."""
    partition = PartitionRegistration(replicas=(1, 2, 3, 4), isr=(1, 2, 3, 4), leader=1, leader_recovery_state=RECOVERED,
                                      leader_epoch=100, partition_epoch=200)
    builder = builder_at(partition, FOO_ID, lambda r: r != 3, VERSION_0_MV).set_election(Election.PREFERRED)
    builder.set_target_isr([1, 2])
    expected = PartitionChangeRecord(partition_id=0, topic_id=FOO_ID, isr=(1, 2), leader=NO_LEADER_CHANGE,
                                     leader_recovery_state=LeaderRecoveryState.NO_CHANGE)
    assert builder.build() == expected
    merged = partition.merge(builder.build())
    assert (merged.isr, merged.leader, merged.leader_epoch, merged.partition_epoch) == ((1, 2), 1, 100, 201)
