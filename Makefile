# One command per job; each creates .venv and installs the project on first use.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# pytest-xdist workers of `make test`: one per core, at most 4 (each starts its own PostgreSQL, NATS
# and the stacks of its tests; more workers than cores only queue). TEST_WORKERS=0 runs serially.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 4 ] && n=4; echo $$n)

# Our modules' bytecode, written once before the suites: the tests start hundreds of Python processes
# (each `lorebase up` six, the CLI's calls one each), and where PYTHONDONTWRITEBYTECODE is set (this
# machine, CI) each would compile every module again (0.6 s of CPU per service start).
BYTECODE := $(BIN)/python -m compileall -q -j 0 src services tests >/dev/null

# make test's temporary files (pytest's basetemp: the `lorebase up` data dirs of the e2e and browser
# tests, the Herald and pipx venvs; pip's, uv's and npm's scratch) on a memory file system when
# /dev/shm has 4 GiB free. On this machine's ext4 every file created after many were deleted (each
# stack's initdb, each venv) cost kernel time; on tmpfs tests/e2e/test_up.py with the Herald wheel
# and pipx tests ran ~15 % faster (docs/running.md, "Tests"). Only the files of failed tests are
# kept (tmp_path_retention_policy=failed): a passing run leaves nothing in memory.
# TEST_TMPDIR= (empty) keeps the temporary directory as it is.
TEST_TMPDIR ?= $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$$(df -Pk /dev/shm | awk 'NR==2 {print int($$4 / 1048576)}')" -ge 4 ] 2>/dev/null && echo /dev/shm)
TEST_ENV := $(if $(TEST_TMPDIR),TMPDIR=$(TEST_TMPDIR))
TEST_TMP_OPTIONS := $(if $(TEST_TMPDIR),-o tmp_path_retention_policy=failed)

.PHONY: run test test-deps test-cluster cluster lint protos docs bench bench-scale clean web web-test

# The web app (web/): npm ci when the lock changes, a build when a source changes (web/dist).
WEB_SOURCES := $(shell find web/src web/scripts web/index.html web/vite.config.ts web/tsconfig.json web/package.json -type f 2>/dev/null)
WEB_STAMP := web/node_modules/.installed

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

$(WEB_STAMP): web/package-lock.json
	cd web && npm ci --no-audit --no-fund
	touch $(WEB_STAMP)

# clients/typescript (the generated TypeScript client's and the MCP OAuth host's tests): npm ci when
# its lock changes (tests/typescript_client.py does it under a file lock when run without make).
TS_STAMP := clients/typescript/node_modules/.installed

$(TS_STAMP): clients/typescript/package-lock.json
	cd clients/typescript && npm ci --no-audit --no-fund
	touch $(TS_STAMP)

web/dist/index.html: $(WEB_STAMP) $(WEB_SOURCES)
	cd web && npm run build
	touch web/dist/index.html

web: web/dist/index.html

web-test: $(WEB_STAMP)
	cd web && npm test

run: $(STAMP) web
	$(BIN)/lorebase up --example supply

# What make test needs, side by side (make -j): pip's install of the venv takes one core for a minute
# or so, while npm installs, builds and unit-tests the web app and installs the TypeScript client.
test-deps:
	$(MAKE) --no-print-directory -j 3 $(STAMP) web web-test $(TS_STAMP)

test: test-deps
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)
	command -v promtool >/dev/null || (apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus)
	$(BYTECODE)
	$(TEST_ENV) $(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadgroup $(TEST_TMP_OPTIONS)

# The cluster harness (lorebase.cluster): three NATS nodes, a PostgreSQL primary with a synchronous
# and an asynchronous standby, two of each service and HAProxy, from deploy/helm/examples/cluster.yaml.
HAPROXY := command -v haproxy >/dev/null || test -x /usr/sbin/haproxy || (apt-get update -qq && apt-get install -y -qq haproxy)

cluster: $(STAMP)
	$(HAPROXY)
	$(BIN)/python -m lorebase.cluster

# Faults under load, restores and the rolling upgrade on the cluster harness (docs/operations.md);
# tests/cluster is collected only when named, so `make test` leaves it out.
test-cluster: $(STAMP)
	$(HAPROXY)
	$(BYTECODE)
	$(BIN)/python -m pytest tests/cluster -q -p no:cacheprovider -n 0 -rA

lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy src services tests
	$(BIN)/lint-imports

protos: $(STAMP)
	$(BIN)/python scripts/gen_protos.py

docs: $(STAMP)
	$(BIN)/python scripts/gen_rest_docs.py
	$(BIN)/python scripts/gen_web_types.py

bench: $(STAMP)
	command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk)
	$(BIN)/python -m bench.run

# The generated Domain at 10,000,000 Records against 1,000,000 (bench/big_scale.py; ~20 GB of disk,
# the better part of an hour here): not part of `make bench`.
bench-scale: $(STAMP)
	$(BIN)/python -m bench.big_scale

clean:
	rm -rf $(VENV) .lorebase web/node_modules web/dist clients/typescript/node_modules clients/typescript/dist
