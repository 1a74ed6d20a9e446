# syntax=docker/dockerfile:1
#
# memex-<SERVICE>: one Memex service (deploy/services.json), compiled JavaScript on Node, as uid
# 10001. Built by `pnpm images` (or docker-bake.hcl) from the `memex-build` and `memex-runtime`
# stages of base.Dockerfile:
#   podman build -f deploy/docker/service.Dockerfile --build-arg SERVICE=memo -t memex.local/memex-memo:dev .
# The indexer has its own Dockerfile (it bakes in the embedding model).

FROM memex-build AS prune
ARG SERVICE
RUN --mount=type=cache,id=memex-pnpm-store,target=/pnpm/store \
    test -n "$SERVICE" && sh deploy/docker/prune.sh /out "$SERVICE" cli

FROM memex-runtime
ARG SERVICE
COPY --from=prune /out /app
ENV MEMEX_SERVICE=${SERVICE}
USER 10001:10001
# No EXPOSE: only the gateway listens (8443, and 9090 for health with MEMEX_HEALTH_PORT); podman's
# Docker API reports an exposed but unpublished port as an unbound binding, which testcontainers
# waits on forever.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD memex-health "$MEMEX_SERVICE" ready
CMD ["sh", "-c", "exec node --enable-source-maps /app/dist/$MEMEX_SERVICE.mjs"]
