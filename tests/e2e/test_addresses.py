"""`lorebase up` prints where each part answers, without secrets; the gRPC services answer server
reflection (what grpcurl and Postman ask) and health for each of their services."""

from __future__ import annotations

import re

import grpc
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from tests.e2e.running import Running

SERVICES = {
    "keeper": ("lorebase.v1.Keeper", "lorebase.v1.MemoryStore"),
    "feed": ("lorebase.v1.Feed", "lorebase.v1.MemoryJournal"),
    "scribe": ("lorebase.v1.Scribe",),
}


def printed_addresses(running: Running) -> dict[str, str]:
    lines = running.log.read_text(errors="replace").splitlines()
    [grpc_line] = [line for line in lines if line.strip().startswith("gRPC ")]
    return dict(re.findall(r"(keeper|feed|scribe) (127\.0\.0\.1:\d+)", grpc_line))


def test_up_prints_every_address_and_no_secret(running: Running) -> None:
    text = running.log.read_text(errors="replace")
    for part in ("web app", "REST", "gRPC", "NATS", "PostgreSQL"):
        assert re.search(rf"^  {part} +\S", text, re.MULTILINE), part
    assert re.search(r"^  NATS +nats://127\.0\.0\.1:\d+ ", text, re.MULTILINE)
    token = (running.data_dir / "nats.token").read_text().strip()
    password = (running.data_dir / "postgres-lorebase.password").read_text().strip()
    assert token and token not in text and password and password not in text
    assert set(printed_addresses(running)) == set(SERVICES)


def test_grpc_reflection_and_health(running: Running) -> None:
    for name, address in printed_addresses(running).items():
        with grpc.insecure_channel(address) as channel:
            database = ProtoReflectionDescriptorDatabase(channel)
            listed = set(database.get_services())
            assert set(SERVICES[name]) <= listed, (name, listed)
            assert "grpc.health.v1.Health" in listed
            pool = DescriptorPool(database)
            for service in SERVICES[name]:
                assert pool.FindServiceByName(service).methods  # the whole schema, from the server
                status = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service=service), timeout=10
                )
                assert status.status == health_pb2.HealthCheckResponse.SERVING
    keeper = SERVICES["keeper"][0]
    pool = DescriptorPool(
        ProtoReflectionDescriptorDatabase(grpc.insecure_channel(printed_addresses(running)["keeper"]))
    )
    assert "GetRecord" in {m.name for m in pool.FindServiceByName(keeper).methods}
