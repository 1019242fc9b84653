"""Tests for kafka_ref.common.errors.

Mirrors org.apache.kafka.common.protocol.ErrorsTest (unique codes, unique exception classes,
forException inheritance and default, the NONE error) and adds checks of the code table against
Kafka 3.9's numeric values and of the retriable / invalid-metadata parentage.
"""

from __future__ import annotations

import pickle

import pytest

from kafka_ref.common import errors as errors_module
from kafka_ref.common.errors import (
    ApiException,
    ClusterAuthorizationException,
    ConfigException,
    ControllerMovedException,
    CorruptRecordException,
    Errors,
    InvalidMetadataException,
    InvalidRequiredAcksException,
    KafkaException,
    LeaderElectionNotNeededException,
    NoReplicaOnlineException,
    NotControllerException,
    NotLeaderForPartitionException,
    NotLeaderOrFollowerException,
    OffsetOutOfRangeException,
    OutOfOrderSequenceException,
    RetriableException,
    StaleControllerEpochException,
    StateChangeFailedException,
    UnknownProducerIdException,
    UnknownServerException,
)

# (name, code) as in Kafka 3.9's org.apache.kafka.common.protocol.Errors.
KAFKA_CODES = [
    ("UNKNOWN_SERVER_ERROR", -1),
    ("NONE", 0),
    ("OFFSET_OUT_OF_RANGE", 1),
    ("CORRUPT_MESSAGE", 2),
    ("UNKNOWN_TOPIC_OR_PARTITION", 3),
    ("LEADER_NOT_AVAILABLE", 5),
    ("NOT_LEADER_OR_FOLLOWER", 6),
    ("REQUEST_TIMED_OUT", 7),
    ("REPLICA_NOT_AVAILABLE", 9),
    ("MESSAGE_TOO_LARGE", 10),
    ("STALE_CONTROLLER_EPOCH", 11),
    ("COORDINATOR_LOAD_IN_PROGRESS", 14),
    ("NOT_COORDINATOR", 16),
    ("NOT_ENOUGH_REPLICAS", 19),
    ("NOT_ENOUGH_REPLICAS_AFTER_APPEND", 20),
    ("INVALID_REQUIRED_ACKS", 21),
    ("ILLEGAL_GENERATION", 22),
    ("UNKNOWN_MEMBER_ID", 25),
    ("INVALID_SESSION_TIMEOUT", 26),
    ("REBALANCE_IN_PROGRESS", 27),
    ("CLUSTER_AUTHORIZATION_FAILED", 31),
    ("NOT_CONTROLLER", 41),
    ("KAFKA_STORAGE_ERROR", 56),
    ("UNKNOWN_PRODUCER_ID", 59),
    ("FENCED_LEADER_EPOCH", 74),
    ("UNKNOWN_LEADER_EPOCH", 75),
    ("STALE_BROKER_EPOCH", 77),
    ("INVALID_RECORD", 87),
    ("INVALID_UPDATE_VERSION", 95),
    ("UNKNOWN_TOPIC_ID", 100),
    ("INCONSISTENT_TOPIC_ID", 103),
    ("INELIGIBLE_REPLICA", 107),
    ("NEW_LEADER_ELECTED", 108),
    ("TRANSACTION_ABORTABLE", 120),
    ("VOTER_NOT_FOUND", 127),
]


@pytest.mark.parametrize(("name", "code"), KAFKA_CODES)
def test_code_matches_kafka(name: str, code: int) -> None:
    assert Errors[name].code == code
    assert Errors[name].value == code
    assert Errors(code) is Errors[name]


def test_table_covers_every_code_from_minus_one_to_127() -> None:
    assert len(Errors) == 129
    assert sorted(e.code for e in Errors) == list(range(-1, 128))


def test_unique_error_codes() -> None:
    """Mirrors ErrorsTest#testUniqueErrorCodes."""
    codes = [e.code for e in Errors]
    assert len(codes) == len(set(codes))


def test_unique_exceptions() -> None:
    """Mirrors ErrorsTest#testUniqueExceptions."""
    classes = [e.exception_class for e in Errors if e is not Errors.NONE]
    assert len(classes) == len(set(classes))


def test_exceptions_are_not_generic() -> None:
    """Mirrors ErrorsTest#testExceptionsAreNotGeneric: every code but NONE has its own subclass."""
    for error in Errors:
        if error is Errors.NONE:
            assert error.exception_class is None
            continue
        assert issubclass(error.exception_class, ApiException)
        assert error.exception_class is not ApiException


def test_each_exception_class_is_importable_by_its_kafka_name() -> None:
    for error in Errors:
        if error.exception_class is None:
            continue
        name = error.exception_class.__name__
        assert getattr(errors_module, name) is error.exception_class
        assert name in errors_module.__all__


