"""Kafka's error vocabulary: the exception hierarchy and the `Errors` protocol enum.

Mirrors org.apache.kafka.common.protocol.Errors and the classes of
org.apache.kafka.common.errors (Kafka 3.9: codes -1 .. 127), plus the few non-protocol
exceptions the broker, config and ZooKeeper controller code raise
(org.apache.kafka.common.config.ConfigException, kafka.common.StateChangeFailedException,
kafka.common.NoReplicaOnlineException, kafka.common.LeaderElectionNotNeededException).

How the pieces fit:

* Every error that crosses the wire is an `ApiException` subclass named exactly like Kafka's Java
  class. The parent of each class follows Kafka 3.9, so `issubclass(X, RetriableException)` and
  `issubclass(X, InvalidMetadataException)` answer the same way Kafka's `instanceof` does (a
  client retries the first kind; for the second it also refreshes metadata before retrying).
* `Errors` maps numeric codes to those classes. A broker that catches an exception turns it into
  a code with `Errors.for_exception(exc)`; whoever reads a response turns a code back into an
  exception with `Errors.for_code(code).exception(message)`.
* `exc.error` (on a class or an instance) names the `Errors` member of an exception class.

The default messages are our own wording of what each code means, not Kafka's strings.
"""

from __future__ import annotations

import enum
import logging

_log = logging.getLogger(__name__)


class KafkaException(Exception):
    """Mirrors org.apache.kafka.common.KafkaException.

    Root of every exception raised by Kafka code (Java's is an unchecked RuntimeException).
    """


class _ErrorOf:
    """Descriptor giving the `Errors` member of an exception class, on the class or an instance."""

    def __get__(self, obj: object, owner: type) -> Errors:
        return Errors._for_exception_class(owner)


class ApiException(KafkaException):
    """Mirrors org.apache.kafka.common.errors.ApiException.

    An error that is part of the protocol: it has an error code and travels in responses.
    Without a message the instance carries the default message of its error code.
    `error` is the `Errors` member found by walking the class hierarchy (as
    `Errors.for_exception` does); a class with no code of its own reports its nearest
    ancestor's code, or UNKNOWN_SERVER_ERROR.
    """

    error = _ErrorOf()

    def __init__(self, message: str | None = None) -> None:
        # 1. Kafka builds the per-code instance from the enum's default text; we do the same
        #    lazily when the caller gives no message.
        if message is None:
            message = self.error.message
        super().__init__(message)

    @property
    def message(self) -> str:
        """Mirrors java.lang.Throwable#getMessage."""
        return str(self.args[0]) if self.args else ""


class RetriableException(ApiException):
    """Mirrors org.apache.kafka.common.errors.RetriableException: the same request may succeed later."""


class InvalidMetadataException(RetriableException):
    """Mirrors org.apache.kafka.common.errors.InvalidMetadataException: refresh metadata, then retry."""


class AuthorizationException(ApiException):
    """Mirrors org.apache.kafka.common.errors.AuthorizationException."""


class AuthenticationException(ApiException):
    """Mirrors org.apache.kafka.common.errors.AuthenticationException."""


class InvalidConfigurationException(ApiException):
    """Mirrors org.apache.kafka.common.errors.InvalidConfigurationException."""


class InvalidOffsetException(ApiException):
    """Mirrors org.apache.kafka.common.errors.InvalidOffsetException."""


class OutOfOrderSequenceException(ApiException):
    """Mirrors org.apache.kafka.common.errors.OutOfOrderSequenceException."""


class NotLeaderForPartitionException(InvalidMetadataException):
    """Mirrors org.apache.kafka.common.errors.NotLeaderForPartitionException.

    Deprecated in Kafka since 2.6 and no longer tied to a code: code 6 is now
    NOT_LEADER_OR_FOLLOWER. Kept because `NotLeaderOrFollowerException` still extends it.
    """


class StaleMetadataException(InvalidMetadataException):
    """Mirrors org.apache.kafka.common.errors.StaleMetadataException.

    Client-side only (no error code): the metadata a call needs is missing or out of date, so
    the call refreshes it and retries.
    """


