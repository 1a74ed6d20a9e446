#!/bin/sh
# Puts embedding models into a models directory at image build time, so the indexer runs with no
# network (air-gapped sites):
#
#   sh deploy/docker/build-model.sh <models dir> <model> [<model>...]
#
#   memex-glove-100d   built from the npm-shipped GloVe vectors (no network beyond the npm store)
#   <Hugging Face id>  e.g. Xenova/all-MiniLM-L6-v2: downloaded now with transformers.js into
#                      <models dir>/.cache/<id>, where the indexer finds it with
#                      MEMEX_ALLOW_REMOTE_MODELS=false; HF_TOKEN is used for gated models
#
# Each model is loaded once offline afterwards, exactly as the indexer will load it.
# Runs in the `memex-build` stage (the workspace with dev dependencies).
set -eu
dir="${1:-}"
[ -n "$dir" ] && [ $# -ge 2 ] || { echo "usage: build-model.sh <models dir> <model> [<model>...]" >&2; exit 2; }
shift
mkdir -p "$dir"
for model in "$@"; do
  if [ "$model" = memex-glove-100d ]; then
    node --import tsx services/indexer/scripts/build-static-model.ts --out "$dir/memex-glove-100d"
  fi
  node --import tsx deploy/docker/fetch-model.ts "$dir" "$model"
done
