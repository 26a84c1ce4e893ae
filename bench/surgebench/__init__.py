"""surgebench - the harness of surge's benches (standard library only).

scripts/bench, scripts/bench-conn and scripts/bench-rx-ab run it
(`python3 bench/surgebench PROGRAM ARGS...`); its drivers sit beside it in
bench/ (ceiling.c, the Lua loops, telemetry-rate.py, conn-telemetry.py).
  stats     median, ratios, spread, best second, cycles a packet: the one place
  cpu       the one CPU-time sampler (/proc/PID/task/TID/stat)
  huge      the hugepage pre-flight and the sweep of the peers' leftovers
  telemetry the client of DPDK's telemetry socket
  peers     one run of surge, surge-ceiling, testpmd (per-second lines or telemetry)
  common    the work folder, clean-up on every exit, tables
  rows/     the rows: tx, rx, ab, scaling, pktgen (scripts/bench), conn
            (scripts/bench-conn), rxab (scripts/bench-rx-ab)
  bench, conn, rxab  the three programs' options and order of runs
"""