# One class per protocol error, one line each, grouped by parent (Kafka 3.9 parentage).
# -- InvalidMetadataException (retriable, refresh metadata first) --
class UnknownTopicOrPartitionException(InvalidMetadataException): """Mirrors org.apache.kafka.common.errors.UnknownTopicOrPartitionException."""  # noqa: E501,E701
class LeaderNotAvailableException(InvalidMetadataException): """Mirrors org.apache.kafka.common.errors.LeaderNotAvailableException."""  # noqa: E501,E701
class NotLeaderOrFollowerException(NotLeaderForPartitionException): """Mirrors org.apache.kafka.common.errors.NotLeaderOrFollowerException."""  # noqa: E501,E701
class ReplicaNotAvailableException(InvalidMetadataException): """Mirrors org.apache.kafka.common.errors.ReplicaNotAvailableException."""  # noqa: E501,E701
class NetworkException(InvalidMetadataException): """Mirrors org.apache.kafka.common.errors.NetworkException."""  # noqa: E501,E701
class KafkaStorageException(InvalidMetadataException): """Mirrors org.apache.kafka.common.errors.KafkaStorageException."""  # noqa: E501,E701
class ListenerNotFoundException(InvalidMetadataException): """Mirrors org.apache.kafka.common.errors.ListenerNotFoundException."""  # noqa: E501,E701
class FencedLeaderEpochException(InvalidMetadataException): """Mirrors org.apache.kafka.common.errors.FencedLeaderEpochException."""  # noqa: E501,E701
class PreferredLeaderNotAvailableException(InvalidMetadataException): """Mirrors org.apache.kafka.common.errors.PreferredLeaderNotAvailableException."""  # noqa: E501,E701
class EligibleLeadersNotAvailableException(InvalidMetadataException): """Mirrors org.apache.kafka.common.errors.EligibleLeadersNotAvailableException."""  # noqa: E501,E701
class ElectionNotNeededException(InvalidMetadataException): """Mirrors org.apache.kafka.common.errors.ElectionNotNeededException."""  # noqa: E501,E701
class UnknownTopicIdException(InvalidMetadataException): """Mirrors org.apache.kafka.common.errors.UnknownTopicIdException."""  # noqa: E501,E701
class InconsistentTopicIdException(InvalidMetadataException): """Mirrors org.apache.kafka.common.errors.InconsistentTopicIdException."""  # noqa: E501,E701
# -- RetriableException --
class CorruptRecordException(RetriableException): """Mirrors org.apache.kafka.common.errors.CorruptRecordException."""  # noqa: E501,E701
class TimeoutException(RetriableException): """Mirrors org.apache.kafka.common.errors.TimeoutException."""  # noqa: E501,E701
class CoordinatorLoadInProgressException(RetriableException): """Mirrors org.apache.kafka.common.errors.CoordinatorLoadInProgressException."""  # noqa: E501,E701
class CoordinatorNotAvailableException(RetriableException): """Mirrors org.apache.kafka.common.errors.CoordinatorNotAvailableException."""  # noqa: E501,E701
class NotCoordinatorException(RetriableException): """Mirrors org.apache.kafka.common.errors.NotCoordinatorException."""  # noqa: E501,E701
class NotEnoughReplicasException(RetriableException): """Mirrors org.apache.kafka.common.errors.NotEnoughReplicasException."""  # noqa: E501,E701
class NotEnoughReplicasAfterAppendException(RetriableException): """Mirrors org.apache.kafka.common.errors.NotEnoughReplicasAfterAppendException."""  # noqa: E501,E701
class NotControllerException(RetriableException): """Mirrors org.apache.kafka.common.errors.NotControllerException."""  # noqa: E501,E701
class ConcurrentTransactionsException(RetriableException): """Mirrors org.apache.kafka.common.errors.ConcurrentTransactionsException."""  # noqa: E501,E701
class FetchSessionIdNotFoundException(RetriableException): """Mirrors org.apache.kafka.common.errors.FetchSessionIdNotFoundException."""  # noqa: E501,E701
class InvalidFetchSessionEpochException(RetriableException): """Mirrors org.apache.kafka.common.errors.InvalidFetchSessionEpochException."""  # noqa: E501,E701
class UnknownLeaderEpochException(RetriableException): """Mirrors org.apache.kafka.common.errors.UnknownLeaderEpochException."""  # noqa: E501,E701
class OffsetNotAvailableException(RetriableException): """Mirrors org.apache.kafka.common.errors.OffsetNotAvailableException."""  # noqa: E501,E701
class UnstableOffsetCommitException(RetriableException): """Mirrors org.apache.kafka.common.errors.UnstableOffsetCommitException."""  # noqa: E501,E701
class ThrottlingQuotaExceededException(RetriableException):
    """Mirrors org.apache.kafka.common.errors.ThrottlingQuotaExceededException (with the throttle time the broker asked for)."""

    def __init__(self, message: str | None = None, throttle_time_ms: int = 0) -> None:
        super().__init__(message)
        self.throttle_time_ms = throttle_time_ms


