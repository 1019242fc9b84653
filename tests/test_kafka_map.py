"""The Kafka map (kafka_ref/kafka_map.py, docs/seed_methods.toml, ``kafka-ref map``).

No Kafka test is mirrored: these keep the ``Mirrors`` convention honest, so a renamed method or a
lost docstring line shows up in CI as a missing seed method.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from kafka_ref.cli import main
from kafka_ref.kafka_map import (
    PACKAGE_ROOT,
    collect_mirrors,
    coverage,
    duplicates,
    find,
    load_seed_methods,
    parse_first_line,
)

#: package lowercase dotted, Class capitalized (nested classes, Scala objects ``$``), method camelCase.
KAFKA_NAME = re.compile(
    r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*\.[A-Z][A-Za-z0-9_]*\$?(\.[A-Z][A-Za-z0-9_]*\$?)*"
    r"(#([a-z][A-Za-z0-9_]*|<init>))?$"
)


@pytest.fixture(scope="module")
def entries():
    return collect_mirrors()


@pytest.fixture(scope="module")
def seeds():
    return load_seed_methods()


def test_every_seed_method_is_mirrored(entries, seeds):
    mirrored, missing = coverage(entries, seeds)
    assert [m.names for m in missing] == []
    assert len(mirrored) == len(seeds.methods)
    required = {
        "kafka.server.ReplicaManager#becomeLeaderOrFollower",
        "kafka.server.ReplicaManager#makeLeaders",
        "kafka.server.ReplicaManager#makeFollowers",
        "kafka.server.ReplicaManager#stopReplicas",
        "kafka.server.ReplicaManager#stopPartitions",
        "kafka.server.ReplicaManager#updateFollowerFetchState",
        "kafka.server.ReplicaManager#maybeShrinkIsr",
        "kafka.cluster.Partition#makeLeader",
        "kafka.cluster.Partition#makeFollower",
        "kafka.cluster.Partition#maybeIncrementLeaderHW",
        "kafka.cluster.Partition#updateFollowerFetchState",
        "kafka.server.AbstractFetcherManager#addFetcherForPartitions",
        "kafka.server.AbstractFetcherThread#doWork",
        "kafka.server.AbstractFetcherThread#maybeFetch",
        "kafka.server.ReplicaFetcherThread#buildFetch",
        "kafka.server.AbstractFetcherThread#processFetchRequest",
        "kafka.server.ReplicaFetcherThread#processPartitionData",
        "kafka.controller.KafkaController#onControllerFailover",
        "kafka.controller.KafkaController#onControllerResignation",
        "kafka.server.ZookeeperLeaderElector#elect",
        "kafka.controller.PartitionStateMachine#handleStateChanges",
        "kafka.controller.PartitionStateMachine#handleStateChange",
        "kafka.controller.ReplicaStateMachine#handleStateChanges",
        "kafka.controller.ReplicaStateMachine#handleStateChange",
        "kafka.controller.PartitionStateMachine#initializeLeaderAndIsrForPartition",
        "kafka.controller.PartitionStateMachine#electLeaderForPartition",
        "kafka.controller.PartitionLeaderSelector#selectLeader",
        "kafka.controller.NoOpLeaderSelector#selectLeader",
        "kafka.controller.OfflinePartitionLeaderSelector#selectLeader",
        "kafka.controller.ReassignedPartitionLeaderSelector#selectLeader",
        "kafka.controller.PreferredReplicaPartitionLeaderSelector#selectLeader",
        "kafka.controller.ControlledShutdownLeaderSelector#selectLeader",
        "kafka.coordinator.group.GroupCoordinator#handleGroupImmigration",
        "kafka.coordinator.group.GroupCoordinator#handleGroupEmigration",
        "kafka.coordinator.group.GroupMetadataManager#loadGroupsForPartition",
        "kafka.coordinator.group.GroupMetadataManager#loadGroupsAndOffsets",
        "kafka.coordinator.group.GroupMetadataManager#removeGroupsForPartition",
        "kafka.coordinator.group.GroupCoordinator#onGroupUnloaded",
        "kafka.server.metadata.BrokerMetadataListener#handleCommit",
        "kafka.server.metadata.BrokerMetadataListener#loadBatches",
        "org.apache.kafka.image.MetadataDelta#replay",
        "kafka.server.metadata.BrokerMetadataPublisher#publish",
        "kafka.server.ReplicaManager#applyDelta",
        "kafka.server.ReplicaManager#applyLocalLeadersDelta",
        "kafka.server.ReplicaManager#applyLocalFollowersDelta",
        "org.apache.kafka.image.TopicsDelta#localChanges",
    }
    assert required - {m.kafka for m in seeds.methods} == set()


def test_seed_entries_are_well_formed(seeds):
    assert seeds.methods
    for m in seeds.methods:
        assert m.seed in {"000", "001", "002", "003", "004"}, m
        assert m.section.strip(), m
        for name in m.names:
            assert KAFKA_NAME.match(name), name
    for name, reason in seeds.allow_duplicates.items():
        assert KAFKA_NAME.match(name), name
        assert len(reason) >= 10, name


def test_every_mirrors_line_names_a_kafka_class_or_method(entries):
    bad = [(e.kafka, e.location) for e in entries if not KAFKA_NAME.match(e.kafka)]
    assert bad == []


def test_every_mirrors_first_line_is_in_the_map(entries):
    """Counted independently with ast: no ``Mirrors`` docstring is skipped by the parser."""
    expected = 0
    for path in PACKAGE_ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = (ast.get_docstring(node) or "").strip()
                if doc.startswith("Mirrors"):
                    expected += 1
    assert len(entries) == expected


def test_duplicate_claims_say_why(entries, seeds, capsys):
    dups, unexplained = duplicates(entries, seeds)
    with capsys.disabled():
        print(f"\n{len(dups)} Kafka names claimed by more than one place; {len(unexplained)} unexplained")
    assert {k: [e.location for e in v] for k, v in unexplained.items()} == {}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Mirrors kafka.log.UnifiedLog#read.", ("kafka.log", "UnifiedLog", "read", "")),
        ("Mirrors kafka.server.ReplicaManager.", ("kafka.server", "ReplicaManager", "", "")),
        ("Mirrors TopicsDelta#replay(PartitionRecord).", ("", "TopicsDelta", "replay", "(PartitionRecord)")),
        ("Mirrors a.b.C#d and e.f.G#h.", ("a.b", "C", "d", "")),
        ("Mirrors ProducerMetadata#add / ConsumerMetadata#setTopics: x.", ("", "ProducerMetadata", "add", "")),
        ("Mirrors the ``read`` closure inside kafka.server.ReplicaManager#readFromLog.", ("kafka.server", "ReplicaManager", "readFromLog", "")),
        ("Mirrors the reassignment methods of kafka.controller.KafkaController, as an extension.", ("kafka.controller", "KafkaController", "", "")),
        ("Mirrors KafkaController's StateChangeHandler (session expiry).", ("", "KafkaController.StateChangeHandler", "", "")),
        ("Mirrors kafka.zk.KafkaZkClient$#wrapRequestWithControllerEpochCheck.", ("kafka.zk", "KafkaZkClient$", "wrapRequestWithControllerEpochCheck", "")),
        ("Mirrors BrokerMetadataPublisher.getTopicDelta: the delta.", ("", "BrokerMetadataPublisher", "getTopicDelta", "")),
        ("Mirrors PartitionRegistration(PartitionRecord).", ("", "PartitionRegistration", "<init>", "(PartitionRecord)")),
        ("Mirrors addFetcherForPartitions#addAndStartFetcherThread.", ("", "", "addFetcherForPartitions#addAndStartFetcherThread", "")),
        ("Helper without a Kafka name.", None),
    ],
)
def test_parse_first_line_variants(line, expected):
    assert parse_first_line(line) == expected


def test_short_names_get_their_package(entries):
    by_place = {(e.module, e.qualname): e for e in entries}
    replay = by_place[("kafka_ref/image/delta.py", "MetadataDelta.replay")]
    assert (replay.kafka, replay.signature) == ("org.apache.kafka.image.MetadataDelta#replay", "(ApiMessage)")
    inner = by_place[("kafka_ref/replica/fetcher/abstract_fetcher_manager.py", "AbstractFetcherManager.add_fetcher_for_partitions.add_and_start_fetcher_thread")]
    assert (inner.kafka, inner.signature) == ("kafka.server.AbstractFetcherManager#addFetcherForPartitions", "[addAndStartFetcherThread]")


def _def_line(path: Path, cls: str, name: str) -> int:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    owner = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    return next(n.lineno for n in owner.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name)


def test_find_answers_camel_and_snake_case(entries):
    line = _def_line(PACKAGE_ROOT / "replica" / "replica_manager.py", "ReplicaManager", "make_followers")
    for query in ("makeFollowers", "make_followers", "ReplicaManager#makeFollowers", "ReplicaManager.make_followers"):
        hits = find(entries, query)
        assert [(e.kafka, e.location) for e in hits] == [
            ("kafka.server.ReplicaManager#makeFollowers", f"kafka_ref/replica/replica_manager.py:ReplicaManager.make_followers:{line}")
        ], query


def test_cli_find_prints_the_place_and_a_pdb_breakpoint(capsys):
    from kafka_ref.kafka_map import first_body_line

    line = _def_line(PACKAGE_ROOT / "replica" / "replica_manager.py", "ReplicaManager", "become_leader_or_follower")
    [entry] = find(collect_mirrors(), "becomeLeaderOrFollower")
    body = first_body_line(entry)
    assert body > line
    assert main(["map", "--find", "becomeLeaderOrFollower"]) == 0
    assert capsys.readouterr().out == (
        "kafka.server.ReplicaManager#becomeLeaderOrFollower -> "
        f"kafka_ref/replica/replica_manager.py:ReplicaManager.become_leader_or_follower:{line}\n"
        f"  pdb: b kafka_ref/replica/replica_manager.py:{body}\n"
    )
    assert main(["map", "--find", "noSuchKafkaMethod"]) == 1


def test_cli_find_resolves_the_seeds_older_names(capsys):
    """seed 001 reads 0.10, whose electLeaderForPartition became ZkPartitionStateMachine's
    electLeaderForPartitions (docs/seed_methods.toml's ``also``)."""
    line = _def_line(PACKAGE_ROOT / "controller" / "partition_state_machine.py", "ZkPartitionStateMachine",
                     "elect_leader_for_partitions")
    assert main(["map", "--find", "electLeaderForPartition"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [
        "kafka.controller.PartitionStateMachine#electLeaderForPartition (seed 001 §5.3.2.2 "
        "PartitionStateMachine#electLeaderForPartition) is mirrored as "
        "kafka.controller.ZkPartitionStateMachine#electLeaderForPartitions:",
        "  kafka.controller.ZkPartitionStateMachine#electLeaderForPartitions -> "
        f"kafka_ref/controller/partition_state_machine.py:ZkPartitionStateMachine.elect_leader_for_partitions:{line}",
    ]
    assert out[2].startswith("  pdb: b kafka_ref/controller/partition_state_machine.py:")


def test_cli_coverage_is_complete(capsys, seeds):
    assert main(["map", "--coverage"]) == 0
    out = capsys.readouterr().out
    n = len(seeds.methods)
    assert out.splitlines()[-1] == f"{n}/{n} seed methods mirrored (100 %)"
    assert "MISSING" not in out


def test_cli_table_md_and_json(tmp_path, capsys, entries):
    assert main(["map"]) == 0
    md = capsys.readouterr().out.splitlines()
    assert md[0] == "| Kafka class#method | kafka_ref module:qualified name:line | era | seed sections |"
    assert len(md) == 2 + len(entries)
    out = tmp_path / "map.json"
    assert main(["map", "--format", "json", "--out", str(out)]) == 0
    rows = json.loads(out.read_text(encoding="utf-8"))
    assert len(rows) == len(entries)
    row = next(r for r in rows if r["kafka"] == "kafka.server.ReplicaManager#becomeLeaderOrFollower")
    assert row["module"] == "kafka_ref/replica/replica_manager.py"
    assert row["qualname"] == "ReplicaManager.become_leader_or_follower"
    assert row["seeds"] == [
        "seed 000 §becomeLeaderOrFollower",
        "seed 002 §handleLeaderAndIsrRequest",
        "seed 003 §2.3 split into leaders and followers",
    ]


def test_era_notes_name_known_kafka_releases():
    """Every era note in the map is a KIP, a switch name, or text naming Kafka releases precisely
    (no ``3.x`` wildcard, no number that is not a release, no seed section taken for a version)."""
    from kafka_ref import kafka_map

    problems = []
    for entry in kafka_map.collect_mirrors():
        for label in (part.strip() for part in entry.era.split(",") if part.strip()):
            problem = kafka_map.era_label_problem(label)
            if problem is not None:
                problems.append(f"{entry.module}:{entry.line}: {problem}")
    assert problems == []
    assert kafka_map.era_label_problem("Kafka 3.x") is not None
    assert kafka_map.era_label_problem("2.1–5.3") is not None
    assert kafka_map.era_label_problem("Kafka 3.7.0+") is None and kafka_map.era_label_problem("KIP-101") is None
    assert kafka_map._era_note("Mirrors X (seed 001 §5.3.2.1–5.3.2.2).") == ""
