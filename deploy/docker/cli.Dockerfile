# syntax=docker/dockerfile:1
#
# memex-cli: the `memex` command alone (organizations, projects, keys, tokens, reindex, api), for
# one-shot containers and Kubernetes Jobs:
#   docker run --rm -e NATS_URL=nats://nats:4222 memex-cli project create --name demo --json
# Every service image carries the same command as `memex`.

FROM memex-build AS prune
RUN --mount=type=cache,id=memex-pnpm-store,target=/pnpm/store \
    sh deploy/docker/prune.sh /out cli

FROM memex-runtime
COPY --from=prune /out /app
USER 10001:10001
ENTRYPOINT ["memex"]
CMD ["help"]
