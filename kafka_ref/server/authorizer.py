"""Who may do what on a broker.

Mirrors the slice of kafka.security.authorizer.AclAuthorizer that the replication protocol
needs: the ClusterAction operation on the Cluster resource, granted to super users (the
inter-broker and controller principal). Every other operation is allowed, as with no ACLs
and ``allow.everyone.if.no.acl.found=true``.
"""

from __future__ import annotations

from kafka_ref.network.network import INTER_BROKER_PRINCIPAL


class Authorizer:
    """Mirrors org.apache.kafka.server.authorizer.Authorizer#authorize for ClusterAction."""

    def __init__(self, super_users: frozenset[str] = frozenset({INTER_BROKER_PRINCIPAL})) -> None:
        self.super_users = super_users

    def authorize_cluster_action(self, principal: str) -> bool:
        return principal in self.super_users
