# syntax=docker/dockerfile:1
#
# memex-memo: the memo aggregate, its event store (MongoDB, or SQLite in /data) and read model.
# Build with deploy/docker/docker-bake.hcl (named contexts `memex-build`, `memex-runtime`).

FROM memex-build AS prune
RUN sh deploy/docker/prune.sh memo /out

FROM memex-runtime
COPY --from=prune /out /app
USER 10001:10001
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["memex-health", "memo", "ready"]
CMD ["node", "--import", "tsx", "services/memo/src/main.ts"]
