"""kafka_ref: an executable, annotated specification of Apache Kafka's broker internals."""

__version__ = "0.1.0"
