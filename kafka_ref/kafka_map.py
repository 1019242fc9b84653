"""The Kafka map: every ``Mirrors ...`` docstring in kafka_ref, and the seed step it serves.

The tree is read with :mod:`ast` (nothing is imported), so the map also works on a tree that
does not import cleanly. Each class or function whose docstring's first line starts with
``Mirrors`` yields one :class:`MirrorEntry`: the Kafka name it claims (``package.Class#method``
or a class-only ``package.Class``), where it lives here, and a short era note (KIP, IBP or
version text found in the docstring). ``docs/seed_methods.toml`` lists every class and method
the five seed documents name, so :func:`coverage` can tell which are mirrored.

Short names (``Mirrors TopicsDelta#replay.``) get their package from the enclosing class's
``Mirrors`` line, else from a fully qualified mention of the same class elsewhere in the tree,
else from :data:`KNOWN_PACKAGES`.
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_ROOT.parent
SEED_METHODS_TOML = REPO_ROOT / "docs" / "seed_methods.toml"

#: A reference in a first line: optional lowercase dotted package, a class (with optional
#: nested ``.Inner`` classes), an optional ``#method`` and optional overload arguments.
_REF = re.compile(
    r"(?<![\w.#`])((?:[a-z][a-z0-9_]*\.)+)?([A-Z][A-Za-z0-9_]*\$?(?:\.[A-Z][A-Za-z0-9_]*\$?)*)"
    r"(?:(?:#|\.(?=[a-z]))([A-Za-z_][A-Za-z0-9_]*|<init>))?(\([^()]*\))?"
)
#: ``Outer's Inner``: a class nested in (or a handler owned by) ``Outer``.
_POSSESSIVE = re.compile(r"^'s ([A-Z][A-Za-z0-9_]*)")
#: ``closure#inner`` on a lowercase name: a function nested in a mirrored method.
_LOWER_REF = re.compile(r"^Mirrors\s+([a-z][A-Za-z0-9_]*)#([A-Za-z_][A-Za-z0-9_]*)")
#: A fully qualified class mention anywhere in a docstring (for package lookup).
_QUALIFIED = re.compile(r"\b((?:kafka|org)(?:\.[a-z][a-z0-9_]*)+)\.([A-Z][A-Za-z0-9_]*)")
_ERA = re.compile(
    r"KIP-\d+|IBP\s*[<>=]*\s*\d+\.\d+(?:-IV\d)?\+?|inter\.broker\.protocol\.version"
    r"|metadata\.version|\bKafka\s+\d+\.(?:x|\d+(?:\.\d+)?(?:\s*[–-]\s*\d+\.\d+)?\+?)"
    r"|\b\d+\.\d+-IV\d\b|\b(?:before|after|since|from|below|until)\s+\d+\.\d+(?:-IV\d)?\+?"
    r"|\b\d+\.\d+\s*[–-]\s*\d+\.\d+\b|\b\d+\.\d+\+"
)
#: Words that explain why two places may claim the same Kafka method.
REASON_WORDS = ("era", "ibp", "version", "also", "legacy", "seed", "overload")

#: Packages of classes that the tree names only by their short name.
KNOWN_PACKAGES = {
    "ClientCnxn": "org.apache.zookeeper",
    "ClientCnxn.SendThread": "org.apache.zookeeper",
    "SessionTrackerImpl": "org.apache.zookeeper.server",
    "ZooKeeper": "org.apache.zookeeper",
    "DataTree": "org.apache.zookeeper.server",
    "ZooKeeperServer": "org.apache.zookeeper.server",
    "KafkaFuture": "org.apache.kafka.common",
    "AdminMetadataManager": "org.apache.kafka.clients.admin.internals",
    "ProducerMetadata": "org.apache.kafka.clients.producer.internals",
    "ControllerChannelContext": "kafka.controller",
    "ControllerEventThread": "kafka.controller",
    "KafkaEventQueue": "org.apache.kafka.queue",
    "BrokerRegistrationRequestData": "org.apache.kafka.common.message",
    "BrokerRegistrationRequestData.Listener": "org.apache.kafka.common.message",
    "BootstrapMetadata": "org.apache.kafka.metadata.bootstrap",
    "ControllerPurgatory": "org.apache.kafka.controller",
    "QuorumMetaLogListener": "org.apache.kafka.controller",
    "BrokersToIsrs": "org.apache.kafka.controller",
    "BrokerList": "org.apache.kafka.metadata.placement",
    "RackList": "org.apache.kafka.metadata.placement",
    "BlockingSend": "kafka.server",
}


@dataclass(frozen=True)
class MirrorEntry:
    """One ``Mirrors`` claim: a Kafka name and the kafka_ref place that mirrors it."""

    kafka: str  # package.Class#method or package.Class
    signature: str  # overload arguments, e.g. "(PartitionRecord)", else ""
    module: str  # kafka_ref/replica/replica_manager.py
    qualname: str  # ReplicaManager.become_leader_or_follower
    line: int
    era: str
    first_line: str
    docstring: str = field(repr=False, compare=False)

    @property
    def kafka_class(self) -> str:
        return self.kafka.split("#", 1)[0]

    @property
    def kafka_method(self) -> str:
        return self.kafka.split("#", 1)[1] if "#" in self.kafka else ""

    @property
    def location(self) -> str:
        return f"{self.module}:{self.qualname}:{self.line}"


@dataclass(frozen=True)
class SeedMethod:
    """One entry of docs/seed_methods.toml."""

    kafka: str
    seed: str
    section: str
    also: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.kafka, *self.also)


@dataclass
class SeedMethods:
    methods: list[SeedMethod]
    allow_duplicates: dict[str, str]  # kafka name -> reason


#: Seed citations (``§5.3.2.1–5.3.2.2``) are section numbers, not versions: left out of era notes.
_SEED_SECTION = re.compile(r"§[\w.–-]*")

#: The Kafka releases (major.minor) an era note may name; a label naming anything else (``3.x``,
#: ``5.3``) is not a version this project can point a reader to.
KAFKA_RELEASES = frozenset(
    ["0.8", "0.9", "0.10", "0.11", "1.0", "1.1"]
    + [f"2.{m}" for m in range(9)] + [f"3.{m}" for m in range(10)] + ["4.0"]
)
_VERSION_IN_LABEL = re.compile(r"(?<![\w.])(\d+)\.(\d+|x)(?:\.(\d+))?(?:-IV\d)?\+?")
_KIP = re.compile(r"KIP-\d+")
_SWITCH_NAMES = frozenset(["inter.broker.protocol.version", "metadata.version"])


def era_label_problem(label: str) -> str | None:
    """Why ``label`` (one era note) names no Kafka release precisely, or None when it does.

    A label is a KIP number, a switch name, or text whose every version is a known Kafka
    release (``KAFKA_RELEASES``; a third part must be a patch of it, an ``-IVn`` suffix is
    allowed); wildcards such as ``3.x`` are refused.
    """
    if _KIP.fullmatch(label) or label in _SWITCH_NAMES:
        return None
    versions = list(_VERSION_IN_LABEL.finditer(label))
    if not versions:
        return f"no version in era label {label!r}"
    for m in versions:
        major_minor = f"{m.group(1)}.{m.group(2)}"
        if m.group(2) == "x":
            return f"era label {label!r} names a whole line ({major_minor}), not a release"
        if major_minor not in KAFKA_RELEASES:
            return f"era label {label!r} names {m.group(0)}, not a Kafka release"
    return None


def _era_note(docstring: str) -> str:
    hits: list[str] = []
    for m in _ERA.finditer(_SEED_SECTION.sub("", " ".join(docstring.split()))):
        text = m.group(0)
        if text not in hits:
            hits.append(text)
    return ", ".join(hits[:3])


def _split_class(text: str) -> tuple[str, str]:
    """``kafka.server.ReplicaManager`` -> (``kafka.server``, ``ReplicaManager``)."""
    m = re.match(r"^((?:[a-z][a-z0-9_]*\.)*)(.*)$", text)
    assert m is not None
    return m.group(1).rstrip("."), m.group(2)


def parse_first_line(first_line: str) -> tuple[str, str, str, str] | None:
    """(package, Class, method, signature) of the first Kafka name a ``Mirrors`` line claims.

    Package is "" when the line uses a short name. Returns None for a line that names no class.
    A lowercase ``closure#inner`` gives ("", "", "closure#inner", "") for the caller to resolve.
    """
    if not first_line.startswith("Mirrors"):
        return None
    low = _LOWER_REF.match(first_line)
    if low:
        return "", "", f"{low.group(1)}#{low.group(2)}", ""
    rest = first_line[len("Mirrors") :]
    refs = list(_REF.finditer(rest))
    if not refs:
        return None
    # Prefer a reference with a method or a package (``the X part of kafka.Y``), else the first.
    best = next((m for m in refs if m.group(3) or m.group(1)), refs[0])
    package = (best.group(1) or "").rstrip(".")
    cls, method, signature = best.group(2), best.group(3) or "", best.group(4) or ""
    owned = _POSSESSIVE.match(rest[best.end() :])
    if owned and not method:
        cls = f"{cls}.{owned.group(1)}"
    if (signature and not method) or method == cls.split(".")[-1]:  # ``Class(args)``: a constructor
        method = "<init>"
    return package, cls, method, signature


@dataclass
class _Raw:
    package: str
    cls: str
    method: str
    signature: str
    module: str
    qualname: str
    line: int
    first_line: str
    docstring: str
    owner_kafka_class: str  # resolved Kafka class of the enclosing Python class, if any


def _walk(root: Path) -> tuple[list[_Raw], dict[str, set[str]]]:
    raws: list[_Raw] = []
    packages: dict[str, set[str]] = defaultdict(set)
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        module_doc = ast.get_docstring(tree) or ""
        for m in _QUALIFIED.finditer(module_doc):
            packages[m.group(2)].add(m.group(1))

        def visit(node: ast.AST, prefix: str, owner: str) -> None:
            for child in ast.iter_child_nodes(node):
                if not isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    visit(child, prefix, owner)
                    continue
                qual = f"{prefix}{child.name}"
                doc = ast.get_docstring(child) or ""
                for m in _QUALIFIED.finditer(doc):
                    packages[m.group(2)].add(m.group(1))
                first = doc.strip().splitlines()[0].strip() if doc.strip() else ""
                parsed = parse_first_line(first)
                child_owner = owner
                if parsed is not None:
                    package, cls, method, sig = parsed
                    raws.append(_Raw(package, cls, method, sig, rel, qual, child.lineno, first, doc, owner))
                    if isinstance(child, ast.ClassDef) and cls and not method:
                        child_owner = f"{package}.{cls}" if package else cls
                visit(child, f"{qual}.", child_owner if isinstance(child, ast.ClassDef) else owner)

        visit(tree, "", "")
    return raws, packages


def _resolve_package(cls: str, owner: str, packages: dict[str, set[str]]) -> str:
    owner_pkg, owner_cls = _split_class(owner)
    if owner_cls == cls and owner_pkg:
        return owner_pkg
    found = packages.get(cls) or packages.get(cls.split(".")[0])
    if found:
        return sorted(found)[0]
    return KNOWN_PACKAGES.get(cls, "")


def collect_mirrors(root: Path = PACKAGE_ROOT) -> list[MirrorEntry]:
    """Every ``Mirrors`` claim under ``root``, in file and line order."""
    raws, packages = _walk(root)
    for raw in raws:  # fully qualified claims teach the short ones their package
        if raw.package and raw.cls:
            packages[raw.cls].add(raw.package)
    entries: list[MirrorEntry] = []
    for raw in raws:
        cls, method, package = raw.cls, raw.method, raw.package
        signature = raw.signature
        if not cls:  # closure#inner: a function inside the owner's Kafka method, a part of it
            owner_pkg, owner_cls = _split_class(raw.owner_kafka_class)
            package, cls = owner_pkg, owner_cls
            method, inner = method.split("#", 1)
            signature = f"[{inner}]"
        if raw.first_line.startswith("Mirrors the ") and not signature:
            # "Mirrors the ``read`` closure inside X#y": a part of X#y, not a second claim on it.
            part = re.search(r"``(\w+)``", raw.first_line)
            signature = f"[{part.group(1)}]" if part else "[part]"
        if not package:
            package = _resolve_package(cls, raw.owner_kafka_class, packages)
        if not package and not method and raw.first_line.startswith("Mirrors the ") and raw.owner_kafka_class:
            # "Mirrors the MaxLag gauge": a named part of the enclosing Kafka class.
            signature = f"[{cls}]"
            package, cls = _split_class(raw.owner_kafka_class)
        name = f"{package}.{cls}" if package else cls
        if method:
            name = f"{name}#{method}"
        entries.append(
            MirrorEntry(name, signature, raw.module, raw.qualname, raw.line, _era_note(raw.docstring), raw.first_line, raw.docstring)
        )
    return entries


def load_seed_methods(path: Path = SEED_METHODS_TOML) -> SeedMethods:
    """Read docs/seed_methods.toml (``[[method]]`` entries and ``[[allow_duplicate]]`` reasons)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    methods = [
        SeedMethod(m["kafka"], str(m["seed"]), m["section"], tuple(m.get("also", ()))) for m in data.get("method", [])
    ]
    allow = {a["kafka"]: a["reason"] for a in data.get("allow_duplicate", [])}
    return SeedMethods(methods, allow)


