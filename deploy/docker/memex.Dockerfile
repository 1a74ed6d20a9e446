# syntax=docker/dockerfile:1
#
# memex: the whole of Memex in one container: every service of deploy/services.json and an
# embedded nats-server (Debian's), supervised by memex-supervisor.mjs, one volume.
#
#   docker run -p 8443:8443 -v memex-data:/data -e MEMEX_BOOTSTRAP_PROJECT=demo memex.local/memex:dev
#   docker exec <container> cat /data/bootstrap.json        # {"project_id":…,"api_key":"mxp_…"}
#   -e MEMEX_SINGLE_PROCESS=1: every service in one Node process (about half the memory)
#
# For evaluation, tests (@memex/testcontainers) and small single-host sites; scale out with the
# per-service images. Built by `pnpm images` from the `memex-build` and `memex-runtime` stages.

FROM memex-build AS prune
RUN --mount=type=cache,id=memex-pnpm-store,target=/pnpm/store \
    sh deploy/docker/prune.sh /out $(node -p "require('./deploy/services.json').services.map((s) => s.name).join(' ')") cli all-in-one \
 && cp deploy/services.json /out/services.json

# The same stage as indexer.Dockerfile's, so the engine's cache builds the model once for both.
FROM memex-build AS model
ARG EMBEDDING_MODEL=memex-glove-100d
ARG EXTRA_EMBEDDING_MODELS=""
RUN --mount=type=secret,id=hf_token \
    if [ -f /run/secrets/hf_token ]; then export HF_TOKEN="$(cat /run/secrets/hf_token)"; fi; \
    sh deploy/docker/build-model.sh /models "$EMBEDDING_MODEL" $EXTRA_EMBEDDING_MODELS

FROM memex-runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends nats-server \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man
ARG EMBEDDING_MODEL=memex-glove-100d
COPY --from=prune /out /app
COPY --from=model /models /app/models
COPY --chmod=0755 deploy/docker/memex-supervisor.mjs /usr/local/lib/memex/memex-supervisor.mjs
ENV EMBEDDING_MODEL=${EMBEDDING_MODEL} \
    MEMEX_ALLOW_REMOTE_MODELS=false \
    MEMEX_PORT=8443
USER 10001:10001
VOLUME /data
EXPOSE 8443
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["memex-health", "gateway", "ready"]
CMD ["node", "/usr/local/lib/memex/memex-supervisor.mjs"]
