"""`python -m lorebase.cluster` (`make cluster`): the cluster harness in the foreground, with the
supply example, until Ctrl-C; everything it started is stopped then."""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
from pathlib import Path

from lorebase.cluster.harness import Cluster
from lorebase.cluster.values import DEFAULT_VALUES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lorebase.cluster", description=__doc__)
    parser.add_argument("--values", type=Path, default=DEFAULT_VALUES, help="the Helm values file to run by")
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="where the servers keep their data (default: a new temporary one)",
    )
    parser.add_argument("--example", default="supply", help="an example Domain to load ('' for none)")
    args = parser.parse_args(argv)
    directory = args.dir or Path(tempfile.mkdtemp(prefix="lorebase-cluster-"))
    cluster = Cluster(directory, values=args.values)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        cluster.start(example=args.example or None)
        print(f"Lorebase cluster is up: {cluster.url} (Ctrl-C stops it)", flush=True)
        print(f"  admin key   {cluster.admin_key}", flush=True)
        print(f"  NATS        {', '.join(f'127.0.0.1:{n.port}' for n in cluster.nats.nodes)}", flush=True)
        for server in cluster.postgres.servers:
            print(f"  PostgreSQL  {server.name} ({server.role}) 127.0.0.1:{server.port}", flush=True)
        print(f"  data        {directory}", flush=True)
        while True:
            cluster.watch(3600)
    except KeyboardInterrupt:
        print("lorebase cluster: stopping", file=sys.stderr, flush=True)
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
