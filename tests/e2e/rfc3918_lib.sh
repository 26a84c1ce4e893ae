# rfc3918_lib.sh - reading rfc3918's results file (sourced after lib.sh):
#   row JSON TEST FIELD   the field of the scenario's first row of TEST
#   valid JSON            check: the file matches docs/results.schema.json
row() {
  python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))["scenarios"]["rfc3918"]["rows"]
r = [r for r in rows if r["test"] == sys.argv[2]][0]
v = r.get(sys.argv[3])
print("" if v is None else v)' "$@" 2>/dev/null
}
valid() {  # valid JSON: the results file matches the schema
  python3 -c 'import jsonschema' 2>/dev/null || return 0
  check "$1: the results file matches docs/results.schema.json" "" "$(python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' "$1" "$SURGE_SRC/docs/results.schema.json" 2>&1 | tail -1)"
}