def seed_sections(seeds: SeedMethods) -> dict[str, list[str]]:
    """Kafka name -> ["seed 000 §makeFollowers", ...] (every name of an entry, ``also`` included)."""
    out: dict[str, list[str]] = defaultdict(list)
    for m in seeds.methods:
        ref = f"seed {m.seed} §{m.section}"
        for name in m.names:
            if ref not in out[name]:
                out[name].append(ref)
    return out


def coverage(entries: list[MirrorEntry], seeds: SeedMethods) -> tuple[list[tuple[SeedMethod, MirrorEntry]], list[SeedMethod]]:
    """(mirrored seed methods with the first place claiming them, missing seed methods)."""
    by_name: dict[str, MirrorEntry] = {}
    for e in entries:
        by_name.setdefault(e.kafka, e)
    mirrored, missing = [], []
    for m in seeds.methods:
        hit = next((by_name[n] for n in m.names if n in by_name), None)
        if hit is None:
            missing.append(m)
        else:
            mirrored.append((m, hit))
    return mirrored, missing


def _has_reason(e: MirrorEntry) -> bool:
    text = e.docstring.lower()
    return any(re.search(rf"\b{w}", text) for w in REASON_WORDS)


def duplicates(entries: list[MirrorEntry], seeds: SeedMethods) -> tuple[dict[str, list[MirrorEntry]], dict[str, list[MirrorEntry]]]:
    """(all Kafka names claimed by more than one place, those with no stated reason).

    Overloads with different argument lists (``replay(TopicRecord)``) are different methods.
    Parts (``Mirrors the read closure inside ...``, signature ``[read]``) are not claims on the
    whole method. A duplicate is explained when either docstring says why (:data:`REASON_WORDS`), or the
    toml allowlists the name with a reason.
    """
    groups: dict[str, list[MirrorEntry]] = defaultdict(list)
    for e in entries:
        if not e.signature.startswith("["):  # parts ("Mirrors the X of Y") never collide
            groups[e.kafka + e.signature].append(e)
    dups = {k: v for k, v in groups.items() if len(v) > 1}
    unexplained = {
        k: v
        for k, v in dups.items()
        if k not in seeds.allow_duplicates and k.split("(")[0] not in seeds.allow_duplicates and not any(_has_reason(e) for e in v)
    }
    return dups, unexplained


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def find(entries: list[MirrorEntry], query: str) -> list[MirrorEntry]:
    """Entries whose Kafka method (or class) or our name matches ``query``.

    ``query`` may be Kafka camelCase (``makeFollowers``), our snake_case (``make_followers``),
    or qualified (``ReplicaManager#makeFollowers``, ``ReplicaManager.make_followers``).
    """
    q = query.strip()
    cls_q = ""
    for sep in ("#", "."):
        if sep in q and q.split(sep)[-1][:1].islower():
            cls_q, q = q.rsplit(sep, 1)
            cls_q = cls_q.split(".")[-1]
            break
    key = q.replace("_", "").lower()
    out = []
    for e in entries:
        kafka_cls = e.kafka_class.split(".")[-1]
        if cls_q and cls_q.lower() not in (kafka_cls.lower(), e.qualname.split(".")[0].lower()):
            continue
        target = e.kafka_method or kafka_cls
        ours = e.qualname.split(".")[-1].replace("_", "").lower()
        if target.lower() == key or (e.kafka_method and ours == key and _snake(e.kafka_method) == _snake(q)):
            out.append(e)
    return out


