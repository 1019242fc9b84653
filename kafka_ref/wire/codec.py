"""Our request/response dataclasses to and from Kafka wire bytes, derived from the schemas.

Mirrors what Kafka's generated ``*Data`` classes do (org.apache.kafka.common.message: read and
write a message at one version, flexible versions with compact types and tagged fields) by
leaning on kafka-python 3.x's protocol package, whose message classes are generated at import
time from the same JSON message definitions Kafka ships. Nothing here describes a message by
hand: the mapping between a schema message and one of our frozen dataclasses
(kafka_ref/common/requests/) is computed from the two field lists.

- A schema field ``TopicId`` is kafka-python's ``topic_id`` and our dataclass field ``topic_id``
  (both are Kafka's names in snake_case), so fields match by name; nested structs recurse, the
  dataclass type of a nested struct comes from the dataclass field's type hint.
- A field the decoded version does not carry keeps our dataclass default (the schema default).
- Values convert by schema type: ``records`` ↔ MemoryRecords, ``uuid`` ↔ Uuid, arrays ↔ tuples,
  ``bitfield`` (kafka-python's patch of authorized-operations ints) ↔ Kafka's int32.
- ``RENAMES`` lists the few places where kafka-python renamed a schema field; a test checks that
  every dataclass field of every wired message finds its schema field.

Per-API differences that are not a matter of naming (old versions with another shape, listener
addresses) live in ``kafka_ref.wire.adapters``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
import uuid as _uuid
from functools import lru_cache
from typing import Any

from kafka.protocol.schemas.fields.codecs import BitField

from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.errors import CorruptRecordException, InvalidRecordException
from kafka_ref.common.records import MemoryRecords
from kafka_ref.common.records.memory_records import UnparsableRecords, UnsupportedMagicException
from kafka_ref.common.uuid import ZERO_UUID, Uuid

# (schema struct name, our field name) -> kafka-python's field name, where they differ.
RENAMES: dict[tuple[str, str], str] = {
    # kafka-python patches the authorized-operations int32s into a "bitfield" named so.
    ("MetadataResponseTopic", "topic_authorized_operations"): "authorized_operations",
    ("MetadataResponse", "cluster_authorized_operations"): "authorized_operations",
    ("DescribeClusterResponse", "cluster_authorized_operations"): "authorized_operations",
    ("DescribedGroup", "authorized_operations"): "authorized_operations",
}

AUTHORIZED_OPERATIONS_OMITTED = -2147483648


class CodecError(ValueError):
    """A wire message that does not fit our dataclass (malformed records, bad values)."""


@lru_cache(maxsize=None)
def _hints(dc_type: type) -> dict[str, Any]:
    return typing.get_type_hints(dc_type)


@lru_cache(maxsize=None)
def _fields(dc_type: type) -> tuple[dataclasses.Field, ...]:
    """The schema fields of a dataclass (a request's header-only ``version`` is not one)."""
    return tuple(f for f in dataclasses.fields(dc_type) if f.init and not f.metadata.get("request_header"))


def _carries_version(dc_type: type) -> bool:
    """A request dataclass that records the version it was sent at (REQUEST_HEADER_FIELD)."""
    return any(f.name == "version" and f.metadata.get("request_header") for f in dataclasses.fields(dc_type))


def _dataclass_in(hint: Any) -> type | None:
    """The dataclass a type hint names, looking inside tuple[...] and X | None."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return hint
    for arg in typing.get_args(hint):
        if arg is Ellipsis or arg is type(None):
            continue
        found = _dataclass_in(arg)
        if found is not None:
            return found
    return None


def _allows_none(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    return (origin is typing.Union or origin is types.UnionType) and type(None) in typing.get_args(hint)


def _struct_name(struct: Any) -> str:
    # A nested struct is named by its type; a message's own struct by the message name
    # (kafka-python stores it snake_cased: metadata_response -> MetadataResponse).
    type_str = struct.type_str
    if type_str.startswith("[]"):
        return type_str[2:]
    if type_str in ("request", "response", "header"):
        return "".join(part.capitalize() for part in struct.name.split("_"))
    return type_str


def wire_field_name(struct_name: str, our_name: str) -> str:
    return RENAMES.get((struct_name, our_name), our_name)


# ---------------------------------------------------------------------------------- decoding


def _value_in(value: Any, field: Any, hint: Any, version: int) -> Any:
    if field.is_struct_array():
        if value is None:
            return None if _allows_none(hint) else ()
        dc = _dataclass_in(hint)
        return tuple(from_wire(v, dc, version, field) for v in value)
    if field.is_struct():
        dc = _dataclass_in(hint)
        if value is None:
            return None if _allows_none(hint) else dc()
        return from_wire(value, dc, version, field)
    if field.is_array():
        if value is None:
            return None if _allows_none(hint) else ()
        return tuple(value)
    kind = field.type_str
    if kind == "records":
        if value is None:
            return MemoryRecords.EMPTY
        try:
            return MemoryRecords.from_bytes(value)
        except RUN_ENDING:
            raise
        except Exception as exc:  # corrupt or unsupported batches: that partition's error, not the request's
            return UnparsableRecords(bytes(value), _records_error(exc, version))
    if kind == "uuid":
        return ZERO_UUID if value is None else Uuid._from_int(value.int)
    if kind == "bitfield":
        return AUTHORIZED_OPERATIONS_OMITTED if value is None else BitField.to_32_bit_field(value)
    if kind == "bytes":
        return None if value is None else bytes(value)
    return value


def _records_error(exc: Exception, version: int) -> Exception:
    """The ApiException a produce request's unreadable record set gets (ProduceRequest#validateRecords, LogValidator)."""
    if isinstance(exc, UnsupportedMagicException):
        return InvalidRecordException(
            f"Produce requests with version {version} are only allowed to contain record batches with magic version 2")
    if isinstance(exc, CorruptRecordException):
        return exc
    return CorruptRecordException(f"Record set does not parse: {exc}")


def from_wire(message: Any, dc_type: type, version: int, struct: Any = None) -> Any:
    """One of our dataclasses from a decoded kafka-python message (or nested struct) at ``version``."""
    struct = struct if struct is not None else message._struct
    name = _struct_name(struct)
    schema = struct.fields
    hints = _hints(dc_type)
    kwargs: dict[str, Any] = {}
    for f in _fields(dc_type):
        field = schema.get(wire_field_name(name, f.name))
        # A field the schema lacks, or this version does not carry, keeps our default.
        if field is None or not field.for_version_q(version):
            continue
        kwargs[f.name] = _value_in(getattr(message, field.name), field, hints[f.name], version)
    if _carries_version(dc_type):
        kwargs["version"] = version  # the header's api_version: the broker reads the body by it
    return dc_type(**kwargs)


# ---------------------------------------------------------------------------------- encoding


def _value_out(value: Any, field: Any, version: int) -> Any:
    if field.is_struct_array():
        if value is None:
            return None
        return [to_wire(v, field.data_class, version, field) for v in value]
    if field.is_struct():
        return None if value is None else to_wire(value, field.data_class, version, field)
    if field.is_array():
        return None if value is None else list(value)
    kind = field.type_str
    if kind == "records":
        if value is None:
            return None
        return value.to_bytes() if isinstance(value, MemoryRecords) else bytes(value)
    if kind == "uuid":
        if value is None or value == ZERO_UUID:
            return None
        return _uuid.UUID(bytes=value.to_bytes())
    if kind == "bitfield":
        if value is None or value == AUTHORIZED_OPERATIONS_OMITTED:
            return None
        return BitField.from_32_bit_field(value)
    if kind == "bytes":
        return None if value is None else bytes(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)  # IntEnum members go out as plain ints
    return value


def to_wire(obj: Any, wire_cls: Any, version: int, struct: Any = None) -> Any:
    """A kafka-python message (or nested struct) holding ``obj``'s fields for ``version``."""
    struct = struct if struct is not None else wire_cls._struct
    name = _struct_name(struct)
    ours = {wire_field_name(name, f.name): f for f in _fields(type(obj))}
    kwargs: dict[str, Any] = {}
    for wire_name, field in struct.fields.items():
        if not field.for_version_q(version):
            continue
        f = ours.get(wire_name)
        if f is None:
            continue  # not in our dataclass: the schema default goes out
        value = getattr(obj, f.name)
        # A tagged field goes out only when it differs from its default.
        if field.tag is not None and _is_default(f, value):
            continue
        kwargs[wire_name] = _value_out(value, field, version)
    return wire_cls(**kwargs)


def _is_default(f: dataclasses.Field, value: Any) -> bool:
    if f.default is not dataclasses.MISSING:
        return value == f.default
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return value == f.default_factory()  # type: ignore[misc]
    return False


def unmapped_fields(dc_type: type, struct: Any, seen: set | None = None) -> list[str]:
    """Dataclass fields (recursively) with no schema field of the same (or renamed) name.

    Used by a test to prove that the dataclasses and the schemas describe the same messages.
    """
    seen = set() if seen is None else seen
    if dc_type in seen:
        return []
    seen.add(dc_type)
    name = _struct_name(struct)
    missing: list[str] = []
    hints = _hints(dc_type)
    for f in _fields(dc_type):
        field = struct.fields.get(wire_field_name(name, f.name))
        if field is None:
            missing.append(f"{dc_type.__name__}.{f.name}")
            continue
        if field.is_struct() or field.is_struct_array():
            nested = _dataclass_in(hints[f.name])
            if nested is not None:
                missing.extend(unmapped_fields(nested, field, seen))
    return missing
