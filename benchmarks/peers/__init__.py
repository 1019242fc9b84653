"""Peers: the same produce → consume workload through other in-process Kafka stand-ins.

``benchmarks.peers.mockafka_peer``: mockafka-py (``run_mockafka``, ``compare_with_mockafka``).
"""
