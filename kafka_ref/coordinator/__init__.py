"""Coordinators that live inside a broker.

Mirrors the package kafka.coordinator: ``group`` holds the classic (pre-KIP-848) group
coordinator, which owns the ``__consumer_offsets`` partitions this broker leads (seed 000
§``__consumer_offset`` leader 切换处理).
"""
