"""The controller's leader elections: ElectLeaders and the automatic preferred-leader balancing.

Mirrors the election half of org.apache.kafka.controller.ReplicationControlManager (Kafka 3.4):
#electLeaders and #electLeader (PREFERRED or UNCLEAN), and #arePartitionLeadersImbalanced /
#maybeBalancePartitionLeaders (auto.leader.rebalance.enable). ``ReplicationLeaderElections`` is a
mixin of ``ReplicationControlManager``
(kafka_ref/controller/quorum/replication_control_manager.py), kept apart to keep that module
within the project's size rule.
"""

from __future__ import annotations

from typing import Any

from kafka_ref.common.errors import Errors, InvalidRequestException
from kafka_ref.common.requests.elect_leaders import (
    ElectionType,
    ElectLeadersRequest,
    ElectLeadersResponse,
    PartitionResult,
    ReplicaElectionResult,
)
from kafka_ref.controller.quorum.partition_change_builder import Election
from kafka_ref.controller.reassignment import ApiError


class ReplicationLeaderElections:
    """ReplicationControlManager's leader election methods (``self`` is the ReplicationControlManager)."""

    def are_partition_leaders_imbalanced(self) -> bool:
        """Mirrors ReplicationControlManager#arePartitionLeadersImbalanced."""
        return bool(self.imbalanced_partitions)

    def maybe_balance_partition_leaders(self) -> tuple[list[Any], bool]:
        """Mirrors ReplicationControlManager#maybeBalancePartitionLeaders: (records, reschedule at once).

        A preferred election for each imbalanced partition, at most max_elections_per_imbalance
        records; True when it stopped there with partitions left to try.
        """
        records: list[Any] = []
        reschedule_immediately = False
        for topic_id, partition_id in list(self.imbalanced_partitions):
            # 1. The bound.
            if len(records) >= self.max_elections_per_imbalance:
                reschedule_immediately = True
                break
            # 2. A partition that is gone is skipped.
            partition = self.get_partition(topic_id, partition_id)
            if partition is None:
                continue
            # 3. The preferred election, if the preferred replica can lead.
            change = self._builder(partition, topic_id, partition_id, self.cluster_control.is_active).set_election(
                Election.PREFERRED).build()
            if change is not None:
                records.append(change)
        return records, reschedule_immediately

    def elect_leaders(self, request: ElectLeadersRequest) -> tuple[list[Any], ElectLeadersResponse]:
        """Mirrors ReplicationControlManager#electLeaders.

        1. The election type must be PREFERRED or UNCLEAN (else INVALID_REQUEST).
        2. No partitions named (None): try every partition of every topic, and leave the ones
           that need no election out of the answer.
        3. Named partitions: try each and answer each, ELECTION_NOT_NEEDED included.
        """
        # 1. The election type.
        try:
            election = Election.UNCLEAN if ElectionType(request.election_type) is ElectionType.UNCLEAN else Election.PREFERRED
        except ValueError:
            raise InvalidRequestException(f"Unknown election type {request.election_type}") from None
        records: list[Any] = []
        results: list[ReplicaElectionResult] = []
        if request.topic_partitions is None:
            # 2. Every partition.
            for name, topic_id in self.topics_by_name.items():
                topic = self.topics.get(topic_id)
                answered = []
                for partition_id in sorted(topic.parts) if topic is not None else ():
                    error = self.elect_leader(name, partition_id, election, records)
                    if error.error is not Errors.ELECTION_NOT_NEEDED:
                        answered.append(PartitionResult(partition_id=partition_id, error_code=error.error.code,
                                                        error_message=error.message))
                results.append(ReplicaElectionResult(topic=name, partition_result=tuple(answered)))
        else:
            # 3. The named partitions.
            for topic in request.topic_partitions:
                answered = []
                for partition_id in topic.partitions:
                    error = self.elect_leader(topic.topic, partition_id, election, records)
                    answered.append(PartitionResult(partition_id=partition_id, error_code=error.error.code,
                                                    error_message=error.message))
                results.append(ReplicaElectionResult(topic=topic.topic, partition_result=tuple(answered)))
        return records, ElectLeadersResponse(replica_election_results=tuple(results))

    def elect_leader(self, topic_name: str, partition_id: int, election: Election, records: list[Any]) -> ApiError:
        """Mirrors ReplicationControlManager#electLeader (PREFERRED or UNCLEAN).

        1. The topic and partition must exist (UNKNOWN_TOPIC_OR_PARTITION, saying which is
        missing); 2. a partition that already has what the election wants needs none; 3. build
        the change: none possible is PREFERRED_LEADER_NOT_AVAILABLE or ELIGIBLE_LEADERS_NOT_AVAILABLE.
        Errors made from a code alone carry its default text, as Kafka's ApiError(Errors) does.
        """
        # 1. Existence.
        topic_id = self.topics_by_name.get(topic_name)
        if topic_id is None:
            return ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic_name}")
        topic = self.topics.get(topic_id)
        if topic is None:
            return ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic id as {topic_id}")
        partition = topic.parts.get(partition_id)
        if partition is None:
            return ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic_name}-{partition_id}")
        # 2. Nothing to do.
        if (election is Election.PREFERRED and partition.has_preferred_leader()) or (
                election is Election.UNCLEAN and partition.has_leader()):
            return ApiError(Errors.ELECTION_NOT_NEEDED, Errors.ELECTION_NOT_NEEDED.message)
        # 3. The change.
        builder = self._builder(partition, topic_id, partition_id, self.cluster_control.is_active).set_election(election)
        change = builder.build()
        if change is None:
            error = Errors.PREFERRED_LEADER_NOT_AVAILABLE if election is Election.PREFERRED else Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE
            return ApiError(error, error.message)
        records.append(change)
        return ApiError(Errors.NONE)
