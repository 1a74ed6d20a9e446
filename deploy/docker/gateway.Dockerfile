# syntax=docker/dockerfile:1
#
# memex-gateway: the HTTPS API (Fastify). Build with deploy/docker/docker-bake.hcl, which supplies
# the `memex-build` and `memex-runtime` named contexts from base.Dockerfile (see README.md).

FROM memex-build AS prune
RUN sh deploy/docker/prune.sh gateway /out

FROM memex-runtime
COPY --from=prune /out /app
USER 10001:10001
EXPOSE 8443
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["memex-health", "gateway", "ready"]
CMD ["node", "--import", "tsx", "services/gateway/src/main.ts"]
