-- scenario/rfc2889/charts.lua - the charts rfc2889 declares for surge plot
-- (results/plot.lua draws each spec from the table's rows, those of one
-- test: `where`): per frame size, what each switch test measured. A test
-- that did not run has no rows and so no chart.
return {
  tables = {
    { name = "forwarding", title = "RFC 2889 forwarding (5.1-5.4): throughput and forwarding rate per frame size",
      where = { test = "forwarding" }, x = "frame_size",
      y = { "offered_pps", "throughput_pps", "forwarding_rate_fps" } },
    { name = "caching", title = "RFC 2889 address caching capacity (5.7) per frame size",
      where = { test = "address_caching" }, x = "frame_size", y = { "capacity" }, ylabel = "addresses" },
    { name = "learning", title = "RFC 2889 address learning rate (5.8) per frame size",
      where = { test = "address_learning" }, x = "frame_size", y = { "learning_rate_fps" } },
    { name = "broadcast", title = "RFC 2889 broadcast (5.9): forwarding rate and latency per frame size",
      where = { test = "broadcast" }, x = "frame_size",
      y = { "offered_pps", "forwarding_rate_fps", "latency_avg_us", "latency_max_us" } },
    { name = "congestion", title = "RFC 2889 congestion control (5.10): loss per frame size",
      where = { test = "congestion_control" }, x = "frame_size", y = { "congested_loss_pct", "uncongested_loss_pct" } },
    { name = "pressure", title = "RFC 2889 forward pressure (5.11): forwarding rate per frame size",
      where = { test = "forward_pressure" }, x = "frame_size",
      y = { "overload_offered_pps", "max_forwarding_rate_fps", "forwarding_rate_fps" } },
  },
}
