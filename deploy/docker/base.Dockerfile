# syntax=docker/dockerfile:1
#
# Stages shared by every Memex image. Nothing here is an image you run: docker-bake.hcl builds two
# targets of this file once and hands them to the per-service Dockerfiles as named contexts:
#
#   memex-runtime  = target `runtime`    the small base every final image starts FROM
#   memex-build    = target `workspace`  toolchain + pnpm store + full install + sources, where each
#                                        service's pruned production tree and the indexer's
#                                        embedding model are made
#
# Because all five images start from the same two stage results, their layers are built once and
# shared: the runtime layers are identical in every image (pulled once per node), and the pnpm
# store, the dependency install and the native better-sqlite3 build are done once per lockfile.
#
# Build context: the repository root (see .dockerignore).

ARG NODE_IMAGE=node:22-bookworm-slim

# ---------------------------------------------------------------------------------------------
# base: Node LTS slim and a non-root user; the root of both the runtime and the build stages.
FROM ${NODE_IMAGE} AS base
ENV NODE_ENV=production \
    MEMEX_DATA_DIR=/data \
    MEMEX_MODELS_DIR=/app/models \
    ONNXRUNTIME_NODE_INSTALL=skip
# uid/gid 10001: numeric, so Kubernetes' runAsNonRoot can check it; no login shell, no home.
RUN groupadd --system --gid 10001 memex \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin memex \
 && mkdir -p /app /data \
 && chown 10001:10001 /data
WORKDIR /app

# ---------------------------------------------------------------------------------------------
# runtime: + the `memex` CLI wrapper and the `memex-health` probe (a separate stage, so editing
# them does not invalidate the dependency layers below).
FROM base AS runtime
COPY --chmod=0755 deploy/docker/memex /usr/local/bin/memex
COPY --chmod=0755 deploy/docker/memex-health.mjs /usr/local/lib/memex/memex-health.mjs
RUN ln -s /usr/local/lib/memex/memex-health.mjs /usr/local/bin/memex-health

# ---------------------------------------------------------------------------------------------
# toolchain: what building needs and running does not (compiler for better-sqlite3, pnpm).
FROM base AS toolchain
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# The npm registry (or an air-gapped site's mirror of it) for pnpm itself and every package.
ARG NPM_REGISTRY=https://registry.npmjs.org/
ARG PNPM_VERSION=10.34.8
RUN npm install --global --registry="${NPM_REGISTRY}" "pnpm@${PNPM_VERSION}" && npm cache clean --force
# better-sqlite3 is compiled here against this image's Node headers (shipped in /usr/local/include),
# never downloaded as a prebuilt binary; onnxruntime-node's install script stays off (it would
# download CUDA files; its CPU binaries are in the package).
ENV PNPM_STORE_DIR=/pnpm/store \
    npm_config_build_from_source=true \
    npm_config_nodedir=/usr/local \
    CI=true
WORKDIR /src

# ---------------------------------------------------------------------------------------------
# deps: every package of the lockfile in the store (re-run only when the lockfile changes), then
# the whole workspace installed with dev dependencies (needed to build the embedding model) and
# better-sqlite3 compiled once (re-run only when a package.json changes).
FROM toolchain AS deps
ARG NPM_REGISTRY=https://registry.npmjs.org/
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch --store-dir "$PNPM_STORE_DIR" --registry="${NPM_REGISTRY}"
COPY --parents package.json packages/*/package.json services/*/package.json ./
# --ignore-scripts: the root postinstall needs the sources, which are not here yet (the model is
# built in the indexer's own stage); the one native build Memex needs is run explicitly.
RUN pnpm install --offline --frozen-lockfile --ignore-scripts --store-dir "$PNPM_STORE_DIR" \
 && pnpm --recursive rebuild better-sqlite3 \
 && ls node_modules/.pnpm/better-sqlite3@*/node_modules/better-sqlite3/build/Release/better_sqlite3.node

# ---------------------------------------------------------------------------------------------
# workspace: deps + the sources. The per-service Dockerfiles run deploy/docker/prune.sh here.
FROM deps AS workspace
COPY . .
