#!/usr/bin/env bash
# The websec GitHub Action's one step (action.yml): scan WEBSEC_URL, write the report, gate on the grade.
#
# Inputs arrive as environment variables, never spliced into this script's text, so no URL or header
# can inject a command. Extra request headers (WEBSEC_HEADERS, one "Name: value" per line) go to the
# scanned site only, are never printed, and are passed on the command line of a process whose
# arguments only this job's runner can read.
set -euo pipefail

: "${WEBSEC_URL:?the url input is required}"
format="${WEBSEC_FORMAT:-sarif}"
output="${WEBSEC_OUTPUT:-websec.${format}}"
root="${WEBSEC_ACTION_PATH:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
python="${WEBSEC_PYTHON:-python3}"

args=(scan "$WEBSEC_URL" --format "$format" --output "$output")
if [[ -n "${WEBSEC_FAIL_UNDER:-}" ]]; then
  args+=(--fail-under "$WEBSEC_FAIL_UNDER")
fi
while IFS= read -r line; do
  line="${line%$'\r'}"
  [[ -n "${line//[[:space:]]/}" ]] && args+=(--header "$line")
done <<< "${WEBSEC_HEADERS:-}"

status=0
summary="$(PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" "$python" -m websec_app "${args[@]}")" || status=$?
echo "$summary"

grade=""
if [[ "$summary" =~ ^Grade\ ([A-F][+]?)\  ]]; then
  grade="${BASH_REMATCH[1]}"
fi
# The report output names a file this scan wrote (0, or 4 under the gate), never one left from before or
# none at all (2, 3: no report; 1: it could not be written): empty otherwise.
report=""
if [[ ( "$status" == 0 || "$status" == 4 ) && -f "$output" ]]; then
  report="$output"
fi
if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
  {
    echo "grade=$grade"
    echo "report=$report"
    echo "exit-code=$status"
  } >> "$GITHUB_OUTPUT"
fi
if [[ -n "${GITHUB_STEP_SUMMARY:-}" && -n "$grade" ]]; then
  echo "websec: grade **$grade** for \`$WEBSEC_URL\` (report: \`$output\`)" >> "$GITHUB_STEP_SUMMARY"
fi
exit "$status"
