-- scenario/rfc2544/charts.lua - the charts rfc2544 declares for surge plot
-- (results/plot.lua draws each spec from the table's rows): throughput (%
-- of line rate and Mpps, two axes) and latency per frame size. A spec's x
-- and each y are field names, the first a row has is used (older files).
return {
  tables = {
    { name = "throughput", title = "RFC 2544 throughput per frame size", x = { "frame_size", "size" },
      y = { { "throughput_pct", "rate_pct" }, { "throughput_mpps", "throughput_pps" } } },
    { name = "latency", title = "RFC 2544 latency per frame size", x = { "frame_size", "size" },
      y = { { "p50_ns", "latency_p50_ns" }, { "p99_ns", "latency_p99_ns" }, { "max_ns", "latency_max_ns" } } },
  },
}
