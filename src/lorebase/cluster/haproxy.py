"""HAProxy (Debian's package) in front of the gateways, as an Ingress or a cloud load balancer is.

Round robin over the gateways, each checked with `GET /health` every second (out after three
failures, back after two passes; a check may take 5 s on a busy machine); a request whose connection to a gateway fails is sent to another
(`retries`, `option redispatch`). Event streams pass through unbuffered with hour-long timeouts, like
the chart's nginx annotations (deploy/helm/README.md, "Ingress"). `make cluster` and the cluster
tests install the package when `haproxy` is missing (as `make test` installs chromium).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from lorebase.embedded import EmbeddedServerError, owned_child
from lorebase.embedded._process import _log_tail, _open_log, _port_accepts, _stop_process

_CONFIG = """\
# Written by lorebase.cluster on every start.
global
  maxconn 8192
defaults
  mode http
  option http-server-close
  timeout connect 2s
  timeout client 3600s
  timeout server 3600s
  timeout http-request 15s
  timeout check 5s
  retries 2
  option redispatch
frontend lorebase
  bind 127.0.0.1:%(port)d
  default_backend gateways
backend gateways
  balance roundrobin
  option httpchk GET /health
  http-check expect status 200
  default-server inter 1s fall 3 rise 2
%(servers)s
"""


def haproxy_binary() -> str:
    found = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)
    if found is None:
        raise EmbeddedServerError("haproxy is not installed: apt-get install haproxy (make cluster does)")
    return found


class Haproxy:
    """One haproxy process on `port` over the gateways at `gateway_ports`."""

    def __init__(self, directory: Path, port: int, gateway_ports: list[int]) -> None:
        self.directory = directory
        self.port = port
        self.gateway_ports = gateway_ports
        self.log_path = directory / "haproxy.log"
        self.config_path = directory / "haproxy.cfg"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def poll(self) -> int | None:
        return None if self._process is None else self._process.poll()

    def start(self) -> str:
        servers = "\n".join(
            f"  server gateway-{index} 127.0.0.1:{port} check"
            for index, port in enumerate(self.gateway_ports, start=1)
        )
        self.directory.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(_CONFIG % {"port": self.port, "servers": servers}, encoding="utf-8")
        log = _open_log(self.log_path)
        try:
            self._process = subprocess.Popen(
                [haproxy_binary(), "-db", "-f", str(self.config_path)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                **owned_child(signal.SIGTERM),
            )
        finally:
            os.close(log)
        deadline = time.monotonic() + 10
        while not _port_accepts(self.port):
            if self._process.poll() is not None or time.monotonic() > deadline:
                raise EmbeddedServerError(f"haproxy did not start:\n{_log_tail(self.log_path)}")
            time.sleep(0.05)
        return self.url

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            _stop_process(process, signal.SIGTERM, 5.0)


__all__ = ["Haproxy", "haproxy_binary"]
