# The workspace stage of base.Dockerfile for podman, whose builder cannot take a stage of another
# build: the compiled sources on top of the dependencies image `pnpm images` built from the
# manifests alone (localhost/memex-deps). Docker builds base.Dockerfile's own workspace stage.
ARG DEPS_IMAGE=localhost/memex-deps:latest
FROM ${DEPS_IMAGE}
COPY . .
# The indexer's scan addon (packages/vector-scan: dense and BM25) is compiled here, where its C source is;
# pnpm build copies it beside the bundles.
RUN pnpm --filter @memex/vector-scan run install && pnpm --filter @memex/console build && pnpm build
