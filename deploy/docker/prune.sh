#!/bin/sh
# Makes the production tree of a Memex image from the built workspace:
#
#   sh deploy/docker/prune.sh <out dir> <name>...      names: services of deploy/services.json, cli,
#                                                      or all-in-one (every service: name them too)
#
# <out dir> gets dist/<name>.mjs for each name (the compiled bundles of `pnpm build`) and a
# node_modules holding only the third-party packages those need at run time, installed offline
# from the pnpm store and hoisted to <out dir>/node_modules, where the bundles resolve them. No
# TypeScript and no sources go in. The native better-sqlite3 addon is copied from the workspace,
# where it was compiled once for all images (as is the scan addon's, which pnpm build puts in
# dist), and the bulkiest files no Linux server reads are dropped. Runs in the `memex-build`
# stage; also runnable on a developer machine after `pnpm install && pnpm build` to inspect or
# test a tree.
set -eu

out="${1:-}"
[ -n "$out" ] && [ $# -ge 2 ] || { echo "usage: prune.sh <out dir> <service|cli>..." >&2; exit 2; }
shift
src="$(pwd)"
store="${PNPM_STORE_DIR:-}"
filters=""
for name in "$@"; do
  [ -f "$src/dist/$name.mjs" ] || { echo "prune.sh: dist/$name.mjs is missing: run pnpm build first" >&2; exit 1; }
  case "$name" in
    cli) filters="$filters --filter-prod @memex/cli..." ;;
    all-in-one) ;;
    *) filters="$filters --filter-prod @memex/$name..." ;;
  esac
done

mkdir -p "$out/dist"
out="$(cd "$out" && pwd)"

# pnpm checks the whole lockfile against the workspace manifests: copy them (a few KiB).
(cd "$src" && find . -name package.json -not -path '*/node_modules/*' -not -path './dist/*' -print \
  | tar -cf - -T - pnpm-lock.yaml pnpm-workspace.yaml) | tar -xf - -C "$out"

cd "$out"
# --filter-prod X...    X and the workspace packages it depends on in production (dev edges ignored)
# --shamefully-hoist    every installed package in <out>/node_modules, where dist/*.mjs finds it
# --ignore-scripts      no production dependency needs a script except better-sqlite3 (below)
# shellcheck disable=SC2086
pnpm install --offline --frozen-lockfile --prod --ignore-scripts --shamefully-hoist \
  --config.confirmModulesPurge=false ${store:+--store-dir "$store"} $filters

# The bundles hold the workspace packages' code; their links into the (absent) sources go.
rm -rf node_modules/@memex packages services
find . -name node_modules -prune -o -name package.json -print | while read -r manifest; do
  [ "$manifest" = ./package.json ] || rm -f "$manifest"
done
rm -f pnpm-lock.yaml pnpm-workspace.yaml
printf '{ "type": "module", "private": true }\n' > package.json

for name in "$@"; do
  cp "$src/dist/$name.mjs" dist/
  [ -f "$src/dist/$name.mjs.map" ] && cp "$src/dist/$name.mjs.map" dist/
  # The gateway serves the console from the assets its bundle carries beside it.
  if [ "$name" = gateway ]; then cp -r "$src/dist/console" dist/; fi
  # The extractor forks its sandboxed child from the bundle beside it.
  if [ "$name" = extractor ]; then cp "$src/dist/extractor-child.mjs" dist/; fi
done
# The indexer's dense scan addon, compiled in the workspace, beside the bundles that load it.
case " $* " in
  *" indexer "* | *" all-in-one "*)
    [ -f "$src/dist/vector_scan.node" ] || { echo "prune.sh: dist/vector_scan.node is missing: run pnpm build first" >&2; exit 1; }
    cp "$src/dist/vector_scan.node" dist/ ;;
esac

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
# usearch ships prebuilt addons for every platform: keep Linux's.
for prebuilds in node_modules/.pnpm/usearch@*/node_modules/usearch/prebuilds; do
  [ -d "$prebuilds" ] || continue
  for platform in "$prebuilds"/*; do
    case "$(basename "$platform")" in linux-*) ;; *) rm -rf "$platform" ;; esac
  done
done
# Source maps, type declarations and docs of dependencies are not read at run time.
find node_modules/.pnpm -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.md' \) -delete

echo "prune.sh: $* -> $out ($(du -sh node_modules | cut -f1) of dependencies)"
