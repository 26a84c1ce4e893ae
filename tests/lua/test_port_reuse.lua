-- surge.port on a port already open (issue 23 item 6): no options, or only
-- options that agree with how the port runs, give its handle; any option
-- that differs is refused at the caller's line, naming each difference.
-- Run with --vdev net_ring0 (port 0) --vdev net_null0,no-rx=1 (port 1).
local surge = require("surge")
local testrun = require("surge.vm.testrun")
local errors, at = testrun.errors, testrun.at

local T = {}

local HINT = " (surge.port(0) with no options gives its handle; close it first to open it with others)"

-- (tests run in name order: each opens the ring as it wants it)
local function ring()
  local p = surge.port("net_ring0")
  if p:info().txq ~= 2 then p:close(); p = surge.port("net_ring0", { rxq = 1, txq = 2, clones = true }) end
  return p
end

function T.same_options_give_the_open_port()
  local p = ring()
  local mtu = p:info().mtu
  for _, opts in ipairs({ false, {}, { txq = 2 }, { rxq = 1, txq = 2, clones = true, promisc = true },
                          { rxd = 0, txd = 0, mtu = 0 }, { mtu = mtu }, { checksum_offload = true },
                          { link_timeout = 5 } }) do   -- (how long an open waits: not a setting)
    local q = surge.port(0, opts or nil)
    assert(getmetatable(q) == getmetatable(p) and q.id == 0, "same options: the port's handle")
  end
  assert(surge.port("net_ring0").id == 0, "by name too")
  -- the handle is the port itself: its queues send and count
  local b = surge.pool{ size = 63, template = surge.proto.udp{} }:burst(4)
  b:alloc()
  local sent = surge.port(0):txq(0):send(b)
  assert(sent == 4 and p:txq(0):stats().packets == 4, ("sent %d, counted %d"):format(sent, p:txq(0):stats().packets))
  assert(p:rxq(0):recv(b) == 4)
  b:free()
end

function T.different_options_say_which_differ()
  ring()
  errors(at("surge.port: port 0 is already open with other options: txq = 2 (asked 3)" .. HINT, 1),
    function() surge.port(0, { txq = 3 }) end)
  errors(at("surge.port: port 0 is already open with other options: rxq = 1 (asked 2), clones = true (asked false)"
    .. HINT, 1), function() surge.port(0, { rxq = 2, txq = 2, clones = false }) end)
  errors(at("surge.port: port 0 is already open with other options: mtu = 1500 (asked 9000)" .. HINT, 1),
    function() surge.port("net_ring0", { mtu = 9000 }) end)
  -- the options are checked first, as for an open
  errors(at("surge.port: txq: expected an integer in 0..1024, got -1"), function() surge.port(0, { txq = -1 }) end)
  errors(at("surge.port: unknown option 'queues' (checksum_offload, clones, link_timeout, mtu, promisc, rxd, rxq, txd, txq)", 1),
    function() surge.port(0, { queues = 2 }) end)
  -- closed, the port opens with the new options
  surge.port(0):close()
  local p = surge.port(0, { txq = 3, clones = false })
  assert(p:info().txq == 3 and p:info().clones == false)
end

return T
