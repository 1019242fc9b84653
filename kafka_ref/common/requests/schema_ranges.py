"""Integer fields checked against their schema types where a request enters a broker or controller.

Kafka never sees an ``int16`` field holding 70000 or an ``int32`` holding 2**40: its generated
message classes read exactly two or four bytes. Our request dataclasses hold Python ints, so an
in-process caller could hand a broker a value no wire message could carry. ``validate_schema_ranges``
walks a request against the message schema (the JSON definitions Kafka ships, as kafka-python's
generated classes carry them; kafka_ref.wire) and raises ``InvalidRequestException`` naming the
first field whose value does not fit its type — what a Kafka broker would have refused as
unreadable. Requests with no schema in the wire table are not checked.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any

from kafka_ref.common.errors import InvalidRequestException

# Each schema integer type and the values it can carry.
INT_RANGES: dict[str, tuple[int, int]] = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
}


@lru_cache(maxsize=None)
def _request_struct(request_type: type) -> Any:
    """The schema struct of a request dataclass (None when the wire table does not have it)."""
    from kafka_ref.wire.apis import WIRE_APIS

    for api in WIRE_APIS.values():
        if api.request_type is request_type:
            return api.wire_request._struct
    return None


def validate_schema_ranges(request: Any) -> None:
    """Raise InvalidRequestException if an integer field of ``request`` is outside its schema type."""
    struct = _request_struct(type(request))
    if struct is not None:
        _check(request, struct, type(request).__name__)


def _check(obj: Any, struct: Any, path: str) -> None:
    for f in dataclasses.fields(obj):
        field = struct.fields.get(f.name)
        if field is None:
            continue
        value = getattr(obj, f.name)
        if value is None:
            continue
        where = f"{path}.{f.name}"
        if field.is_struct_array():
            for i, item in enumerate(value):
                if dataclasses.is_dataclass(item):
                    _check(item, field, f"{where}[{i}]")
        elif field.is_struct():
            if dataclasses.is_dataclass(value):
                _check(value, field, where)
        elif field.is_array():
            bounds = INT_RANGES.get(field.type_str[2:])
            if bounds is not None:
                for i, item in enumerate(value):
                    _in_range(item, bounds, field.type_str[2:], f"{where}[{i}]")
        else:
            bounds = INT_RANGES.get(field.type_str)
            if bounds is not None:
                _in_range(value, bounds, field.type_str, where)


def _in_range(value: Any, bounds: tuple[int, int], type_name: str, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequestException(f"{where} must be an {type_name}, got {value!r}")
    low, high = bounds
    if not low <= value <= high:
        raise InvalidRequestException(f"{where} = {value} does not fit the schema type {type_name} [{low}, {high}]")
