"""The async client of Scribe."""

from __future__ import annotations

from typing import Any

from lorebase.clients._channel import ServiceClient
from lorebase.v1 import scribe_pb2 as pb
from lorebase.v1 import scribe_pb2_grpc


class ScribeClient(ServiceClient):
    service = "scribe"
    grpc_service = pb.DESCRIPTOR.services_by_name["Scribe"].full_name
    reads = ("ListJobs",)

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self._stub = scribe_pb2_grpc.ScribeStub(self.channel)

    async def list_jobs(self, *, credential: str) -> pb.JobList:
        """The jobs and their last runs, for the operator (the admin key)."""
        return await self._call(self._stub.ListJobs, pb.ListJobsRequest(), credential=credential)


__all__ = ["ScribeClient"]
