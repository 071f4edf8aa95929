"""PostgreSQL over verified TLS: a URL with libpq's `sslmode=verify-full` (and `sslrootcert`, or the
PGSSLROOTCERT variable the Helm chart sets when it mounts the CA) reaches asyncpg, for the services'
Database and for the migrations (the chart's pre-install Job). The embedded PostgreSQL is built
without TLS, so the test puts PostgreSQL's TLS in front of it (TlsProxy) with a certificate signed
by a CA made here: the client side, which is Lorebase's, is asyncpg's real handshake and checks."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import secrets
import ssl
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import asyncpg
import pytest
import pytest_asyncio
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from sqlalchemy import text

from lorebase.embedded import create_database, drop_database
from lorebase_store.db import Database
from lorebase_store.migrate import engine_target, head_revision, upgrade


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _certificate(
    subject: str, key: ec.EllipticCurvePrivateKey, issuer: tuple[str, ec.EllipticCurvePrivateKey] | None
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer[0] if issuer else subject))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
    )
    if issuer is None:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    else:
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(issuer[1] if issuer else key, hashes.SHA256())


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def make_ca(directory: Path, name: str) -> tuple[Path, tuple[str, ec.EllipticCurvePrivateKey]]:
    key = ec.generate_private_key(ec.SECP256R1())
    path = directory / f"{name}.crt"
    path.write_bytes(_pem(_certificate(name, key, None)))
    return path, (name, key)


class TlsProxy:
    """PostgreSQL's TLS in front of a server without it (the embedded build has no SSL): answers a
    client's SSLRequest with 'S', completes the TLS handshake with a certificate signed by the test
    CA, then relays the protocol in clear to the server. `handshakes` counts completed handshakes."""

    def __init__(self, upstream: tuple[str, int], context: ssl.SSLContext) -> None:
        self.upstream = upstream
        self.context = context
        self.handshakes = 0
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await reader.readexactly(8)
            if request != SSL_REQUEST:
                return  # this proxy speaks TLS only
            writer.write(b"S")
            await writer.drain()
            await writer.start_tls(self.context)
            self.handshakes += 1
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except (OSError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            writer.close()


SSL_REQUEST = struct.pack("!ii", 8, 80877103)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        writer.close()


@dataclass
class TlsServer:
    url: str  # the superuser URL through the proxy (no TLS parameters yet)
    ca: Path  # the CA that signed the proxy's certificate
    other_ca: Path
    proxy: TlsProxy


@pytest_asyncio.fixture(loop_scope="session")
async def tls_server(postgres_url: str, tmp_path: Path) -> AsyncIterator[TlsServer]:
    ca_path, ca = make_ca(tmp_path, "lorebase-test-ca")
    other_path, _ = make_ca(tmp_path, "another-ca")
    key = ec.generate_private_key(ec.SECP256R1())
    (tmp_path / "server.crt").write_bytes(_pem(_certificate("127.0.0.1", key, ca)))
    (tmp_path / "server.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp_path / "server.crt", tmp_path / "server.key")
    parts = urlsplit(postgres_url)
    assert parts.hostname is not None and parts.port is not None
    proxy = TlsProxy((parts.hostname, parts.port), context)
    port = await proxy.start()
    try:
        yield TlsServer(
            urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.port}", f":{port}"))),
            ca_path,
            other_path,
            proxy,
        )
    finally:
        await proxy.stop()


def with_query(url: str, query: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}{query}"


async def _answers(database: Database) -> bool:
    async with database.engine.connect() as conn:
        return bool(await conn.scalar(text("select true")))


def test_libpq_tls_parameters_go_to_asyncpg_and_the_rest_to_sqlalchemy() -> None:
    url = "postgresql://u:p%40ss@db.internal:5432/lorebase?sslmode=verify-full&sslrootcert=/etc/ca.crt&application_name=x"
    target, connect_args = engine_target(url)
    assert target == "postgresql+asyncpg://u:p%40ss@db.internal:5432/lorebase?application_name=x"
    assert connect_args == {"dsn": "postgresql://?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.crt"}
    assert engine_target("postgresql://u@h/db") == ("postgresql+asyncpg://u@h/db", {})


async def test_verify_full_with_sslrootcert_in_the_url(tls_server: TlsServer) -> None:
    database = Database.connect(
        with_query(tls_server.url, f"sslmode=verify-full&sslrootcert={quote(str(tls_server.ca))}")
    )
    try:
        assert await _answers(database)
    finally:
        await database.close()
    assert tls_server.proxy.handshakes >= 1


async def test_verify_full_with_the_ca_from_pgsslrootcert(
    tls_server: TlsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chart's way: the URL says sslmode=verify-full, PGSSLROOTCERT names the mounted CA."""
    monkeypatch.setenv("PGSSLROOTCERT", str(tls_server.ca))
    database = Database.connect(with_query(tls_server.url, "sslmode=verify-full"))
    try:
        assert await _answers(database)
    finally:
        await database.close()
    assert tls_server.proxy.handshakes >= 1


async def test_a_server_certificate_from_another_ca_is_refused(tls_server: TlsServer) -> None:
    url = with_query(tls_server.url, f"sslmode=verify-full&sslrootcert={quote(str(tls_server.other_ca))}")
    database = Database.connect(url)
    try:
        with pytest.raises(ssl.SSLCertVerificationError):
            await _answers(database)
    finally:
        await database.close()
    assert tls_server.proxy.handshakes == 0


async def test_migrations_run_over_verified_tls(tls_server: TlsServer, postgres_url: str) -> None:
    """`lorebase migrate` (the chart's hook Job) with such a URL."""
    name = f"t_tls_{secrets.token_hex(4)}"
    url = await create_database(postgres_url, name)
    try:
        through = urlsplit(tls_server.url)
        tls_url = urlunsplit(urlsplit(url)._replace(netloc=through.netloc))
        tls_url = with_query(tls_url, f"sslmode=verify-full&sslrootcert={quote(str(tls_server.ca))}")
        await asyncio.to_thread(upgrade, tls_url)  # upgrade() runs an event loop of its own
        conn = await asyncpg.connect(url)
        try:
            assert await conn.fetchval("select version_num from alembic_version") == head_revision()
        finally:
            await conn.close()
        assert tls_server.proxy.handshakes >= 1
    finally:
        await drop_database(postgres_url, name)