def find_seed_names(seeds: SeedMethods, query: str) -> list[SeedMethod]:
    """Seed entries whose own (older) name matches ``query`` (``electLeaderForPartition``,
    ``PartitionStateMachine#electLeaderForPartition``) and that name newer methods in ``also``."""
    q = query.strip()
    cls_q = ""
    if "#" in q:
        cls_q, q = q.rsplit("#", 1)
        cls_q = cls_q.split(".")[-1].lower()
    out = []
    for m in seeds.methods:
        cls, _, method = m.kafka.rpartition("#")
        if method.lower() == q.lower() and (not cls_q or cls.split(".")[-1].lower() == cls_q):
            out.append(m)
    return out


def first_body_line(entry: MirrorEntry) -> int | None:
    """The first statement after the docstring of the mirrored function (where pdb can stop)."""
    path = REPO_ROOT / entry.module
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return None
    node: ast.AST = tree
    for part in entry.qualname.split("."):
        node = next((n for n in getattr(node, "body", []) if isinstance(n, (ast.ClassDef, ast.FunctionDef,
                     ast.AsyncFunctionDef)) and n.name == part), None)
        if node is None:
            return None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]
    return body[0].lineno if body else None


def map_rows(entries: list[MirrorEntry], seeds: SeedMethods) -> list[dict[str, object]]:
    """One row per claim, sorted by Kafka name: kafka, location, era, seeds."""
    sections = seed_sections(seeds)
    rows = [
        {
            "kafka": e.kafka + e.signature,
            "module": e.module,
            "qualname": e.qualname,
            "line": e.line,
            "era": e.era,
            "seeds": sections.get(e.kafka, []),
        }
        for e in entries
    ]
    rows.sort(key=lambda r: (not r["seeds"], str(r["kafka"]), str(r["module"]), int(r["line"])))  # type: ignore[call-overload]
    return rows


