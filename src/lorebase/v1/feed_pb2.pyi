# Generated from protos/ by scripts/gen_protos.py. Do not edit.
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class FeedStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class FeedStatus(_message.Message):
    __slots__ = ("published_through", "pending", "stream", "fence", "parked", "behind_s", "degraded")
    PUBLISHED_THROUGH_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    PARKED_FIELD_NUMBER: _ClassVar[int]
    BEHIND_S_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    published_through: int
    pending: int
    stream: str
    fence: int
    parked: int
    behind_s: float
    degraded: str
    def __init__(self, published_through: _Optional[int] = ..., pending: _Optional[int] = ..., stream: _Optional[str] = ..., fence: _Optional[int] = ..., parked: _Optional[int] = ..., behind_s: _Optional[float] = ..., degraded: _Optional[str] = ...) -> None: ...

class ChangesRequest(_message.Message):
    __slots__ = ("domain", "branch", "since", "kinds", "limit")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    domain: str
    branch: str
    since: str
    kinds: str
    limit: int
    def __init__(self, domain: _Optional[str] = ..., branch: _Optional[str] = ..., since: _Optional[str] = ..., kinds: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class ChangesReply(_message.Message):
    __slots__ = ("body", "revision")
    BODY_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    body: bytes
    revision: str
    def __init__(self, body: _Optional[bytes] = ..., revision: _Optional[str] = ...) -> None: ...

class EventsRequest(_message.Message):
    __slots__ = ("domain", "branch", "kinds", "last_event_id", "control", "until")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    LAST_EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONTROL_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    domain: str
    branch: str
    kinds: str
    last_event_id: str
    control: bool
    until: int
    def __init__(self, domain: _Optional[str] = ..., branch: _Optional[str] = ..., kinds: _Optional[str] = ..., last_event_id: _Optional[str] = ..., control: _Optional[bool] = ..., until: _Optional[int] = ...) -> None: ...

class StreamItem(_message.Message):
    __slots__ = ("ready", "heartbeat", "sequence", "event", "data", "caught_up", "principal", "traceparent")
    READY_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    CAUGHT_UP_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    TRACEPARENT_FIELD_NUMBER: _ClassVar[int]
    ready: bool
    heartbeat: bool
    sequence: int
    event: str
    data: bytes
    caught_up: bool
    principal: str
    traceparent: str
    def __init__(self, ready: _Optional[bool] = ..., heartbeat: _Optional[bool] = ..., sequence: _Optional[int] = ..., event: _Optional[str] = ..., data: _Optional[bytes] = ..., caught_up: _Optional[bool] = ..., principal: _Optional[str] = ..., traceparent: _Optional[str] = ...) -> None: ...

class WebhookRequest(_message.Message):
    __slots__ = ("domain", "id", "body")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    domain: str
    id: str
    body: bytes
    def __init__(self, domain: _Optional[str] = ..., id: _Optional[str] = ..., body: _Optional[bytes] = ...) -> None: ...

class WebhookReply(_message.Message):
    __slots__ = ("body", "status")
    BODY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    body: bytes
    status: int
    def __init__(self, body: _Optional[bytes] = ..., status: _Optional[int] = ...) -> None: ...