def test_named_classes_from_kafka() -> None:
    assert Errors.NOT_LEADER_OR_FOLLOWER.exception_class is NotLeaderOrFollowerException
    assert Errors.CORRUPT_MESSAGE.exception_class is CorruptRecordException
    assert Errors.STALE_CONTROLLER_EPOCH.exception_class is ControllerMovedException
    assert StaleControllerEpochException is ControllerMovedException
    assert Errors.OFFSET_METADATA_TOO_LARGE.exception_class.__name__ == "OffsetMetadataTooLarge"
    assert Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.exception_class.__name__ == (
        "UnsupportedByAuthenticationException"
    )
    assert Errors.INVALID_PRODUCER_ID_MAPPING.exception_class.__name__ == "InvalidPidMappingException"


def test_for_code_round_trip_for_every_member() -> None:
    for error in Errors:
        assert Errors.for_code(error.code) is error


def test_for_code_unknown_code_is_unknown_server_error() -> None:
    assert Errors.for_code(9999) is Errors.UNKNOWN_SERVER_ERROR
    assert Errors.for_code(-2) is Errors.UNKNOWN_SERVER_ERROR


def test_for_exception_round_trip_for_every_member() -> None:
    for error in Errors:
        if error is Errors.NONE:
            continue
        assert Errors.for_exception(error.exception()) is error
        assert error.exception().error is error
        assert error.exception_class.error is error


def test_for_exception_inheritance() -> None:
    """Mirrors ErrorsTest#testForExceptionInheritance: a subclass gets its nearest ancestor's code."""

    class ExtendedTimeoutException(NotLeaderOrFollowerException):
        pass

    assert Errors.for_exception(ExtendedTimeoutException("x")) is Errors.NOT_LEADER_OR_FOLLOWER
    assert ExtendedTimeoutException.error is Errors.NOT_LEADER_OR_FOLLOWER
    # The bottom-most match wins: UnknownProducerId extends OutOfOrderSequence but has its own code.
    assert issubclass(UnknownProducerIdException, OutOfOrderSequenceException)
    assert Errors.for_exception(UnknownProducerIdException("x")) is Errors.UNKNOWN_PRODUCER_ID
    assert Errors.for_exception(OutOfOrderSequenceException("x")) is Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_for_exception_default() -> None:
    """Mirrors ErrorsTest#testForExceptionDefault."""
    assert Errors.for_exception(ValueError("boom")) is Errors.UNKNOWN_SERVER_ERROR
    assert Errors.for_exception(ApiException("boom")) is Errors.UNKNOWN_SERVER_ERROR
    assert Errors.for_exception(RetriableException("boom")) is Errors.UNKNOWN_SERVER_ERROR
    # The deprecated class has no code of its own and none of its ancestors has one.
    assert Errors.for_exception(NotLeaderForPartitionException("x")) is Errors.UNKNOWN_SERVER_ERROR
    assert Errors.for_exception(UnknownServerException("x")) is Errors.UNKNOWN_SERVER_ERROR


def test_for_exception_unwraps_single_exception_group() -> None:
    group = ExceptionGroup("task group", [NotControllerException("moved")])
    assert Errors.for_exception(group) is Errors.NOT_CONTROLLER
    two = ExceptionGroup("task group", [NotControllerException("a"), CorruptRecordException("b")])
    assert Errors.for_exception(two) is Errors.UNKNOWN_SERVER_ERROR


def test_none_exception() -> None:
    """Mirrors ErrorsTest#testNoneException."""
    assert Errors.NONE.exception() is None
    assert Errors.NONE.exception("ignored") is None
    assert Errors.NONE.message == "NONE"
    Errors.NONE.maybe_raise()
    Errors.NONE.maybe_throw()


def test_exception_carries_default_or_given_message() -> None:
    default = Errors.OFFSET_OUT_OF_RANGE.exception()
    assert type(default) is OffsetOutOfRangeException
    assert str(default) == Errors.OFFSET_OUT_OF_RANGE.message
    assert default.message == Errors.OFFSET_OUT_OF_RANGE.message
    custom = Errors.OFFSET_OUT_OF_RANGE.exception("offset 42 is past the log end 40")
    assert str(custom) == "offset 42 is past the log end 40"
    assert custom.error is Errors.OFFSET_OUT_OF_RANGE
    # Building the class directly without a message also gets the code's default text.
    assert str(CorruptRecordException()) == Errors.CORRUPT_MESSAGE.message


def test_every_error_has_a_message() -> None:
    for error in Errors:
        assert isinstance(error.message, str) and error.message


