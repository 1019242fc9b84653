"""A list with a maximum length: the guard on how many records one user operation may write.

Mirrors org.apache.kafka.server.mutable.BoundedList and BoundedListTooLongException (Kafka 3.5.0+,
KAFKA-14996). The KRaft controller collects the records of a user operation (creating topics,
electing leaders, reassigning partitions) in one of these, bounded by
QuorumController.MAX_RECORDS_PER_USER_OP; growing past the bound raises, and the controller
answers the whole operation with POLICY_VIOLATION instead of writing a batch too large to commit.
"""

from __future__ import annotations

from typing import Any, Iterable


class BoundedListTooLongException(RuntimeError):
    """Mirrors org.apache.kafka.server.mutable.BoundedListTooLongException."""


class BoundedList(list):
    """Mirrors org.apache.kafka.server.mutable.BoundedList (array-backed): a list that refuses to grow
    beyond ``max_length`` elements."""

    def __init__(self, max_length: int, items: Iterable[Any] = ()) -> None:
        if max_length <= 0:
            raise ValueError(f"Invalid non-positive maxLength of {max_length}")
        super().__init__()
        self.max_length = max_length
        self.extend(items)

    def _check_room(self, extra: int) -> None:
        if len(self) + extra > self.max_length:
            raise BoundedListTooLongException(
                f"Cannot add another {extra} element(s) to this list because it would exceed the "
                f"maximum length of {self.max_length}")

    def ensure_room(self, extra: int) -> None:
        """Raise now if ``extra`` more elements would not fit (kafka_ref's check before building them)."""
        self._check_room(extra)

    def append(self, item: Any) -> None:
        self._check_room(1)
        super().append(item)

    def insert(self, index: Any, item: Any) -> None:
        self._check_room(1)
        super().insert(index, item)

    def extend(self, items: Iterable[Any]) -> None:
        items = list(items)
        self._check_room(len(items))
        super().extend(items)

    def __iadd__(self, items: Iterable[Any]) -> "BoundedList":  # type: ignore[override]
        self.extend(items)
        return self
