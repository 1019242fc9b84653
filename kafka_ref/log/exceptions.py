"""The log's own exceptions that never travel in a response.

Mirrors kafka.common.UnexpectedAppendOffsetException and kafka.common.OffsetsOutOfOrderException.
Both are broker-internal (plain RuntimeExceptions in Kafka, not ApiExceptions), raised on the
follower's append path, so they live here rather than in kafka_ref.common.errors.
"""

from __future__ import annotations


class UnexpectedAppendOffsetException(RuntimeError):
    """Mirrors kafka.common.UnexpectedAppendOffsetException.

    A follower was asked to append batches whose first offset lies below its log end offset.
    Carries the first and last offsets of the rejected append, as Kafka's does.
    """

    def __init__(self, message: str, first_offset: int, last_offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.first_offset = first_offset
        self.last_offset = last_offset

    def __reduce__(self):
        return (type(self), (self.message, self.first_offset, self.last_offset))


class OffsetsOutOfOrderException(RuntimeError):
    """Mirrors kafka.common.OffsetsOutOfOrderException.

    The batches of one follower append do not carry strictly increasing offsets.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
