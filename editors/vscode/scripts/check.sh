#!/usr/bin/env bash
# The VS Code extension's whole check, run by `./dev test`: install (npm ci), type-check,
# lint, unit + integration tests (against the real `tether serve`), package the .vsix and
# look inside it. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
repo_root="$(cd ../.. && pwd)"

if ! command -v npm >/dev/null 2>&1; then
  echo "check.sh: npm (Node.js 20 or newer) is needed to check the VS Code extension" >&2
  exit 1
fi
# The integration test starts this server; ./dev test has just installed it.
export TETHER_SERVER="${TETHER_SERVER:-$repo_root/.venv/bin/tether}"

echo "-- npm ci"
# --ignore-scripts: no install script is needed to build, test or package (esbuild runs from
# its platform package; keytar's native build and vsce-sign's setup only matter for publishing).
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
echo "-- tsc (strict)"
npm run --silent build
echo "-- eslint"
npm run --silent lint
echo "-- mocha: unit and integration tests"
npm test --silent
echo "-- vsce package"
rm -f tether-*.vsix
npm run --silent package >/dev/null

shopt -s nullglob
vsix=(tether-*.vsix)
if [ "${#vsix[@]}" -ne 1 ]; then
  echo "check.sh: expected one tether-*.vsix, found ${#vsix[@]}" >&2
  exit 1
fi
listing="$(unzip -Z1 "${vsix[0]}")"
for entry in extension/package.json extension/dist/extension.js extension/readme.md; do
  if ! grep -qx "$entry" <<<"$listing"; then
    echo "check.sh: ${vsix[0]} lacks $entry; it holds:" >&2
    echo "$listing" >&2
    exit 1
  fi
done
if grep -q '^extension/node_modules/\|^extension/src/\|^extension/out/' <<<"$listing"; then
  echo "check.sh: ${vsix[0]} holds sources or node_modules; see .vscodeignore" >&2
  exit 1
fi
# The bundle must load on its own (all dependencies inside) and export activate/deactivate.
node -e '
  require("./out/test/setup.js");
  const bundle = require("./dist/extension.js");
  if (typeof bundle.activate !== "function" || typeof bundle.deactivate !== "function") {
    console.error("check.sh: dist/extension.js does not export activate and deactivate");
    process.exit(1);
  }
'
echo "-- ${vsix[0]}: $(wc -c <"${vsix[0]}") bytes, $(wc -l <<<"$listing") entries"
