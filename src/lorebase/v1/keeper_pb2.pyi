# Generated from protos/ by scripts/gen_protos.py. Do not edit.
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class Reply(_message.Message):
    __slots__ = ("body", "revision", "content_type", "status", "headers")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    BODY_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    body: bytes
    revision: str
    content_type: str
    status: int
    headers: _containers.ScalarMap[str, str]
    def __init__(self, body: _Optional[bytes] = ..., revision: _Optional[str] = ..., content_type: _Optional[str] = ..., status: _Optional[int] = ..., headers: _Optional[_Mapping[str, str]] = ...) -> None: ...

class CreatePrincipalRequest(_message.Message):
    __slots__ = ("id", "type", "name", "tenant")
    ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    id: str
    type: str
    name: str
    tenant: str
    def __init__(self, id: _Optional[str] = ..., type: _Optional[str] = ..., name: _Optional[str] = ..., tenant: _Optional[str] = ...) -> None: ...

class CreateKeyRequest(_message.Message):
    __slots__ = ("principal",)
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    principal: str
    def __init__(self, principal: _Optional[str] = ...) -> None: ...

class RevokeKeyRequest(_message.Message):
    __slots__ = ("principal", "key_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    principal: str
    key_id: str
    def __init__(self, principal: _Optional[str] = ..., key_id: _Optional[str] = ...) -> None: ...

class CreateDomainRequest(_message.Message):
    __slots__ = ("body",)
    BODY_FIELD_NUMBER: _ClassVar[int]
    body: bytes
    def __init__(self, body: _Optional[bytes] = ...) -> None: ...

class ListDomainsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DomainRequest(_message.Message):
    __slots__ = ("domain",)
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    domain: str
    def __init__(self, domain: _Optional[str] = ...) -> None: ...

class CreateGrantRequest(_message.Message):
    __slots__ = ("domain", "body")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    domain: str
    body: bytes
    def __init__(self, domain: _Optional[str] = ..., body: _Optional[bytes] = ...) -> None: ...

class DeleteGrantRequest(_message.Message):
    __slots__ = ("domain", "grant_id")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    GRANT_ID_FIELD_NUMBER: _ClassVar[int]
    domain: str
    grant_id: str
    def __init__(self, domain: _Optional[str] = ..., grant_id: _Optional[str] = ...) -> None: ...

class GetSchemaRequest(_message.Message):
    __slots__ = ("domain", "branch", "at")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    domain: str
    branch: str
    at: str
    def __init__(self, domain: _Optional[str] = ..., branch: _Optional[str] = ..., at: _Optional[str] = ...) -> None: ...

class GetRevisionRequest(_message.Message):
    __slots__ = ("domain", "revision", "branch", "limit", "cursor")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    domain: str
    revision: str
    branch: str
    limit: int
    cursor: str
    def __init__(self, domain: _Optional[str] = ..., revision: _Optional[str] = ..., branch: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListRecordsRequest(_message.Message):
    __slots__ = ("domain", "kind", "branch", "at", "limit", "cursor")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    domain: str
    kind: str
    branch: str
    at: str
    limit: int
    cursor: str
    def __init__(self, domain: _Optional[str] = ..., kind: _Optional[str] = ..., branch: _Optional[str] = ..., at: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListLinksRequest(_message.Message):
    __slots__ = ("domain", "relation", "branch", "at", "limit", "cursor")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    RELATION_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    domain: str
    relation: str
    branch: str
    at: str
    limit: int
    cursor: str
    def __init__(self, domain: _Optional[str] = ..., relation: _Optional[str] = ..., branch: _Optional[str] = ..., at: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ChangeSchemaRequest(_message.Message):
    __slots__ = ("domain", "branch", "body", "idempotency_key", "prefer")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    PREFER_FIELD_NUMBER: _ClassVar[int]
    domain: str
    branch: str
    body: bytes
    idempotency_key: str
    prefer: str
    def __init__(self, domain: _Optional[str] = ..., branch: _Optional[str] = ..., body: _Optional[bytes] = ..., idempotency_key: _Optional[str] = ..., prefer: _Optional[str] = ...) -> None: ...

class GetSchemaChangeRequest(_message.Message):
    __slots__ = ("domain", "id")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    domain: str
    id: str
    def __init__(self, domain: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class ListSchemaChangesRequest(_message.Message):
    __slots__ = ("domain", "branch", "limit", "cursor")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    domain: str
    branch: str
    limit: int
    cursor: str
    def __init__(self, domain: _Optional[str] = ..., branch: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class CreateBranchRequest(_message.Message):
    __slots__ = ("domain", "body")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    domain: str
    body: bytes
    def __init__(self, domain: _Optional[str] = ..., body: _Optional[bytes] = ...) -> None: ...

class GetBranchRequest(_message.Message):
    __slots__ = ("domain", "branch")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    domain: str
    branch: str
    def __init__(self, domain: _Optional[str] = ..., branch: _Optional[str] = ...) -> None: ...

class UpdateBranchRequest(_message.Message):
    __slots__ = ("domain", "branch", "body")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    domain: str
    branch: str
    body: bytes
    def __init__(self, domain: _Optional[str] = ..., branch: _Optional[str] = ..., body: _Optional[bytes] = ...) -> None: ...

class CreateErasureRequest(_message.Message):
    __slots__ = ("domain", "body")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    domain: str
    body: bytes
    def __init__(self, domain: _Optional[str] = ..., body: _Optional[bytes] = ...) -> None: ...

class ListErasuresRequest(_message.Message):
    __slots__ = ("domain", "limit", "cursor")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    domain: str
    limit: int
    cursor: str
    def __init__(self, domain: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class CreateTagRequest(_message.Message):
    __slots__ = ("domain", "body")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    domain: str
    body: bytes
    def __init__(self, domain: _Optional[str] = ..., body: _Optional[bytes] = ...) -> None: ...

class ListTagsRequest(_message.Message):
    __slots__ = ("domain", "limit", "cursor")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    domain: str
    limit: int
    cursor: str
    def __init__(self, domain: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class TagRequest(_message.Message):
    __slots__ = ("domain", "tag")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    TAG_FIELD_NUMBER: _ClassVar[int]
    domain: str
    tag: str
    def __init__(self, domain: _Optional[str] = ..., tag: _Optional[str] = ...) -> None: ...

class ProposalRequest(_message.Message):
    __slots__ = ("domain", "proposal", "conflict", "body", "status", "assigned", "limit", "cursor")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    PROPOSAL_FIELD_NUMBER: _ClassVar[int]
    CONFLICT_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ASSIGNED_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    domain: str
    proposal: str
    conflict: str
    body: bytes
    status: str
    assigned: str
    limit: int
    cursor: str
    def __init__(self, domain: _Optional[str] = ..., proposal: _Optional[str] = ..., conflict: _Optional[str] = ..., body: _Optional[bytes] = ..., status: _Optional[str] = ..., assigned: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ExecuteOperationRequest(_message.Message):
    __slots__ = ("domain", "operation", "body", "idempotency_key")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    domain: str
    operation: str
    body: bytes
    idempotency_key: str
    def __init__(self, domain: _Optional[str] = ..., operation: _Optional[str] = ..., body: _Optional[bytes] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class ImportRequest(_message.Message):
    __slots__ = ("domain", "body", "idempotency_key")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    domain: str
    body: bytes
    idempotency_key: str
    def __init__(self, domain: _Optional[str] = ..., body: _Optional[bytes] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class SyncSourceRequest(_message.Message):
    __slots__ = ("domain", "source", "body", "idempotency_key")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    domain: str
    source: str
    body: bytes
    idempotency_key: str
    def __init__(self, domain: _Optional[str] = ..., source: _Optional[str] = ..., body: _Optional[bytes] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class ListSuggestionsRequest(_message.Message):
    __slots__ = ("domain", "status")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    domain: str
    status: str
    def __init__(self, domain: _Optional[str] = ..., status: _Optional[str] = ...) -> None: ...

class SuggestionRequest(_message.Message):
    __slots__ = ("domain", "id")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    domain: str
    id: str
    def __init__(self, domain: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class ListReconciliationRequest(_message.Message):
    __slots__ = ("domain", "status", "kind", "assigned", "limit", "cursor")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    ASSIGNED_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    domain: str
    status: str
    kind: str
    assigned: str
    limit: int
    cursor: str
    def __init__(self, domain: _Optional[str] = ..., status: _Optional[str] = ..., kind: _Optional[str] = ..., assigned: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ReconciliationRequest(_message.Message):
    __slots__ = ("domain", "id", "body")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    domain: str
    id: str
    body: bytes
    def __init__(self, domain: _Optional[str] = ..., id: _Optional[str] = ..., body: _Optional[bytes] = ...) -> None: ...

class ScanReconciliationRequest(_message.Message):
    __slots__ = ("domain",)
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    domain: str
    def __init__(self, domain: _Optional[str] = ...) -> None: ...

class GetRecordRequest(_message.Message):
    __slots__ = ("domain", "branch", "kind", "key", "at", "links", "lineage")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    LINKS_FIELD_NUMBER: _ClassVar[int]
    LINEAGE_FIELD_NUMBER: _ClassVar[int]
    domain: str
    branch: str
    kind: str
    key: str
    at: str
    links: bool
    lineage: bool
    def __init__(self, domain: _Optional[str] = ..., branch: _Optional[str] = ..., kind: _Optional[str] = ..., key: _Optional[str] = ..., at: _Optional[str] = ..., links: _Optional[bool] = ..., lineage: _Optional[bool] = ...) -> None: ...

class GetLinksRequest(_message.Message):
    __slots__ = ("domain", "branch", "kind", "key", "relation", "at", "limit", "cursor")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    RELATION_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    domain: str
    branch: str
    kind: str
    key: str
    relation: str
    at: str
    limit: int
    cursor: str
    def __init__(self, domain: _Optional[str] = ..., branch: _Optional[str] = ..., kind: _Optional[str] = ..., key: _Optional[str] = ..., relation: _Optional[str] = ..., at: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class RecordRequest(_message.Message):
    __slots__ = ("domain", "branch", "kind", "key", "at", "values", "limit", "cursor", "format")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    domain: str
    branch: str
    kind: str
    key: str
    at: str
    values: bool
    limit: int
    cursor: str
    format: str
    def __init__(self, domain: _Optional[str] = ..., branch: _Optional[str] = ..., kind: _Optional[str] = ..., key: _Optional[str] = ..., at: _Optional[str] = ..., values: _Optional[bool] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ..., format: _Optional[str] = ...) -> None: ...

class DiffRequest(_message.Message):
    __slots__ = ("domain", "branch", "from_revision", "to_revision")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    FROM_REVISION_FIELD_NUMBER: _ClassVar[int]
    TO_REVISION_FIELD_NUMBER: _ClassVar[int]
    domain: str
    branch: str
    from_revision: str
    to_revision: str
    def __init__(self, domain: _Optional[str] = ..., branch: _Optional[str] = ..., from_revision: _Optional[str] = ..., to_revision: _Optional[str] = ...) -> None: ...

class HealthRequest(_message.Message):
    __slots__ = ("domain", "branch", "kind", "at", "format")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    domain: str
    branch: str
    kind: str
    at: str
    format: str
    def __init__(self, domain: _Optional[str] = ..., branch: _Optional[str] = ..., kind: _Optional[str] = ..., at: _Optional[str] = ..., format: _Optional[str] = ...) -> None: ...

class GraphRequest(_message.Message):
    __slots__ = ("domain", "body")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    domain: str
    body: bytes
    def __init__(self, domain: _Optional[str] = ..., body: _Optional[bytes] = ...) -> None: ...

class SessionNoteRequest(_message.Message):
    __slots__ = ("session", "body")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    session: str
    body: bytes
    def __init__(self, session: _Optional[str] = ..., body: _Optional[bytes] = ...) -> None: ...

class SessionRequest(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: str
    def __init__(self, session: _Optional[str] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("domain", "principal", "limit", "before", "proposal")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    PROPOSAL_FIELD_NUMBER: _ClassVar[int]
    domain: str
    principal: str
    limit: int
    before: str
    proposal: str
    def __init__(self, domain: _Optional[str] = ..., principal: _Optional[str] = ..., limit: _Optional[int] = ..., before: _Optional[str] = ..., proposal: _Optional[str] = ...) -> None: ...

class WebSessionRequest(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: str
    def __init__(self, key: _Optional[str] = ...) -> None: ...

class EmbeddingRequest(_message.Message):
    __slots__ = ("domain", "kind", "key", "body")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    domain: str
    kind: str
    key: str
    body: bytes
    def __init__(self, domain: _Optional[str] = ..., kind: _Optional[str] = ..., key: _Optional[str] = ..., body: _Optional[bytes] = ...) -> None: ...

class AuthenticateRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AuthorizeReadRequest(_message.Message):
    __slots__ = ("domain", "branch", "permission")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    PERMISSION_FIELD_NUMBER: _ClassVar[int]
    domain: str
    branch: str
    permission: str
    def __init__(self, domain: _Optional[str] = ..., branch: _Optional[str] = ..., permission: _Optional[str] = ...) -> None: ...

class AuthorizeRequest(_message.Message):
    __slots__ = ("endpoint", "request")
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    endpoint: str
    request: bytes
    def __init__(self, endpoint: _Optional[str] = ..., request: _Optional[bytes] = ...) -> None: ...

class QueryRequest(_message.Message):
    __slots__ = ("domain", "body")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    domain: str
    body: bytes
    def __init__(self, domain: _Optional[str] = ..., body: _Optional[bytes] = ...) -> None: ...
