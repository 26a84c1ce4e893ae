-- scenario/load_latency/charts.lua - the chart load-latency declares for
-- surge plot (results/plot.lua draws the spec from the table's rows): the
-- latency percentiles against the offered load.
return {
  tables = {
    { name = "latency", title = "Latency against offered load", x = { "load_pct", "load_pps", "rate_pps", "load" },
      y = { { "p50_ns" }, { "p99_ns" }, { "p999_ns" } } },
  },
}
