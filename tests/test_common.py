"""Common vocabulary: config, ids, partitions, clocks, Java-compatible hashing."""

from __future__ import annotations

import random

import anyio
import pytest

from kafka_ref.common.config import KafkaConfig, LogConfig
from kafka_ref.common.errors import ConfigException
from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.time import EPOCH_ORIGIN_MS, MockTime, Time
from kafka_ref.common.topic_partition import TopicIdPartition, TopicPartition
from kafka_ref.common.utils import java_string_hash, murmur2, to_positive, utils_abs
from kafka_ref.common.uuid import METADATA_TOPIC_ID, ZERO_UUID, Uuid


def test_kafka_config_defaults_match_kafka():
    """Kafka 3.x defaults for the keys the seeds and docs/DESIGN.md §5 name (KafkaConfigTest style)."""
    c = KafkaConfig({"broker.id": 1})
    expected = {
        "replica.lag.time.max.ms": 30000,
        "replica.fetch.max.bytes": 1048576,
        "replica.fetch.response.max.bytes": 10485760,
        "replica.fetch.min.bytes": 1,
        "replica.fetch.wait.max.ms": 500,
        "replica.fetch.backoff.ms": 1000,
        "num.replica.fetchers": 1,
        "replica.high.watermark.checkpoint.interval.ms": 5000,
        "max.incremental.fetch.session.cache.slots": 1000,
        "min.insync.replicas": 1,
        "unclean.leader.election.enable": False,
        "offsets.topic.num.partitions": 50,
        "offsets.topic.replication.factor": 3,
        "offsets.load.buffer.size": 5242880,
        "zookeeper.session.timeout.ms": 18000,
        "message.max.bytes": 1048588,
    }
    for key, value in expected.items():
        assert c.get(key) == value, key
    assert c.broker_id == 1
    assert str(c.inter_broker_protocol_version) == "3.8"


def test_invalid_values_raise_config_exception_naming_the_key():
    with pytest.raises(ConfigException, match="num.replica.fetchers"):
        KafkaConfig({"num.replica.fetchers": 0})
    with pytest.raises(ConfigException, match="replica.fetch.max.bytes"):
        KafkaConfig({"replica.fetch.max.bytes": "lots"})
    with pytest.raises(ConfigException, match="unclean.leader.election.enable"):
        KafkaConfig({"unclean.leader.election.enable": "maybe"})
    with pytest.raises(ConfigException, match="inter.broker.protocol.version"):
        KafkaConfig({"inter.broker.protocol.version": "banana"})
    with pytest.raises(ConfigException, match="cleanup.policy"):
        LogConfig.validate({"cleanup.policy": "shred"})


def test_string_values_are_parsed_like_properties_files():
    c = KafkaConfig({"num.replica.fetchers": "4", "unclean.leader.election.enable": "true"})
    assert c.num_replica_fetchers == 4
    assert c.get("unclean.leader.election.enable") is True


def test_log_config_falls_back_to_broker_defaults():
    broker = KafkaConfig({"min.insync.replicas": 2, "message.max.bytes": 1000})
    topic = LogConfig.from_broker(broker, {"unclean.leader.election.enable": "true"})
    assert topic.min_in_sync_replicas == 2
    assert topic.max_message_size == 1000
    assert topic.unclean_leader_election_enable is True


@pytest.mark.parametrize("older,newer", [("0.10.2", "0.11.0"), ("0.11.0", "1.1"), ("1.1", "2.0"),
                                         ("2.6", "2.7-IV2"), ("3.6", "3.7"), ("3.7", "3.8")])
def test_metadata_version_ordering(older, newer):
    assert MetadataVersion.parse(older) < MetadataVersion.parse(newer)


def test_era_switches():
    v = MetadataVersion.parse
    assert not v("0.10.2").uses_leader_epoch_for_truncation and v("0.11.0").uses_leader_epoch_for_truncation
    assert not v("1.1").uses_kip279_truncation and v("2.0").uses_kip279_truncation
    assert not v("2.6").truncates_on_fetch and v("2.7").truncates_on_fetch
    assert not v("3.6").no_hw_advance_below_min_isr and v("3.7").no_hw_advance_below_min_isr


def test_uuid_round_trip_and_reserved_ids():
    rng = random.Random(42)
    ids = {Uuid.random_uuid(rng) for _ in range(200)}
    assert len(ids) == 200
    for u in ids:
        assert Uuid.from_string(str(u)) == u
        assert u not in (ZERO_UUID, METADATA_TOPIC_ID)
        assert not str(u).startswith("-")
    assert str(ZERO_UUID) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert str(METADATA_TOPIC_ID) == "AAAAAAAAAAAAAAAAAAAAAQ"


def test_topic_partition_forms():
    tp = TopicPartition("my-topic", 3)
    assert str(tp) == "my-topic-3"
    assert TopicPartition.parse("my-topic-3") == tp
    tip = TopicIdPartition(Uuid(0, 7), tp)
    assert tip.topic == "my-topic" and tip.partition == 3


def test_mock_time_advances_only_by_hand():
    t = MockTime()
    assert t.milliseconds() == EPOCH_ORIGIN_MS
    t.advance(1500)
    assert t.milliseconds() == EPOCH_ORIGIN_MS + 1500
    with pytest.raises(ValueError):
        t.advance(-1)


@pytest.mark.anyio
async def test_time_reads_the_loop_clock_with_an_epoch_origin():
    time = Time()
    before = time.milliseconds()
    assert before >= EPOCH_ORIGIN_MS  # "never" (0) is far in the past, as with wall-clock millis
    await anyio.sleep(30)
    assert time.milliseconds() - before == 30000


def test_java_hashes():
    """String.hashCode, Utils.abs and murmur2 against known Java values."""
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0
    assert java_string_hash("polygenelubricants") == -2**31
    assert utils_abs(-2**31) == 0
    assert to_positive(-1) == 0x7FFFFFFF
    # murmur2 values from Kafka's UtilsTest#testMurmur2
    cases = {b"21": -973932308, b"foobar": -790332482, b"a-little-bit-long-string": -985981536,
             b"a-little-bit-longer-string": -1486304829, b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
             b"abc": 479470107}
    for data, expected in cases.items():
        assert murmur2(data) == expected, data
