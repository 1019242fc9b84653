"""Writing a metadata image back out as records, for a chosen metadata.version.

Mirrors org.apache.kafka.image.writer.ImageWriterOptions and RecordListWriter (Kafka 3.8): a
snapshot is an image written as the records that rebuild it (MetadataImage#write). The
options name the metadata.version the records must be readable at; what that version
cannot express is reported to the loss handler (the default one refuses, as Kafka's throws
UnwritableMetadataException) and left out of the records.

metadata.version is carried as its feature level (an int), as the FeatureLevelRecord does:
the levels of Kafka's MetadataVersion enum that matter here are named below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

# Feature levels of org.apache.kafka.server.common.MetadataVersion.
IBP_3_0_IV1 = 1  # MINIMUM_KRAFT_VERSION
IBP_3_2_IV0 = 3
IBP_3_3_IV0 = 4  # MINIMUM_BOOTSTRAP_VERSION: the first with FeatureLevelRecord
IBP_3_3_IV2 = 6
IBP_3_3_IV3 = 7  # inControlledShutdown in RegisterBrokerRecord
IBP_3_4_IV0 = 8  # ZK migration (isMigratingZkBroker)
IBP_3_6_IV0 = 12
IBP_3_8_IV0 = 20  # latestProduction() in Kafka 3.8.0
MINIMUM_KRAFT_VERSION = IBP_3_0_IV1
MINIMUM_BOOTSTRAP_VERSION = IBP_3_3_IV0
LATEST_PRODUCTION = IBP_3_8_IV0
METADATA_VERSION_FEATURE = "metadata.version"


class UnwritableMetadataException(RuntimeError):
    """Mirrors org.apache.kafka.image.writer.UnwritableMetadataException: what a metadata.version cannot hold."""

    def __init__(self, metadata_version: int, loss: str) -> None:
        super().__init__(f"Metadata has been lost because the following could not be represented "
                         f"in metadata.version level {metadata_version}: {loss}")
        self.metadata_version = metadata_version
        self.loss = loss


def _refuse_loss(error: UnwritableMetadataException) -> None:
    raise error


@dataclass(frozen=True, slots=True)
class ImageWriterOptions:
    """Mirrors org.apache.kafka.image.writer.ImageWriterOptions (built with its Builder's defaults:
    the latest production metadata.version and a loss handler that throws)."""

    metadata_version: int = LATEST_PRODUCTION
    loss_handler: Callable[[UnwritableMetadataException], None] = field(default=_refuse_loss)

    def handle_loss(self, loss: str) -> None:
        """Mirrors ImageWriterOptions#handleLoss: hand the loss, with our metadata.version, to the handler."""
        self.loss_handler(UnwritableMetadataException(self.metadata_version, loss))


class RecordListWriter:
    """Mirrors org.apache.kafka.image.writer.RecordListWriter: collects the written records in order."""

    def __init__(self) -> None:
        self._records: list = []
        self._closed = False

    def write(self, record: object) -> None:
        """Mirrors RecordListWriter#write."""
        if self._closed:
            raise RuntimeError("Image writer has been closed.")
        self._records.append(record)

    def close(self, complete: bool = True) -> None:
        """Mirrors RecordListWriter#close."""
        self._closed = True

    def records(self) -> list:
        """Mirrors RecordListWriter#records."""
        return list(self._records)
