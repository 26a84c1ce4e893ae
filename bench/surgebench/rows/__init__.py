"""surgebench.rows - the rows of scripts/bench (tx: the four pairs, the
ceilings and references; rx: the receive rows and several queues; ab: one
surge build against another; scaling: --lcores N; pktgen: Pktgen-DPDK),
of scripts/bench-conn (conn) and of scripts/bench-rx-ab (rxab)."""
