# Generated from protos/ by scripts/gen_protos.py. Do not edit.
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class FeedStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class FeedStatus(_message.Message):
    __slots__ = ("published_through", "pending", "stream")
    PUBLISHED_THROUGH_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    published_through: int
    pending: int
    stream: str
    def __init__(self, published_through: _Optional[int] = ..., pending: _Optional[int] = ..., stream: _Optional[str] = ...) -> None: ...