class FetchSessionTopicIdException(RetriableException): """Mirrors org.apache.kafka.common.errors.FetchSessionTopicIdException."""  # noqa: E501,E701
class ShareSessionNotFoundException(RetriableException): """Mirrors org.apache.kafka.common.errors.ShareSessionNotFoundException."""  # noqa: E501,E701
class InvalidShareSessionEpochException(RetriableException): """Mirrors org.apache.kafka.common.errors.InvalidShareSessionEpochException."""  # noqa: E501,E701
# -- AuthorizationException / AuthenticationException / InvalidConfigurationException / others --
class TopicAuthorizationException(AuthorizationException): """Mirrors org.apache.kafka.common.errors.TopicAuthorizationException."""  # noqa: E501,E701
class GroupAuthorizationException(AuthorizationException): """Mirrors org.apache.kafka.common.errors.GroupAuthorizationException."""  # noqa: E501,E701
class ClusterAuthorizationException(AuthorizationException): """Mirrors org.apache.kafka.common.errors.ClusterAuthorizationException."""  # noqa: E501,E701
class TransactionalIdAuthorizationException(AuthorizationException): """Mirrors org.apache.kafka.common.errors.TransactionalIdAuthorizationException."""  # noqa: E501,E701
class DelegationTokenAuthorizationException(AuthorizationException): """Mirrors org.apache.kafka.common.errors.DelegationTokenAuthorizationException."""  # noqa: E501,E701
class UnsupportedSaslMechanismException(AuthenticationException): """Mirrors org.apache.kafka.common.errors.UnsupportedSaslMechanismException."""  # noqa: E501,E701
class IllegalSaslStateException(AuthenticationException): """Mirrors org.apache.kafka.common.errors.IllegalSaslStateException."""  # noqa: E501,E701
class SaslAuthenticationException(AuthenticationException): """Mirrors org.apache.kafka.common.errors.SaslAuthenticationException."""  # noqa: E501,E701
class InvalidTopicException(InvalidConfigurationException): """Mirrors org.apache.kafka.common.errors.InvalidTopicException."""  # noqa: E501,E701
class OffsetOutOfRangeException(InvalidOffsetException): """Mirrors org.apache.kafka.common.errors.OffsetOutOfRangeException."""  # noqa: E501,E701
class UnknownProducerIdException(OutOfOrderSequenceException): """Mirrors org.apache.kafka.common.errors.UnknownProducerIdException."""  # noqa: E501,E701
# -- ApiException (not retriable) --
class UnknownServerException(ApiException): """Mirrors org.apache.kafka.common.errors.UnknownServerException."""  # noqa: E501,E701
class InvalidFetchSizeException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidFetchSizeException."""  # noqa: E501,E701
class BrokerNotAvailableException(ApiException): """Mirrors org.apache.kafka.common.errors.BrokerNotAvailableException."""  # noqa: E501,E701
class RecordTooLargeException(ApiException): """Mirrors org.apache.kafka.common.errors.RecordTooLargeException."""  # noqa: E501,E701
class ControllerMovedException(ApiException): """Mirrors org.apache.kafka.common.errors.ControllerMovedException (error STALE_CONTROLLER_EPOCH)."""  # noqa: E501,E701
class OffsetMetadataTooLarge(ApiException): """Mirrors org.apache.kafka.common.errors.OffsetMetadataTooLarge."""  # noqa: E501,E701
class RecordBatchTooLargeException(ApiException): """Mirrors org.apache.kafka.common.errors.RecordBatchTooLargeException."""  # noqa: E501,E701
class InvalidRequiredAcksException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidRequiredAcksException."""  # noqa: E501,E701
class IllegalGenerationException(ApiException): """Mirrors org.apache.kafka.common.errors.IllegalGenerationException."""  # noqa: E501,E701
class InconsistentGroupProtocolException(ApiException): """Mirrors org.apache.kafka.common.errors.InconsistentGroupProtocolException."""  # noqa: E501,E701
class InvalidGroupIdException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidGroupIdException."""  # noqa: E501,E701
class UnknownMemberIdException(ApiException): """Mirrors org.apache.kafka.common.errors.UnknownMemberIdException."""  # noqa: E501,E701
class InvalidSessionTimeoutException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidSessionTimeoutException."""  # noqa: E501,E701
class RebalanceInProgressException(ApiException): """Mirrors org.apache.kafka.common.errors.RebalanceInProgressException."""  # noqa: E501,E701
class InvalidCommitOffsetSizeException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidCommitOffsetSizeException."""  # noqa: E501,E701
class InvalidTimestampException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidTimestampException."""  # noqa: E501,E701
class UnsupportedVersionException(ApiException): """Mirrors org.apache.kafka.common.errors.UnsupportedVersionException."""  # noqa: E501,E701
class TopicExistsException(ApiException): """Mirrors org.apache.kafka.common.errors.TopicExistsException."""  # noqa: E501,E701
class InvalidPartitionsException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidPartitionsException."""  # noqa: E501,E701
class InvalidReplicationFactorException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidReplicationFactorException."""  # noqa: E501,E701
class InvalidReplicaAssignmentException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidReplicaAssignmentException."""  # noqa: E501,E701
class InvalidRequestException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidRequestException."""  # noqa: E501,E701
class UnsupportedForMessageFormatException(ApiException): """Mirrors org.apache.kafka.common.errors.UnsupportedForMessageFormatException."""  # noqa: E501,E701
class PolicyViolationException(ApiException): """Mirrors org.apache.kafka.common.errors.PolicyViolationException."""  # noqa: E501,E701
class DuplicateSequenceException(ApiException): """Mirrors org.apache.kafka.common.errors.DuplicateSequenceException."""  # noqa: E501,E701
class InvalidProducerEpochException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidProducerEpochException."""  # noqa: E501,E701
class InvalidTxnStateException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidTxnStateException."""  # noqa: E501,E701
class InvalidPidMappingException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidPidMappingException."""  # noqa: E501,E701
class InvalidTxnTimeoutException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidTxnTimeoutException."""  # noqa: E501,E701
class TransactionCoordinatorFencedException(ApiException): """Mirrors org.apache.kafka.common.errors.TransactionCoordinatorFencedException."""  # noqa: E501,E701
class SecurityDisabledException(ApiException): """Mirrors org.apache.kafka.common.errors.SecurityDisabledException."""  # noqa: E501,E701
class OperationNotAttemptedException(ApiException): """Mirrors org.apache.kafka.common.errors.OperationNotAttemptedException."""  # noqa: E501,E701
class LogDirNotFoundException(ApiException): """Mirrors org.apache.kafka.common.errors.LogDirNotFoundException."""  # noqa: E501,E701
class ReassignmentInProgressException(ApiException): """Mirrors org.apache.kafka.common.errors.ReassignmentInProgressException."""  # noqa: E501,E701
class DelegationTokenDisabledException(ApiException): """Mirrors org.apache.kafka.common.errors.DelegationTokenDisabledException."""  # noqa: E501,E701
class DelegationTokenNotFoundException(ApiException): """Mirrors org.apache.kafka.common.errors.DelegationTokenNotFoundException."""  # noqa: E501,E701
class DelegationTokenOwnerMismatchException(ApiException): """Mirrors org.apache.kafka.common.errors.DelegationTokenOwnerMismatchException."""  # noqa: E501,E701
class UnsupportedByAuthenticationException(ApiException): """Mirrors org.apache.kafka.common.errors.UnsupportedByAuthenticationException."""  # noqa: E501,E701
class DelegationTokenExpiredException(ApiException): """Mirrors org.apache.kafka.common.errors.DelegationTokenExpiredException."""  # noqa: E501,E701
class InvalidPrincipalTypeException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidPrincipalTypeException."""  # noqa: E501,E701
class GroupNotEmptyException(ApiException): """Mirrors org.apache.kafka.common.errors.GroupNotEmptyException."""  # noqa: E501,E701
class GroupIdNotFoundException(ApiException): """Mirrors org.apache.kafka.common.errors.GroupIdNotFoundException."""  # noqa: E501,E701
class TopicDeletionDisabledException(ApiException): """Mirrors org.apache.kafka.common.errors.TopicDeletionDisabledException."""  # noqa: E501,E701
class UnsupportedCompressionTypeException(ApiException): """Mirrors org.apache.kafka.common.errors.UnsupportedCompressionTypeException."""  # noqa: E501,E701
class StaleBrokerEpochException(ApiException): """Mirrors org.apache.kafka.common.errors.StaleBrokerEpochException."""  # noqa: E501,E701
class MemberIdRequiredException(ApiException): """Mirrors org.apache.kafka.common.errors.MemberIdRequiredException."""  # noqa: E501,E701
class GroupMaxSizeReachedException(ApiException): """Mirrors org.apache.kafka.common.errors.GroupMaxSizeReachedException."""  # noqa: E501,E701
class FencedInstanceIdException(ApiException): """Mirrors org.apache.kafka.common.errors.FencedInstanceIdException."""  # noqa: E501,E701
class NoReassignmentInProgressException(ApiException): """Mirrors org.apache.kafka.common.errors.NoReassignmentInProgressException."""  # noqa: E501,E701
class GroupSubscribedToTopicException(ApiException): """Mirrors org.apache.kafka.common.errors.GroupSubscribedToTopicException."""  # noqa: E501,E701
class InvalidRecordException(ApiException): """Mirrors org.apache.kafka.common.InvalidRecordException (package common, not errors)."""  # noqa: E501,E701
class ProducerFencedException(ApiException): """Mirrors org.apache.kafka.common.errors.ProducerFencedException."""  # noqa: E501,E701
class ResourceNotFoundException(ApiException): """Mirrors org.apache.kafka.common.errors.ResourceNotFoundException."""  # noqa: E501,E701
class DuplicateResourceException(ApiException): """Mirrors org.apache.kafka.common.errors.DuplicateResourceException."""  # noqa: E501,E701
class UnacceptableCredentialException(ApiException): """Mirrors org.apache.kafka.common.errors.UnacceptableCredentialException."""  # noqa: E501,E701
class InconsistentVoterSetException(ApiException): """Mirrors org.apache.kafka.common.errors.InconsistentVoterSetException."""  # noqa: E501,E701
class InvalidUpdateVersionException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidUpdateVersionException."""  # noqa: E501,E701
class FeatureUpdateFailedException(ApiException): """Mirrors org.apache.kafka.common.errors.FeatureUpdateFailedException."""  # noqa: E501,E701
class PrincipalDeserializationException(ApiException): """Mirrors org.apache.kafka.common.errors.PrincipalDeserializationException."""  # noqa: E501,E701
class SnapshotNotFoundException(ApiException): """Mirrors org.apache.kafka.common.errors.SnapshotNotFoundException."""  # noqa: E501,E701
class PositionOutOfRangeException(ApiException): """Mirrors org.apache.kafka.common.errors.PositionOutOfRangeException."""  # noqa: E501,E701
class DuplicateBrokerRegistrationException(ApiException): """Mirrors org.apache.kafka.common.errors.DuplicateBrokerRegistrationException."""  # noqa: E501,E701
class BrokerIdNotRegisteredException(ApiException): """Mirrors org.apache.kafka.common.errors.BrokerIdNotRegisteredException."""  # noqa: E501,E701
class InconsistentClusterIdException(ApiException): """Mirrors org.apache.kafka.common.errors.InconsistentClusterIdException."""  # noqa: E501,E701
class TransactionalIdNotFoundException(ApiException): """Mirrors org.apache.kafka.common.errors.TransactionalIdNotFoundException."""  # noqa: E501,E701
class IneligibleReplicaException(ApiException): """Mirrors org.apache.kafka.common.errors.IneligibleReplicaException."""  # noqa: E501,E701
class NewLeaderElectedException(ApiException): """Mirrors org.apache.kafka.common.errors.NewLeaderElectedException."""  # noqa: E501,E701
class OffsetMovedToTieredStorageException(ApiException): """Mirrors org.apache.kafka.common.errors.OffsetMovedToTieredStorageException."""  # noqa: E501,E701
class FencedMemberEpochException(ApiException): """Mirrors org.apache.kafka.common.errors.FencedMemberEpochException."""  # noqa: E501,E701
class UnreleasedInstanceIdException(ApiException): """Mirrors org.apache.kafka.common.errors.UnreleasedInstanceIdException."""  # noqa: E501,E701
class UnsupportedAssignorException(ApiException): """Mirrors org.apache.kafka.common.errors.UnsupportedAssignorException."""  # noqa: E501,E701
class StaleMemberEpochException(ApiException): """Mirrors org.apache.kafka.common.errors.StaleMemberEpochException."""  # noqa: E501,E701
class MismatchedEndpointTypeException(ApiException): """Mirrors org.apache.kafka.common.errors.MismatchedEndpointTypeException."""  # noqa: E501,E701
class UnsupportedEndpointTypeException(ApiException): """Mirrors org.apache.kafka.common.errors.UnsupportedEndpointTypeException."""  # noqa: E501,E701
class UnknownControllerIdException(ApiException): """Mirrors org.apache.kafka.common.errors.UnknownControllerIdException."""  # noqa: E501,E701
class UnknownSubscriptionIdException(ApiException): """Mirrors org.apache.kafka.common.errors.UnknownSubscriptionIdException."""  # noqa: E501,E701
class TelemetryTooLargeException(ApiException): """Mirrors org.apache.kafka.common.errors.TelemetryTooLargeException."""  # noqa: E501,E701
class InvalidRegistrationException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidRegistrationException."""  # noqa: E501,E701
class TransactionAbortableException(ApiException): """Mirrors org.apache.kafka.common.errors.TransactionAbortableException."""  # noqa: E501,E701
class InvalidRecordStateException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidRecordStateException."""  # noqa: E501,E701
class FencedStateEpochException(ApiException): """Mirrors org.apache.kafka.common.errors.FencedStateEpochException."""  # noqa: E501,E701
class InvalidVoterKeyException(ApiException): """Mirrors org.apache.kafka.common.errors.InvalidVoterKeyException."""  # noqa: E501,E701
class DuplicateVoterException(ApiException): """Mirrors org.apache.kafka.common.errors.DuplicateVoterException."""  # noqa: E501,E701
class VoterNotFoundException(ApiException): """Mirrors org.apache.kafka.common.errors.VoterNotFoundException."""  # noqa: E501,E701


