#!/usr/bin/env bash
# Lint and type-check ccdyn/ with the settings in pyproject.toml ([tool.ruff], [tool.mypy]):
#   ruff check   pyflakes, pycodestyle, import order, bugbear, pyupgrade (PATHs, default ccdyn)
#   mypy         the whole package (a module's types depend on what it imports)
#   --format     also `ruff format --check` on the PATHs
# Usage: tools/lint.sh [--format] [PATH ...]      (pip install -e ".[lint]" first)
# Every step runs; the exit status is 1 when any of them found something.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
format=0
if [[ "${1:-}" == "--format" ]]; then format=1; shift; fi
paths=("$@")
if [[ ${#paths[@]} -eq 0 ]]; then paths=(ccdyn); fi
status=0
echo "== ruff check ${paths[*]}"
ruff check "${paths[@]}" || status=1
if [[ $format -eq 1 ]]; then
  echo "== ruff format --check ${paths[*]}"
  ruff format --check "${paths[@]}" || status=1
fi
echo "== mypy (ccdyn)"
mypy || status=1
exit $status
