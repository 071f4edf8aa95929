"""The service clients' channels: which RPCs gRPC retries on another replica (lorebase.clients._channel)."""

from __future__ import annotations

import json

import grpc
import pytest

from lorebase.clients._channel import READ_RETRY_POLICY, ClientSettings, ServiceClient, service_config
from lorebase.clients.feed import FeedClient
from lorebase.clients.keeper import KeeperClient
from lorebase.clients.memory import MemoryJournalClient, MemoryStoreClient
from lorebase.clients.scribe import ScribeClient
from lorebase.contract import ENDPOINTS
from lorebase.problems import Problem
from lorebase.v1 import feed_pb2, feed_pb2_grpc, keeper_pb2, memory_pb2, scribe_pb2

CLIENTS = [
    (KeeperClient, keeper_pb2, "Keeper"),
    (FeedClient, feed_pb2, "Feed"),
    (MemoryStoreClient, memory_pb2, "MemoryStore"),
    (MemoryJournalClient, memory_pb2, "MemoryJournal"),
    (ScribeClient, scribe_pb2, "Scribe"),
]
WRITES = {e.rpc for e in ENDPOINTS if e.method != "GET" and e.rpc}


@pytest.mark.parametrize(("client", "module", "name"), CLIENTS, ids=[c[2] for c in CLIENTS])
def test_only_reads_of_the_service_are_retried(
    client: type[ServiceClient], module: object, name: str
) -> None:
    service = module.DESCRIPTOR.services_by_name[name]  # type: ignore[attr-defined]
    assert client.grpc_service == service.full_name
    assert client.reads and set(client.reads) <= set(service.methods_by_name)
    assert not set(client.reads) & WRITES, "a write is retried: it may have been committed already"


def test_the_service_config_spreads_calls_and_retries_unavailable_reads() -> None:
    config = json.loads(service_config(KeeperClient.grpc_service, KeeperClient.reads))
    assert config["loadBalancingConfig"] == [{"round_robin": {}}]
    [method_config] = config["methodConfig"]
    assert {"service": "lorebase.v1.Keeper", "method": "GetRecord"} in method_config["name"]
    assert {"service": "lorebase.v1.Keeper", "method": "ExecuteOperation"} not in method_config["name"]
    assert method_config["retryPolicy"] == READ_RETRY_POLICY
    assert READ_RETRY_POLICY["retryableStatusCodes"] == ["UNAVAILABLE"]
    assert "methodConfig" not in json.loads(service_config("lorebase.v1.Nothing", ()))


class _FlakyFeed(feed_pb2_grpc.FeedServicer):
    """A feed replica going away: UNAVAILABLE for its first `failures` calls of each RPC."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls: dict[str, int] = {}

    async def _fail_first(self, name: str, context: grpc.aio.ServicerContext) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1
        if self.calls[name] <= self.failures:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "stopping")

    async def Status(self, request: object, context: grpc.aio.ServicerContext) -> feed_pb2.FeedStatus:  # noqa: N802
        await self._fail_first("Status", context)
        return feed_pb2.FeedStatus()

    async def CreateWebhook(
        self, request: object, context: grpc.aio.ServicerContext
    ) -> feed_pb2.WebhookReply:  # noqa: N802
        await self._fail_first("CreateWebhook", context)
        return feed_pb2.WebhookReply()


async def test_a_read_answered_unavailable_is_tried_again_and_a_write_is_not() -> None:
    servicer = _FlakyFeed(failures=2)
    server = grpc.aio.server()
    feed_pb2_grpc.add_FeedServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    client = FeedClient(ClientSettings(address=f"127.0.0.1:{port}", deadline_s=10))
    try:
        await client.status(credential="key")
        assert servicer.calls["Status"] == 3  # two UNAVAILABLE, then the answer
        with pytest.raises(Problem) as refused:
            await client._call(client._stub.CreateWebhook, feed_pb2.WebhookRequest(), credential="key")
        assert refused.value.status == 503 and servicer.calls["CreateWebhook"] == 1
    finally:
        await client.close()
        await server.stop(None)