def test_maybe_raise() -> None:
    with pytest.raises(ClusterAuthorizationException, match="^no ClusterAction$") as info:
        Errors.CLUSTER_AUTHORIZATION_FAILED.maybe_raise("no ClusterAction")
    assert info.value.error is Errors.CLUSTER_AUTHORIZATION_FAILED
    with pytest.raises(InvalidRequiredAcksException):
        Errors.INVALID_REQUIRED_ACKS.maybe_raise()


def test_retriable_classification() -> None:
    nlf = Errors.NOT_LEADER_OR_FOLLOWER.exception_class
    assert issubclass(nlf, RetriableException)
    assert issubclass(nlf, InvalidMetadataException)
    assert issubclass(Errors.CORRUPT_MESSAGE.exception_class, RetriableException)
    assert not issubclass(Errors.CORRUPT_MESSAGE.exception_class, InvalidMetadataException)
    assert not issubclass(Errors.INVALID_REQUIRED_ACKS.exception_class, RetriableException)


RETRIABLE = {
    "CORRUPT_MESSAGE", "UNKNOWN_TOPIC_OR_PARTITION", "LEADER_NOT_AVAILABLE", "NOT_LEADER_OR_FOLLOWER",
    "REQUEST_TIMED_OUT", "REPLICA_NOT_AVAILABLE", "NETWORK_EXCEPTION", "COORDINATOR_LOAD_IN_PROGRESS",
    "COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR", "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
    "NOT_CONTROLLER", "CONCURRENT_TRANSACTIONS", "KAFKA_STORAGE_ERROR", "FETCH_SESSION_ID_NOT_FOUND",
    "INVALID_FETCH_SESSION_EPOCH", "LISTENER_NOT_FOUND", "FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH",
    "OFFSET_NOT_AVAILABLE", "PREFERRED_LEADER_NOT_AVAILABLE", "ELIGIBLE_LEADERS_NOT_AVAILABLE",
    "ELECTION_NOT_NEEDED", "UNSTABLE_OFFSET_COMMIT", "THROTTLING_QUOTA_EXCEEDED", "UNKNOWN_TOPIC_ID",
    "INCONSISTENT_TOPIC_ID", "FETCH_SESSION_TOPIC_ID_ERROR", "SHARE_SESSION_NOT_FOUND",
    "INVALID_SHARE_SESSION_EPOCH",
}
INVALID_METADATA = {
    "UNKNOWN_TOPIC_OR_PARTITION", "LEADER_NOT_AVAILABLE", "NOT_LEADER_OR_FOLLOWER", "REPLICA_NOT_AVAILABLE",
    "NETWORK_EXCEPTION", "KAFKA_STORAGE_ERROR", "LISTENER_NOT_FOUND", "FENCED_LEADER_EPOCH",
    "PREFERRED_LEADER_NOT_AVAILABLE", "ELIGIBLE_LEADERS_NOT_AVAILABLE", "ELECTION_NOT_NEEDED",
    "UNKNOWN_TOPIC_ID", "INCONSISTENT_TOPIC_ID",
}


def test_full_retriable_and_invalid_metadata_sets_match_kafka_3_9() -> None:
    retriable = {e.name for e in Errors if e.exception_class and issubclass(e.exception_class, RetriableException)}
    invalid = {e.name for e in Errors
               if e.exception_class and issubclass(e.exception_class, InvalidMetadataException)}
    assert retriable == RETRIABLE
    assert invalid == INVALID_METADATA


def test_api_exceptions_are_kafka_exceptions() -> None:
    assert issubclass(ApiException, KafkaException)
    assert issubclass(KafkaException, Exception)


def test_config_exception_names_the_key() -> None:
    exc = ConfigException("min.insync.replicas", 0, "Value must be at least 1")
    assert str(exc) == "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"
    assert (exc.name, exc.value, exc.message) == ("min.insync.replicas", 0, "Value must be at least 1")
    assert isinstance(exc, KafkaException)
    assert not isinstance(exc, ApiException)
    assert str(ConfigException("replica.lag.time.max.ms")) == (
        "Invalid value null for configuration replica.lag.time.max.ms"
    )
    assert str(pickle.loads(pickle.dumps(exc))) == str(exc)
    assert str(pickle.loads(pickle.dumps(Errors.NOT_CONTROLLER.exception("x")))) == "x"
    assert str(ConfigException("unclean.leader.election.enable", True)) == (
        "Invalid value true for configuration unclean.leader.election.enable"
    )


def test_controller_exceptions_are_not_protocol_errors() -> None:
    for cls in (StateChangeFailedException, NoReplicaOnlineException, LeaderElectionNotNeededException):
        exc = cls("partition t-0")
        assert str(exc) == "partition t-0"
        assert not isinstance(exc, ApiException)
        assert Errors.for_exception(exc) is Errors.UNKNOWN_SERVER_ERROR
