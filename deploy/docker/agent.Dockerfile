# syntax=docker/dockerfile:1
#
# memex-agent: summaries, tags, chat and generate (Ollama when OLLAMA_HOST is set, otherwise the
# built-in extractive provider). Build with deploy/docker/docker-bake.hcl (named contexts
# `memex-build`, `memex-runtime`).

FROM memex-build AS prune
RUN sh deploy/docker/prune.sh agent /out

FROM memex-runtime
COPY --from=prune /out /app
USER 10001:10001
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["memex-health", "agent", "ready"]
CMD ["node", "--import", "tsx", "services/agent/src/main.ts"]