# Kafka has no class of this name: error 11 is spelled STALE_CONTROLLER_EPOCH but raises
# ControllerMovedException. The alias lets code written after the error's name find Kafka's class.
StaleControllerEpochException = ControllerMovedException


@enum.unique
class Errors(enum.Enum):
    """Mirrors org.apache.kafka.common.protocol.Errors.

    Every error code of the Kafka protocol as of 3.9, named as in Kafka. The enum value is the
    numeric code, so `Errors(6) is Errors.NOT_LEADER_OR_FOLLOWER`. Each member knows its code,
    the exception class it stands for and a default message. `@enum.unique` plays the part of
    Kafka's start-up check that no code is used twice.
    """

    UNKNOWN_SERVER_ERROR = (-1, UnknownServerException, "The broker hit an error it did not expect while handling the request.")  # noqa: E501
    NONE = (0, None, None)
    OFFSET_OUT_OF_RANGE = (1, OffsetOutOfRangeException, "The offset asked for lies outside the range this partition's log holds.")  # noqa: E501
    CORRUPT_MESSAGE = (2, CorruptRecordException, "A record failed its CRC check, is oversized, has a null key on a compacted topic, or is otherwise damaged.")  # noqa: E501
    UNKNOWN_TOPIC_OR_PARTITION = (3, UnknownTopicOrPartitionException, "This broker does not host the topic-partition.")  # noqa: E501
    INVALID_FETCH_SIZE = (4, InvalidFetchSizeException, "The fetch size in the request is not valid.")  # noqa: E501
    LEADER_NOT_AVAILABLE = (5, LeaderNotAvailableException, "The partition has no leader right now; an election is in progress.")  # noqa: E501
    NOT_LEADER_OR_FOLLOWER = (6, NotLeaderOrFollowerException, "This broker is not the leader (for leader-only requests) or not a replica (for requests any replica may serve).")  # noqa: E501
    REQUEST_TIMED_OUT = (7, TimeoutException, "The request did not complete in time.")  # noqa: E501
    BROKER_NOT_AVAILABLE = (8, BrokerNotAvailableException, "The broker cannot be reached.")  # noqa: E501
    REPLICA_NOT_AVAILABLE = (9, ReplicaNotAvailableException, "The replica for the partition is not available; leader- or follower-only requests get NOT_LEADER_OR_FOLLOWER instead.")  # noqa: E501
    MESSAGE_TOO_LARGE = (10, RecordTooLargeException, "A record in the request exceeds the largest message size the broker accepts.")  # noqa: E501
    STALE_CONTROLLER_EPOCH = (11, ControllerMovedException, "The request came from a controller that is no longer current.")  # noqa: E501
    OFFSET_METADATA_TOO_LARGE = (12, OffsetMetadataTooLarge, "The metadata string of the offset commit is too long.")  # noqa: E501
    NETWORK_EXCEPTION = (13, NetworkException, "The connection closed before a response arrived.")  # noqa: E501
    COORDINATOR_LOAD_IN_PROGRESS = (14, CoordinatorLoadInProgressException, "The coordinator is still loading its state and cannot serve requests yet.")  # noqa: E501
    COORDINATOR_NOT_AVAILABLE = (15, CoordinatorNotAvailableException, "No coordinator is available right now.")  # noqa: E501
    NOT_COORDINATOR = (16, NotCoordinatorException, "This broker is not the coordinator for that key.")  # noqa: E501
    INVALID_TOPIC_EXCEPTION = (17, InvalidTopicException, "The request names a topic that is not valid for the operation.")  # noqa: E501
    RECORD_LIST_TOO_LARGE = (18, RecordBatchTooLargeException, "A record batch in the request is larger than the segment size allows.")  # noqa: E501
    NOT_ENOUGH_REPLICAS = (19, NotEnoughReplicasException, "The write was refused: the in-sync replica set is smaller than required.")  # noqa: E501
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = (20, NotEnoughReplicasAfterAppendException, "The write reached the log but fewer in-sync replicas than required acknowledged it.")  # noqa: E501
    INVALID_REQUIRED_ACKS = (21, InvalidRequiredAcksException, "The produce request asks for an acks value the broker does not accept.")  # noqa: E501
    ILLEGAL_GENERATION = (22, IllegalGenerationException, "The group generation in the request is not the current one.")  # noqa: E501
    INCONSISTENT_GROUP_PROTOCOL = (23, InconsistentGroupProtocolException, "The member's protocols do not match the group's, or the first member joined with no protocol.")  # noqa: E501
    INVALID_GROUP_ID = (24, InvalidGroupIdException, "The group id is not valid.")  # noqa: E501
    UNKNOWN_MEMBER_ID = (25, UnknownMemberIdException, "The coordinator does not know this member id.")  # noqa: E501
    INVALID_SESSION_TIMEOUT = (26, InvalidSessionTimeoutException, "The session timeout lies outside group.min.session.timeout.ms .. group.max.session.timeout.ms.")  # noqa: E501
    REBALANCE_IN_PROGRESS = (27, RebalanceInProgressException, "The group is rebalancing; the member has to rejoin.")  # noqa: E501
    INVALID_COMMIT_OFFSET_SIZE = (28, InvalidCommitOffsetSizeException, "The size of the offset commit data is not valid.")  # noqa: E501
    TOPIC_AUTHORIZATION_FAILED = (29, TopicAuthorizationException, "Not authorized to access the topic.")  # noqa: E501
    GROUP_AUTHORIZATION_FAILED = (30, GroupAuthorizationException, "Not authorized to access the group.")  # noqa: E501
    CLUSTER_AUTHORIZATION_FAILED = (31, ClusterAuthorizationException, "Not authorized for this cluster operation.")  # noqa: E501
    INVALID_TIMESTAMP = (32, InvalidTimestampException, "A record timestamp is outside the accepted range.")  # noqa: E501
    UNSUPPORTED_SASL_MECHANISM = (33, UnsupportedSaslMechanismException, "The broker does not offer the SASL mechanism asked for.")  # noqa: E501
    ILLEGAL_SASL_STATE = (34, IllegalSaslStateException, "The request is not allowed in the current SASL state.")  # noqa: E501
    UNSUPPORTED_VERSION = (35, UnsupportedVersionException, "The broker does not support this API version.")  # noqa: E501
    TOPIC_ALREADY_EXISTS = (36, TopicExistsException, "A topic with this name exists already.")  # noqa: E501
    INVALID_PARTITIONS = (37, InvalidPartitionsException, "The partition count is not valid (below 1).")  # noqa: E501
    INVALID_REPLICATION_FACTOR = (38, InvalidReplicationFactorException, "The replication factor is below 1 or above the number of live brokers.")  # noqa: E501
    INVALID_REPLICA_ASSIGNMENT = (39, InvalidReplicaAssignmentException, "The replica assignment is not valid.")  # noqa: E501
    INVALID_CONFIG = (40, InvalidConfigurationException, "The configuration is not valid.")  # noqa: E501
    NOT_CONTROLLER = (41, NotControllerException, "This broker is not the active controller.")  # noqa: E501
    INVALID_REQUEST = (42, InvalidRequestException, "The request is malformed or was sent to a broker that cannot understand it; see the broker log.")  # noqa: E501
    UNSUPPORTED_FOR_MESSAGE_FORMAT = (43, UnsupportedForMessageFormatException, "The broker's message format version cannot serve this request.")  # noqa: E501
    POLICY_VIOLATION = (44, PolicyViolationException, "The request breaks a configured policy.")  # noqa: E501
    OUT_OF_ORDER_SEQUENCE_NUMBER = (45, OutOfOrderSequenceException, "The producer sequence number is not the next one expected.")  # noqa: E501
    DUPLICATE_SEQUENCE_NUMBER = (46, DuplicateSequenceException, "The producer sequence number was already written.")  # noqa: E501
    INVALID_PRODUCER_EPOCH = (47, InvalidProducerEpochException, "The producer used an epoch older than the current one.")  # noqa: E501
    INVALID_TXN_STATE = (48, InvalidTxnStateException, "The transactional operation is not allowed in the transaction's current state.")  # noqa: E501
    INVALID_PRODUCER_ID_MAPPING = (49, InvalidPidMappingException, "The producer id is not the one assigned to this transactional id.")  # noqa: E501
    INVALID_TRANSACTION_TIMEOUT = (50, InvalidTxnTimeoutException, "The transaction timeout exceeds transaction.max.timeout.ms.")  # noqa: E501
    CONCURRENT_TRANSACTIONS = (51, ConcurrentTransactionsException, "Another operation on the same transaction is still in progress.")  # noqa: E501
    TRANSACTION_COORDINATOR_FENCED = (52, TransactionCoordinatorFencedException, "The coordinator sending the transaction marker is no longer the producer's coordinator.")  # noqa: E501
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = (53, TransactionalIdAuthorizationException, "Not authorized to use the transactional id.")  # noqa: E501
    SECURITY_DISABLED = (54, SecurityDisabledException, "Security features are turned off on this cluster.")  # noqa: E501
    OPERATION_NOT_ATTEMPTED = (55, OperationNotAttemptedException, "The broker skipped this operation because another one in the same batch failed.")  # noqa: E501
    KAFKA_STORAGE_ERROR = (56, KafkaStorageException, "A disk error occurred while accessing the log.")  # noqa: E501
    LOG_DIR_NOT_FOUND = (57, LogDirNotFoundException, "The log directory named is not among the broker's configured ones.")  # noqa: E501
    SASL_AUTHENTICATION_FAILED = (58, SaslAuthenticationException, "SASL authentication did not succeed.")  # noqa: E501
    UNKNOWN_PRODUCER_ID = (59, UnknownProducerIdException, "The broker has no state for this producer id, e.g. because its records aged out of the log.")  # noqa: E501
    REASSIGNMENT_IN_PROGRESS = (60, ReassignmentInProgressException, "A partition reassignment is underway.")  # noqa: E501
    DELEGATION_TOKEN_AUTH_DISABLED = (61, DelegationTokenDisabledException, "Delegation tokens are not enabled.")  # noqa: E501
    DELEGATION_TOKEN_NOT_FOUND = (62, DelegationTokenNotFoundException, "The delegation token does not exist on the broker.")  # noqa: E501
    DELEGATION_TOKEN_OWNER_MISMATCH = (63, DelegationTokenOwnerMismatchException, "The principal is not an owner or renewer of the token.")  # noqa: E501
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED = (64, UnsupportedByAuthenticationException, "Delegation token requests are refused on this kind of channel.")  # noqa: E501
    DELEGATION_TOKEN_AUTHORIZATION_FAILED = (65, DelegationTokenAuthorizationException, "Not authorized for the delegation token operation.")  # noqa: E501
    DELEGATION_TOKEN_EXPIRED = (66, DelegationTokenExpiredException, "The delegation token has expired.")  # noqa: E501
    INVALID_PRINCIPAL_TYPE = (67, InvalidPrincipalTypeException, "The principal type is not supported.")  # noqa: E501
    NON_EMPTY_GROUP = (68, GroupNotEmptyException, "The group still has members.")  # noqa: E501
    GROUP_ID_NOT_FOUND = (69, GroupIdNotFoundException, "No group with this id exists.")  # noqa: E501
    FETCH_SESSION_ID_NOT_FOUND = (70, FetchSessionIdNotFoundException, "The fetch session id is unknown.")  # noqa: E501
    INVALID_FETCH_SESSION_EPOCH = (71, InvalidFetchSessionEpochException, "The fetch session epoch is not the expected one.")  # noqa: E501
    LISTENER_NOT_FOUND = (72, ListenerNotFoundException, "The leader has no listener matching the one the metadata request arrived on.")  # noqa: E501
    TOPIC_DELETION_DISABLED = (73, TopicDeletionDisabledException, "Deleting topics is turned off.")  # noqa: E501
    FENCED_LEADER_EPOCH = (74, FencedLeaderEpochException, "The request's leader epoch is older than the broker's.")  # noqa: E501
    UNKNOWN_LEADER_EPOCH = (75, UnknownLeaderEpochException, "The request's leader epoch is newer than the broker's.")  # noqa: E501
    UNSUPPORTED_COMPRESSION_TYPE = (76, UnsupportedCompressionTypeException, "The client cannot handle the partition's compression type.")  # noqa: E501
    STALE_BROKER_EPOCH = (77, StaleBrokerEpochException, "The broker epoch in the request is out of date.")  # noqa: E501
    OFFSET_NOT_AVAILABLE = (78, OffsetNotAvailableException, "The new leader's high watermark has not caught up yet, so offsets could go backwards.")  # noqa: E501
    MEMBER_ID_REQUIRED = (79, MemberIdRequiredException, "The member must obtain a member id before joining the group.")  # noqa: E501
    PREFERRED_LEADER_NOT_AVAILABLE = (80, PreferredLeaderNotAvailableException, "The preferred leader cannot take leadership now.")  # noqa: E501
    GROUP_MAX_SIZE_REACHED = (81, GroupMaxSizeReachedException, "The group is already at its maximum size.")  # noqa: E501
    FENCED_INSTANCE_ID = (82, FencedInstanceIdException, "Another member registered the same group.instance.id with a different member id.")  # noqa: E501
    ELIGIBLE_LEADERS_NOT_AVAILABLE = (83, EligibleLeadersNotAvailableException, "No replica eligible to lead the partition is available.")  # noqa: E501
    ELECTION_NOT_NEEDED = (84, ElectionNotNeededException, "The partition needs no leader election.")  # noqa: E501
    NO_REASSIGNMENT_IN_PROGRESS = (85, NoReassignmentInProgressException, "There is no partition reassignment underway.")  # noqa: E501
    GROUP_SUBSCRIBED_TO_TOPIC = (86, GroupSubscribedToTopicException, "The group still subscribes to the topic, so its offsets cannot be deleted.")  # noqa: E501
    INVALID_RECORD = (87, InvalidRecordException, "The broker rejected a record that failed validation.")  # noqa: E501
    UNSTABLE_OFFSET_COMMIT = (88, UnstableOffsetCommitException, "Pending transactional offsets must be resolved first.")  # noqa: E501
    THROTTLING_QUOTA_EXCEEDED = (89, ThrottlingQuotaExceededException, "The throttling quota was exceeded.")  # noqa: E501
    PRODUCER_FENCED = (90, ProducerFencedException, "A newer producer with the same transactional id has fenced this one.")  # noqa: E501
    RESOURCE_NOT_FOUND = (91, ResourceNotFoundException, "The request refers to a resource that does not exist.")  # noqa: E501
    DUPLICATE_RESOURCE = (92, DuplicateResourceException, "The request refers to one resource twice.")  # noqa: E501
    UNACCEPTABLE_CREDENTIAL = (93, UnacceptableCredentialException, "The credential would not meet the acceptance criteria.")  # noqa: E501
    INCONSISTENT_VOTER_SET = (94, InconsistentVoterSetException, "Sender or receiver of a voters-only request is not an expected voter.")  # noqa: E501
    INVALID_UPDATE_VERSION = (95, InvalidUpdateVersionException, "The update version is not valid.")  # noqa: E501
    FEATURE_UPDATE_FAILED = (96, FeatureUpdateFailedException, "Finalized features could not be updated because of an unexpected error.")  # noqa: E501
    PRINCIPAL_DESERIALIZATION_FAILURE = (97, PrincipalDeserializationException, "The forwarded request's principal could not be deserialized.")  # noqa: E501
    SNAPSHOT_NOT_FOUND = (98, SnapshotNotFoundException, "The snapshot asked for does not exist.")  # noqa: E501
    POSITION_OUT_OF_RANGE = (99, PositionOutOfRangeException, "The snapshot position is negative or beyond the snapshot's size.")  # noqa: E501
    UNKNOWN_TOPIC_ID = (100, UnknownTopicIdException, "This broker does not host a topic with this id.")  # noqa: E501
    DUPLICATE_BROKER_REGISTRATION = (101, DuplicateBrokerRegistrationException, "Another broker already uses this broker id.")  # noqa: E501
    BROKER_ID_NOT_REGISTERED = (102, BrokerIdNotRegisteredException, "No broker is registered under this id.")  # noqa: E501
    INCONSISTENT_TOPIC_ID = (103, InconsistentTopicIdException, "The topic id in the request differs from the log's topic id.")  # noqa: E501
    INCONSISTENT_CLUSTER_ID = (104, InconsistentClusterIdException, "The cluster id in the request differs from the server's.")  # noqa: E501
    TRANSACTIONAL_ID_NOT_FOUND = (105, TransactionalIdNotFoundException, "No such transactional id.")  # noqa: E501
    FETCH_SESSION_TOPIC_ID_ERROR = (106, FetchSessionTopicIdException, "The fetch session used topic ids inconsistently.")  # noqa: E501
    INELIGIBLE_REPLICA = (107, IneligibleReplicaException, "The proposed ISR includes a replica that may not join it.")  # noqa: E501
    NEW_LEADER_ELECTED = (108, NewLeaderElectedException, "The partition state was updated, but leadership moved meanwhile.")  # noqa: E501
    OFFSET_MOVED_TO_TIERED_STORAGE = (109, OffsetMovedToTieredStorageException, "The offset now lives in tiered storage.")  # noqa: E501
    FENCED_MEMBER_EPOCH = (110, FencedMemberEpochException, "The coordinator fenced this member epoch; release all partitions and rejoin.")  # noqa: E501
    UNRELEASED_INSTANCE_ID = (111, UnreleasedInstanceIdException, "Another member still holds this instance id and has to leave first.")  # noqa: E501
    UNSUPPORTED_ASSIGNOR = (112, UnsupportedAssignorException, "The group does not support this assignor or version range.")  # noqa: E501
    STALE_MEMBER_EPOCH = (113, StaleMemberEpochException, "The member epoch is out of date; retry once the heartbeat returns the new one.")  # noqa: E501
    MISMATCHED_ENDPOINT_TYPE = (114, MismatchedEndpointTypeException, "The request reached an endpoint of the wrong type.")  # noqa: E501
    UNSUPPORTED_ENDPOINT_TYPE = (115, UnsupportedEndpointTypeException, "This endpoint type is not supported yet.")  # noqa: E501
    UNKNOWN_CONTROLLER_ID = (116, UnknownControllerIdException, "No controller with this id is known.")  # noqa: E501
    UNKNOWN_SUBSCRIPTION_ID = (117, UnknownSubscriptionIdException, "The telemetry subscription id is unknown or out of date.")  # noqa: E501
    TELEMETRY_TOO_LARGE = (118, TelemetryTooLargeException, "The telemetry push is larger than the broker accepts.")  # noqa: E501
    INVALID_REGISTRATION = (119, InvalidRegistrationException, "The controller judged the broker registration invalid.")  # noqa: E501
    TRANSACTION_ABORTABLE = (120, TransactionAbortableException, "The transaction hit an error; abort it to keep using the transactional id.")  # noqa: E501
    INVALID_RECORD_STATE = (121, InvalidRecordStateException, "The record's state does not allow the delivery acknowledgement.")  # noqa: E501
    SHARE_SESSION_NOT_FOUND = (122, ShareSessionNotFoundException, "The share session does not exist.")  # noqa: E501
    INVALID_SHARE_SESSION_EPOCH = (123, InvalidShareSessionEpochException, "The share session epoch is not the expected one.")  # noqa: E501
    FENCED_STATE_EPOCH = (124, FencedStateEpochException, "The share-group state epoch does not match the share coordinator's.")  # noqa: E501
    INVALID_VOTER_KEY = (125, InvalidVoterKeyException, "The voter key differs from the receiving replica's key.")  # noqa: E501
    DUPLICATE_VOTER = (126, DuplicateVoterException, "The voter already belongs to the voter set.")  # noqa: E501
    VOTER_NOT_FOUND = (127, VoterNotFoundException, "The voter does not belong to the voter set.")  # noqa: E501

    def __new__(cls, code: int, exception_class: type[ApiException] | None, message: str | None) -> Errors:
        member = object.__new__(cls)
        member._value_ = code
        member.code = code
        member.exception_class = exception_class
        member._default_message = message
        return member

    @property
    def message(self) -> str:
        """Mirrors org.apache.kafka.common.protocol.Errors#message.

        The default message of this code; NONE, which has no exception, answers with its name.
        """
        return self._default_message if self._default_message is not None else self.name

    def exception(self, message: str | None = None) -> ApiException | None:
        """Mirrors org.apache.kafka.common.protocol.Errors#exception(String).

        A new exception of this code's class carrying `message`, or the default message when
        `message` is None. NONE has no exception and returns None. (Kafka hands out one shared
        instance for the default message; Python exceptions keep traceback state, so we always
        build a fresh one.)
        """
        # 1. NONE builds nothing.
        if self.exception_class is None:
            return None
        # 2. Build the exception with the given text, or the code's default text.
        return self.exception_class(self.message if message is None else message)

    def maybe_raise(self, message: str | None = None) -> None:
        """Mirrors org.apache.kafka.common.protocol.Errors#maybeThrow.

        Raises this code's exception; does nothing for NONE.
        """
        exc = self.exception(message)
        if exc is not None:
            raise exc

    maybe_throw = maybe_raise

    @classmethod
    def for_code(cls, code: int) -> Errors:
        """Mirrors org.apache.kafka.common.protocol.Errors#forCode.

        The member with this numeric code. A code this table does not know (say, one a newer
        broker sent) becomes UNKNOWN_SERVER_ERROR, with a warning, as in Kafka.
        """
        # 1. Look the code up.
        error = cls._value2member_map_.get(code)
        if error is not None:
            return error
        # 2. Unknown code: warn and fall back to the generic server error.
        _log.warning("Unexpected error code: %s.", code)
        return cls.UNKNOWN_SERVER_ERROR

    @classmethod
    def for_exception(cls, exc: BaseException) -> Errors:
        """Mirrors org.apache.kafka.common.protocol.Errors#forException.

        The code for an exception: its own class's code if it has one, else the code of the
        nearest ancestor class that has one, else UNKNOWN_SERVER_ERROR. Kafka first unwraps a
        CompletionException/ExecutionException from a future; the anyio counterpart is an
        exception group holding a single exception, which we unwrap one level the same way.
        """
        # 1. Unwrap one level of wrapping added by concurrency machinery.
        if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        # 2. Walk the class chain from the bottom up; 3. default to UNKNOWN_SERVER_ERROR.
        return cls._for_exception_class(type(exc))

    @classmethod
    def _for_exception_class(cls, exc_class: type) -> Errors:
        for klass in exc_class.__mro__:
            error = _CLASS_TO_ERROR.get(klass)
            if error is not None:
                return error
        return cls.UNKNOWN_SERVER_ERROR

    def __repr__(self) -> str:
        return f"<Errors.{self.name}: {self.code}>"


