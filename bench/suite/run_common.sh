#!/bin/bash
# Run the test ids in $IDS at checkout DIR (its own .venv) with -n 2, as `make test` does; write
# $OUT/LABEL.json (per test setup/call/teardown), LABEL.time ("pytest-wall all-wall user sys", seconds, the
# whole process tree: reap.py is a child subreaper) and LABEL.log.
# usage: IDS=common.txt OUT=/tmp/suite-res bench/suite/run_common.sh LABEL DIR
set -u
HERE=$(dirname "$(readlink -f "$0")")
L=$1; D=$2; R=${OUT:-/tmp/suite-res}; mkdir -p "$R"
cd "$D"
SUITEPROBE_IDS=${IDS:?file of test ids} SUITEPROBE_OUT=$R/$L.json PYTHONPATH=$HERE \
 python3.11 "$HERE/reap.py" "$R/$L.time" \
 .venv/bin/python -m pytest -q -p no:cacheprovider -p suiteprobe -n 2 ${EXTRA:-} > "$R/$L.log" 2>&1
echo "$L $(cat "$R/$L.time") $(tail -1 "$R/$L.log")"
