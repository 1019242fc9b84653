"""Who may do what on a broker.

Mirrors the slice of kafka.security.authorizer.AclAuthorizer that the replication protocol
needs: the ClusterAction operation on the Cluster resource, granted to super users (the
inter-broker and controller principal). Other operations on the Cluster resource (ALTER for
reassignments and elections, DESCRIBE for listing reassignments) and topic operations are allowed to everyone, as with no
ACLs and ``allow.everyone.if.no.acl.found=true``, except where a test denies a principal a
topic with ``deny_topic``.
"""

from __future__ import annotations

from kafka_ref.network.network import INTER_BROKER_PRINCIPAL


class Authorizer:
    """Mirrors org.apache.kafka.server.authorizer.Authorizer#authorize for ClusterAction and topic operations."""

    def __init__(self, super_users: frozenset[str] = frozenset({INTER_BROKER_PRINCIPAL})) -> None:
        self.super_users = super_users
        self.denied: set[tuple[str, str, str]] = set()
        self.denied_cluster: set[tuple[str, str]] = set()

    def authorize_cluster_action(self, principal: str) -> bool:
        """ClusterAction on the Cluster resource: super users only."""
        return principal in self.super_users

    def authorize_cluster(self, principal: str, operation: str) -> bool:
        """An operation (ALTER, DESCRIBE, CLUSTER_ACTION) on the Cluster resource.

        ClusterAction is for super users only; the others are allowed to everyone unless denied.
        """
        if operation == "CLUSTER_ACTION" or principal in self.super_users:
            return principal in self.super_users
        return (principal, operation) not in self.denied_cluster

    def authorize_topic(self, principal: str, operation: str, topic: str) -> bool:
        """An operation (READ, WRITE, DESCRIBE) on a topic: super users always, others unless denied."""
        if principal in self.super_users:
            return True
        return (principal, operation, topic) not in self.denied

    def deny_topic(self, principal: str, operation: str, topic: str) -> None:
        """A DENY ACL for ``principal`` on ``topic`` (for tests of the authorization paths)."""
        self.denied.add((principal, operation, topic))

    def deny_cluster(self, principal: str, operation: str) -> None:
        """A DENY ACL for ``principal`` on the Cluster resource (for tests of the authorization paths)."""
        self.denied_cluster.add((principal, operation))