_CLASS_TO_ERROR: dict[type, Errors] = {e.exception_class: e for e in Errors if e.exception_class is not None}


# ---------------------------------------------------------------------------------------------
# Exceptions that never travel in a response: configuration and controller internals.
# ---------------------------------------------------------------------------------------------


def _java_str(value: object) -> str:
    """How Java string concatenation prints a value (null, true/false)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class ConfigException(KafkaException):
    """Mirrors org.apache.kafka.common.config.ConfigException.

    A configuration key was given a value it cannot take (or was unknown or missing). The text
    always names the key: `Invalid value <value> for configuration <name>[: <message>]`, with a
    missing value printed as `null`, as Kafka prints it.
    """

    def __init__(self, name: str, value: object = None, message: str | None = None) -> None:
        # 1. Keep the parts for callers that want them.
        self.name = name
        self.value = value
        self.message = message
        # 2. Compose Kafka's text: the value, the key, and the reason when there is one.
        text = f"Invalid value {_java_str(value)} for configuration {name}"
        if message is not None:
            text += f": {message}"
        super().__init__(text)

    @classmethod
    def from_message(cls, text: str) -> "ConfigException":
        """Mirrors ConfigException(String message): the text alone, naming no key or value."""
        exc = cls(text)
        exc.name, exc.value, exc.message = None, None, text
        exc.args = (text,)
        return exc

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # Rebuild from the parts, not the composed text, so pickling round-trips.
        if self.name is None:
            return (_config_exception_from_message, (type(self), self.message))
        return (type(self), (self.name, self.value, self.message))


def _config_exception_from_message(cls: type, text: str) -> ConfigException:
    return cls.from_message(text)


class StateChangeFailedException(RuntimeError):
    """Mirrors kafka.common.StateChangeFailedException.

    A partition or replica state machine could not make a transition (for example no leader
    could be elected, or the ZooKeeper write lost a version race). It stays inside the
    controller: the failed partition is logged and reported, never sent to a client.
    """


class NoReplicaOnlineException(RuntimeError):
    """Mirrors kafka.common.NoReplicaOnlineException.

    A leader election found no live replica to choose from.
    """


class LeaderElectionNotNeededException(RuntimeError):
    """Mirrors kafka.common.LeaderElectionNotNeededException.

    A preferred-replica election was asked for a partition whose preferred replica already leads.
    """


__all__ = ["KafkaException", "Errors", "ConfigException", "StateChangeFailedException",
           "NoReplicaOnlineException", "LeaderElectionNotNeededException", "StaleControllerEpochException"]
__all__ += sorted(name for name, value in list(globals().items())
                  if isinstance(value, type) and issubclass(value, ApiException) and not name.startswith("_")
                  and value.__name__ == name)


class IllegalStateException(RuntimeError):
    """Mirrors java.lang.IllegalStateException: an invariant of a state machine or a fetcher broke.

    Raised or logged when a state machine is asked for a transition its table forbids, when a
    request batch is reused before it was sent, or when a fetcher's partition state is inconsistent.
    """

