# syntax=docker/dockerfile:1
# One image for every service: the command picks it.
#   docker build -t lorebase:0.9.0 .
#   docker run lorebase:0.9.0 keeper          # or feed, scribe, gateway, migrate
#   docker run -p 8080:8080 lorebase:0.9.0    # `lorebase up`: the whole stack, embedded servers
# The Helm chart (deploy/helm/lorebase) runs it read-only, as uid 10001, with /tmp as an emptyDir.

ARG PYTHON_VERSION=3.11
ARG NODE_VERSION=20

# -- web: the web app (web/) built into static files, served by the gateway under /app/ -------------
FROM node:${NODE_VERSION}-slim AS web
WORKDIR /web
COPY web/package.json web/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY web/ ./
RUN npm run build

# -- build: the project's wheel, installed with its dependencies into a virtual environment ----------
FROM python:${PYTHON_VERSION}-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
# src/lorebase/lorebase.example.yaml links to config/lorebase.example.yaml.
COPY config ./config
COPY src ./src
COPY services ./services
RUN pip wheel --no-deps --wheel-dir /wheels . \
 && python -m venv /opt/lorebase \
 && /opt/lorebase/bin/pip install /wheels/lorebase-*.whl \
 && /opt/lorebase/bin/lorebase --version

# -- runtime: the virtual environment on a slim Python, no compilers, no pip cache ----------------
FROM python:${PYTHON_VERSION}-slim AS runtime
LABEL org.opencontainers.image.title="lorebase" \
      org.opencontainers.image.description="Lorebase: shared, versioned knowledge for AI agents (gateway, keeper, feed, scribe)"
ENV PATH=/opt/lorebase/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    LOREBASE_HTTP_HOST=0.0.0.0 \
    LOREBASE_DATA_DIR=/var/lib/lorebase \
    LOREBASE_WEB__ROOT=/opt/lorebase-web
RUN groupadd --system --gid 10001 lorebase \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/lorebase --shell /usr/sbin/nologin lorebase \
 && install -d -o 10001 -g 10001 -m 0750 /var/lib/lorebase
COPY --from=build /opt/lorebase /opt/lorebase
COPY --from=web /web/dist /opt/lorebase-web
USER 10001:10001
WORKDIR /var/lib/lorebase
EXPOSE 8080 50051 50052 50053
ENTRYPOINT ["lorebase"]
CMD ["up"]
