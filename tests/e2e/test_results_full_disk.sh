#!/bin/bash
# test_results_full_disk.sh - issue 23 item 12a: a results file written on a
# full disk. A small tmpfs made for the test is filled up, holding a good
# results file from an earlier run; surge's --output onto it (JSON and CSV)
# and surge.results.write must fail in one line naming the file and "No
# space left on device", exit 1, and leave the good file as it was and no
# temporary file behind. Before the fix the file was cut short with exit 0.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd python3
M=$TMP/full
mkdir -p "$M"
mount -t tmpfs -o size=256k tmpfs "$M" 2>/dev/null || skip "cannot mount a tmpfs"
on_exit "umount $M"

cat >"$TMP/s.lua" <<'EOF2'
local surge = require "surge"
function master()
  surge.counter("work"):add(1)
  if os.getenv("WRITE_TO") then surge.results.write(os.getenv("WRITE_TO")) end
end
EOF2
for f in good.json good.csv; do
  run_surge 30 run -q --no-huge --vdev net_null0,no-rx=1 --output "$M/$f" "$TMP/s.lua"
  check "$f: written while there is room" 0 "$RC"
done
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$M/good.json"
check "the good JSON file reads" 0 "$?"
GOOD_JSON=$(sha1sum <"$M/good.json") GOOD_CSV=$(sha1sum <"$M/good.csv")
# fill what is left (the last block may stay: a full page is what a write needs)
dd if=/dev/zero of="$M/fill" bs=4k 2>/dev/null
check_match "the tmpfs is full" "100%" "$(df "$M" | tail -1)"

for f in good.json good.csv; do
  run_surge 30 run -q --no-huge --vdev net_null0,no-rx=1 --output "$M/$f" "$TMP/s.lua"
  check "$f on a full disk: exit 1" 1 "$RC"
  check_match "$f: one line naming --output and the reason" \
    "^surge: --output $M/$f: No space left on device$" "$(printf '%s\n' "$ERR" | grep -v '^EAL' | head -1)"
done
check "the good JSON file is untouched" "$GOOD_JSON" "$(sha1sum <"$M/good.json")"
check "the good CSV file is untouched" "$GOOD_CSV" "$(sha1sum <"$M/good.csv")"

WRITE_TO=$M/good.json run_surge 30 run -q --no-huge --vdev net_null0,no-rx=1 "$TMP/s.lua"
check "surge.results.write on a full disk: exit 1" 1 "$RC"
check_match "it names the script's line and the reason" \
  "s\\.lua:4: surge\\.results\\.write: $M/good\\.json: No space left on device" "$ERR"
check "the good JSON file is still untouched" "$GOOD_JSON" "$(sha1sum <"$M/good.json")"
check "no temporary file is left" "" "$(find "$M" -maxdepth 1 -name '*.tmp-*' -printf '%f\n')"
finish