def render_md(rows: list[dict[str, object]]) -> str:
    lines = [
        "| Kafka class#method | kafka_ref module:qualified name:line | era | seed sections |",
        "|---|---|---|---|",
    ]
    for r in rows:
        seeds_text = "; ".join(r["seeds"])  # type: ignore[arg-type]
        era = str(r["era"]).replace("|", "/")
        lines.append(f"| `{r['kafka']}` | {r['module']}:{r['qualname']}:{r['line']} | {era} | {seeds_text} |")
    return "\n".join(lines) + "\n"


def render_json(rows: list[dict[str, object]]) -> str:
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"


def add_map_arguments(parser) -> None:  # argparse.ArgumentParser
    parser.add_argument("--format", choices=("md", "json"), default="md", help="table format (default: md)")
    parser.add_argument("--out", default=None, help="write the table to FILE instead of stdout")
    parser.add_argument("--find", default=None, metavar="NAME", help="where a Kafka method (camelCase or snake_case) lives here")
    parser.add_argument("--coverage", action="store_true", help="which seed methods are mirrored; exit 1 if any is missing")


def run_map_command(args) -> int:
    entries = collect_mirrors()
    seeds = load_seed_methods()
    if args.find:
        hits = find(entries, args.find)
        for e in hits:
            print(f"{e.kafka}{e.signature} -> {e.location}")
        if not hits:
            # The seeds read older Kafka: resolve their names through docs/seed_methods.toml.
            for m in find_seed_names(seeds, args.find):
                newer = [n for n in m.names[1:]]
                print(f"{m.kafka} (seed {m.seed} §{m.section}) is mirrored as {', '.join(newer) or m.kafka}:")
                for name in newer or [m.kafka]:
                    for e in find(entries, name.rsplit(".", 1)[-1]):
                        if e.kafka == name:
                            hits.append(e)
                            print(f"  {e.kafka}{e.signature} -> {e.location}")
        for e in hits[:3]:
            line = first_body_line(e)
            if line is not None:
                print(f"  pdb: b {e.module}:{line}")
        if not hits:
            print(f"no Mirrors line claims {args.find!r}")
        return 0 if hits else 1
    if args.coverage:
        mirrored, missing = coverage(entries, seeds)
        total = len(seeds.methods)
        for m, e in mirrored:
            print(f"mirrored  seed {m.seed} §{m.section}: {m.kafka} -> {e.kafka} {e.location}")
        for m in missing:
            print(f"MISSING   seed {m.seed} §{m.section}: {' / '.join(m.names)}")
        pct = 100.0 * len(mirrored) / total if total else 100.0
        print(f"{len(mirrored)}/{total} seed methods mirrored ({pct:.0f} %)")
        return 1 if missing else 0
    rows = map_rows(entries, seeds)
    text = render_json(rows) if args.format == "json" else render_md(rows)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {len(rows)} rows to {args.out}")
    else:
        print(text, end="")
    return 0
