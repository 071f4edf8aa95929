# Generated from protos/ by scripts/gen_protos.py. Do not edit.
from lorebase.v1 import keeper_pb2 as _keeper_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class MemoryRequest(_message.Message):
    __slots__ = ("record_id", "body", "idempotency_key")
    RECORD_ID_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    record_id: str
    body: bytes
    idempotency_key: str
    def __init__(self, record_id: _Optional[str] = ..., body: _Optional[bytes] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class MemoryGrantRequest(_message.Message):
    __slots__ = ("grant_id", "body")
    GRANT_ID_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    grant_id: str
    body: bytes
    def __init__(self, grant_id: _Optional[str] = ..., body: _Optional[bytes] = ...) -> None: ...

class MemoryCheckpointRequest(_message.Message):
    __slots__ = ("consumer", "body", "after", "limit")
    CONSUMER_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    consumer: str
    body: bytes
    after: str
    limit: int
    def __init__(self, consumer: _Optional[str] = ..., body: _Optional[bytes] = ..., after: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...
