-- igmp_sources.lua - for test_rfc3918_tshark.sh: the membership reports
-- with source lists that the rfc3918 scenario does not send (it joins any
-- source), through port 0: an IGMPv3 report of ALLOW/BLOCK records and an
-- MLDv2 report of INCLUDE/EXCLUDE records, each with sources.
local surge = require("surge")
local igmp = surge.proto.igmp

function master()
  local port = surge.port(0, { txq = 1, rxq = 1 })
  local mac = port:info().mac
  local frames = {
    igmp.v3{ src_mac = mac, src = "10.0.1.1", records = {
      { type = igmp.ALLOW, group = "232.1.1.1", sources = { "10.9.0.1", "10.9.0.2" } },
      { type = igmp.BLOCK, group = "232.1.1.2", sources = { "10.9.0.3" } } } },
    igmp.mld2{ src_mac = mac, src = igmp.link_local(mac), records = {
      { type = igmp.IS_IN, group = "ff3e::8000:1", sources = { "2001:db8::9", "2001:db8::a" } },
      { type = igmp.IS_EX, group = "ff3e::8000:2", sources = { "2001:db8::b" } } } } }
  surge.launch("tx", port:txq(0), frames)
  print("sent " .. surge.wait()[1])
end

function tx(q, frames)
  local sent = 0
  for _, f in ipairs(frames) do
    local b = surge.pool{ template = f.bytes, size = 63 }:burst(1)
    while surge.running() and b:alloc(1) ~= 1 do surge.sleep(0.001) end
    while surge.running() and q:send(b) ~= 1 do surge.sleep(0.001) end
    sent = sent + 1
  end
  return sent
end
