"""What the service clients share: a channel, a deadline, the credential in metadata, problems."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from lorebase import consistency, tracing
from lorebase.clients.calls import Answer, answer_of, message_of
from lorebase.contract import ENDPOINTS, Endpoint
from lorebase.grpc_problems import problem_from_error
from lorebase.grpc_serve import MAX_MESSAGE_BYTES, MAX_METADATA_BYTES
from lorebase.logs import REQUEST_ID, REQUEST_ID_METADATA

T = TypeVar("T")
RECONNECT_INITIAL_MS = 250
RECONNECT_MAX_MS = 2000

# A read that finds its replica gone (UNAVAILABLE: stopping, restarted, its connection dropped) is
# tried again by gRPC on the channel's other replicas, about 0.1, 0.2 and 0.4 s apart, before the
# caller sees a 503. Only reads: a write the replica may have committed before it went is left to
# the client and its idempotency key.
READ_RETRY_POLICY = {
    "maxAttempts": 4,
    "initialBackoff": "0.1s",
    "maxBackoff": "1s",
    "backoffMultiplier": 2,
    "retryableStatusCodes": ["UNAVAILABLE"],
}


def read_rpcs(contract_service: str) -> tuple[str, ...]:
    """The RPCs of the REST surface's reads (GET) that `contract_service` serves."""
    return tuple(
        sorted({e.rpc for e in ENDPOINTS if e.service == contract_service and e.method == "GET" and e.rpc})
    )


def service_config(grpc_service: str, reads: tuple[str, ...]) -> str:
    """The channel's gRPC service config: round_robin over the replicas, `reads` retried."""
    config: dict[str, Any] = {"loadBalancingConfig": [{"round_robin": {}}]}
    if reads:
        names = [{"service": grpc_service, "method": method} for method in reads]
        config["methodConfig"] = [{"name": names, "retryPolicy": READ_RETRY_POLICY}]
    return json.dumps(config)


# The agent session of the request being served (the gateway sets it from `Lorebase-Session`).
SESSION: ContextVar[str | None] = ContextVar("lorebase_session", default=None)


def call_metadata(credential: str | None) -> tuple[tuple[str, str], ...] | None:
    """The metadata of a call: the credential, the agent session, the request id being served and
    the read's consistency ask (lorebase.consistency)."""
    metadata: tuple[tuple[str, str], ...] = (("authorization", credential),) if credential else ()
    session = SESSION.get()
    if session:
        metadata += (("lorebase-session", session),)
    request_id = REQUEST_ID.get()
    if request_id:
        metadata += ((REQUEST_ID_METADATA, request_id),)
    ask = consistency.ASK.get()
    if ask is not consistency.PLAIN:
        metadata += ask.metadata()
    return metadata or None


@dataclass(frozen=True)
class ClientSettings:
    address: str
    deadline_s: float = 30.0
    # Bulk writes (imports, source syncs) of up to keeper.imports.max_items rows take longer.
    bulk_deadline_s: float = 600.0


class ServiceClient:
    """Base of the hand-written clients: one channel per client, a deadline on every call."""

    service = "service"
    grpc_service = ""  # the full name of the gRPC service ("lorebase.v1.Keeper")
    reads: tuple[str, ...] = ()  # its RPCs that only read: retried on another replica (READ_RETRY_POLICY)

    def __init__(self, settings: ClientSettings) -> None:
        self.settings = settings
        self.channel = grpc.aio.insecure_channel(
            settings.address,
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_metadata_size", MAX_METADATA_BYTES),
                # A name resolving to several pods (the Helm chart's headless Services) gets its
                # calls spread over all of them, not pinned to the first address.
                ("grpc.lb_policy_name", "round_robin"),
                ("grpc.service_config", service_config(self.grpc_service, self.reads)),
                # A replica that went away is tried again within RECONNECT_MAX_MS, not after gRPC's
                # default backoff of up to two minutes: a restarted or replaced replica (a rolling
                # upgrade) serves again in seconds, and while the others also restart, the calls
                # would have no replica left to go to.
                ("grpc.initial_reconnect_backoff_ms", RECONNECT_INITIAL_MS),
                ("grpc.min_reconnect_backoff_ms", RECONNECT_INITIAL_MS),
                ("grpc.max_reconnect_backoff_ms", RECONNECT_MAX_MS),
            ],
            # With tracing on: a span per call, its context in the metadata (lorebase.tracing).
            interceptors=tracing.client_interceptors() or None,
        )
        self._health = health_pb2_grpc.HealthStub(self.channel)

    async def close(self) -> None:
        await self.channel.close()

    async def _call(
        self,
        method: Callable[..., Awaitable[T]],
        request: Any,
        *,
        credential: str | None = None,
        bulk: bool = False,
    ) -> T:
        try:
            timeout = self.settings.bulk_deadline_s if bulk else self.settings.deadline_s
            return await method(request, timeout=timeout, metadata=call_metadata(credential))
        except grpc.aio.AioRpcError as error:
            raise problem_from_error(error, self.service) from None

    async def invoke(
        self, endpoint: Endpoint, values: dict[str, Any], body: bytes | None, *, credential: str | None
    ) -> Answer:
        """The one generic call: the endpoint's RPC with its parameters and body (lorebase.clients.calls)."""
        stub = self._stub  # type: ignore[attr-defined]
        message = message_of(endpoint, values, body)
        reply = await self._call(
            getattr(stub, endpoint.rpc), message, credential=credential, bulk=endpoint.bulk
        )
        return answer_of(endpoint, reply)

    async def healthy(self, *, timeout_s: float = 2.0) -> bool:
        """The standard gRPC health check of the service."""
        try:
            answer = await self._health.Check(health_pb2.HealthCheckRequest(service=""), timeout=timeout_s)
        except grpc.aio.AioRpcError:
            return False
        return bool(answer.status == health_pb2.HealthCheckResponse.SERVING)


__all__ = [
    "READ_RETRY_POLICY",
    "SESSION",
    "ClientSettings",
    "ServiceClient",
    "call_metadata",
    "read_rpcs",
    "service_config",
]
