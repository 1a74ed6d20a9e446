#!/bin/sh
# Makes the production tree of one Memex image from the full workspace install:
#
#   sh deploy/docker/prune.sh <gateway|memo|indexer|agent|cli> <out dir> [workspace dir]
#
# <out dir> gets the workspace manifests and sources (no tests) and a pnpm install of only what
# the root package (tsx, which runs the TypeScript) and the service need at run time, plus the
# `memex` CLI package so every image can administer the stack (`memex project create ...`).
# Everything comes from the pnpm store offline. The native better-sqlite3 addon is copied from the
# workspace, where it was compiled once for all images, and the bulkiest files no Linux server
# reads are dropped. Runs in the `memex-build` stage; also runnable on a developer machine after
# `pnpm install` to inspect or test a tree.
set -eu

service="${1:-}"
out="${2:-}"
src="${3:-$(pwd)}"
case "$service" in
  gateway | memo | indexer | agent) package="@memex/$service" ;;
  cli) package="@memex/cli" ;;
  *)
    echo "usage: prune.sh <gateway|memo|indexer|agent|cli> <out dir> [workspace dir]" >&2
    exit 2
    ;;
esac
[ -n "$out" ] || { echo "prune.sh: no output directory given" >&2; exit 2; }
store="${PNPM_STORE_DIR:-}"

mkdir -p "$out"
src="$(cd "$src" && pwd)"
out="$(cd "$out" && pwd)"

# Manifests and sources of every workspace package: pnpm checks the whole lockfile against them,
# and they weigh a few hundred KiB. Tests and test helpers stay behind.
(cd "$src" && tar -cf - --exclude=node_modules --exclude='*.test.ts' \
  package.json pnpm-lock.yaml pnpm-workspace.yaml packages services) | tar -xf - -C "$out"

cd "$out"
# --filter .            the root package: its production dependency is tsx
# --filter-prod X...    X and the workspace packages it depends on in production (dev edges ignored)
# --ignore-scripts      the root postinstall builds the model (the indexer image does that itself),
#                       and no production dependency needs a script except better-sqlite3 (below)
pnpm install --offline --frozen-lockfile --prod --ignore-scripts \
  ${store:+--store-dir "$store"} \
  --filter . --filter-prod "$package..." --filter-prod "@memex/cli..."

# better-sqlite3: the addon compiled in the workspace, nothing else of its build.
for dir in node_modules/.pnpm/better-sqlite3@*/node_modules/better-sqlite3; do
  [ -d "$dir" ] || continue
  built="$src/$dir/build/Release/better_sqlite3.node"
  [ -f "$built" ] || { echo "prune.sh: $built is missing: build better-sqlite3 in the workspace first" >&2; exit 1; }
  mkdir -p "$dir/build/Release"
  cp "$built" "$dir/build/Release/"
  rm -rf "$dir/deps" "$dir/src"
done

# onnxruntime-node ships CPU binaries for every OS and architecture: keep this machine's.
case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) arch="" ;;
esac
for bin in node_modules/.pnpm/onnxruntime-node@*/node_modules/onnxruntime-node/bin/napi-v*; do
  [ -d "$bin" ] && [ -n "$arch" ] && [ -d "$bin/linux/$arch" ] || continue
  for platform in "$bin"/*/*; do
    [ "$platform" = "$bin/linux/$arch" ] || rm -rf "$platform"
  done
done
# transformers.js carries its own copy of onnxruntime-web's code; the package's browser bundles
# (WebAssembly, WebGPU) are never loaded by Node.
for web in node_modules/.pnpm/onnxruntime-web@*/node_modules/onnxruntime-web/dist; do
  [ -d "$web" ] && rm -rf "$web"
done
# Source maps, type declarations and docs are not read at run time.
find node_modules/.pnpm -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.md' \) -delete

# What was installed, for the build log.
echo "prune.sh: $service -> $out ($(du -sh node_modules/.pnpm | cut -f1) of dependencies)"
