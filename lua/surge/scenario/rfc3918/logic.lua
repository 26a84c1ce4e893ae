-- scenario/rfc3918/logic.lua - the logic of the rfc3918 scenario, free of ports and packets
-- (unit-tested in tests/lua/test_rfc3918.lua, as search.lua and mlr.lua):
-- group lists, the membership reports that join or leave them, what a
-- trial's per-port, per-group counts say (forwarded correctly or not; join
-- and leave delays) and the group capacity search.
local igmp = require("surge.proto.igmp")
local ip4 = require("surge.proto.ip4")
local ip6 = require("surge.proto.ip6")
local numbers = require("surge.scenario.kit.numbers")

local M = { MAX_GROUPS = 4096 }

-- A refusal naming the option: the scenario's own (scenario.refuse) when
-- given, else a plain error (the unit tests).
local function refuser(refuse)
  return refuse or function(option, fmt, ...) error((option and option .. ": " or "") .. fmt:format(...), 0) end
end

-- The n-th address after IPv6 bytes b (n < 2^32: the low 32 bits, with carry
-- into the next byte when they wrap is refused by the caller's range check).
local function add6(b, n)
  local x = { b:byte(1, 16) }
  local carry = n
  for i = 16, 1, -1 do
    if carry == 0 then break end
    local v = x[i] + carry
    x[i] = v % 256
    carry = math.floor(v / 256)
  end
  if carry > 0 then return nil end
  return string.char(unpack(x))
end

-- --groups: "239.1.1.1/16,239.9.0.1" (ADDR/N: N consecutive groups from
-- ADDR; ADDR alone: one), IPv4 or IPv6, all of one family, every address a
-- multicast group, none twice, at most MAX_GROUPS. Returns { v6, list = {
-- { text, addr (IPv4: a number; IPv6: the text) } } }, or refuses naming `option`.
function M.groups(text, option, refuse)
  refuse = refuser(refuse)
  option = option or "--groups"
  if type(text) ~= "string" or not text:find("[^,%s]") then
    refuse(option, "no group given (e.g. 239.1.1.1/16 or ff3e::1/16)")
  end
  local list, seen, v6 = {}, {}, nil
  for item in (text .. ","):gmatch("([^,]*),") do
    item = item:match("^%s*(.-)%s*$")
    if item == "" then refuse(option, "empty item in '%s'", text) end
    local addr, n = item:match("^([^/]+)/(%d+)$")
    if not addr then addr, n = item, "1" end
    n = numbers.finite(n)
    local six = addr:find(":", 1, true) ~= nil
    if v6 == nil then v6 = six end
    if six ~= v6 then refuse(option, "'%s' and '%s' are not of one family: give IPv4 or IPv6 groups", list[1].text, addr) end
    local base = six and ip6.parse(addr) or select(2, pcall(ip4.addr, addr, "group", 1))
    if six and not base or not six and type(base) ~= "number" then
      refuse(option, "'%s' is not an %s address", addr, six and "IPv6" or "IPv4")
    end
    if not igmp.is_multicast(six and addr or base) then
      refuse(option, "%s is not a multicast address (%s)", addr, six and "ff00::/8" or "224.0.0.0/4")
    end
    if n < 1 or #list + n > M.MAX_GROUPS then
      refuse(option, "'%s': %d group(s) in all; give 1..%d", item, #list + n, M.MAX_GROUPS)
    end
    for k = 0, n - 1 do
      local a = six and add6(base, k) or base + k
      if not a or not (six and a:byte(1) == 0xff or not six and igmp.is_multicast(a)) then
        refuse(option, "'%s' runs past the multicast range (%s)", item, six and "ff00::/8" or "224.0.0.0/4")
      end
      local t = six and ip6.addr_text(a) or ip4.addr_text(a)
      if six then a = t end                  -- the builders take IPv6 groups as text
      if seen[t] then refuse(option, "group %s given twice in '%s'", t, text) end
      seen[t] = true
      list[#list + 1] = { text = t, addr = a }
    end
  end
  return { v6 = v6, list = list }
end

-- The reports a member sends to join (or leave) groups[from..to]: IGMPv2
-- one per group (a leave to 224.0.0.2), IGMPv3 and MLDv2 as many groups a
-- report as fit (records TO_EX {} to join, TO_IN {} to leave: RFC 3376
-- 6.1, RFC 3810 6.1). m: { mac, ip4, ip6 (link-local) }. Returns a list of
-- { bytes, first, last } (the groups each report carries).
function M.reports(version, m, groups, from, to, join)
  local out = {}
  if version == "v2" then
    for g = from, to do
      out[#out + 1] = { bytes = igmp.v2{ src_mac = m.mac, src = m.ip4, group = groups[g].addr, leave = not join }.bytes,
                        first = g, last = g }
    end
    return out
  end
  local per = igmp.MAX_RECORDS[version]
  local g = from
  while g <= to do
    local recs = {}
    local last = math.min(to, g + per - 1)
    for k = g, last do recs[#recs + 1] = { type = join and igmp.TO_EX or igmp.TO_IN, group = groups[k].addr } end
    local f = version == "mld2" and igmp.mld2{ src_mac = m.mac, src = m.ip6, records = recs }
      or igmp.v3{ src_mac = m.mac, src = m.ip4, records = recs }
    out[#out + 1] = { bytes = f.bytes, first = g, last = last }
    g = last + 1
  end
  return out
end

-- What one trial says about groups [1, n]: r = { sent = { [g] = frames },
-- ports = { [p] = { received = { [g] } } } } (p: index in the rx list),
-- members / observers: lists of port indices. A group is forwarded
-- correctly when every member received each frame sent to it (exactly:
-- copies count as wrong too) and no observer received any. Returns {
-- correct (groups), wrong = { g... } (the first few), lost (member frames
-- missing), leaked (observer frames), extra (member frames above sent) }.
function M.verdict(r, n, members, observers)
  local v = { correct = 0, wrong = {}, lost = 0, leaked = 0, extra = 0 }
  for g = 1, n do
    local sent, ok = r.sent[g] or 0, true
    for _, p in ipairs(members) do
      local got = r.ports[p].received[g] or 0
      if got < sent then v.lost, ok = v.lost + sent - got, false end
      if got > sent then v.extra, ok = v.extra + got - sent, false end
    end
    for _, p in ipairs(observers) do
      local got = r.ports[p].received[g] or 0
      if got > 0 then v.leaked, ok = v.leaked + got, false end
    end
    if sent == 0 then ok = false end
    if ok then v.correct = v.correct + 1 elseif #v.wrong < 8 then v.wrong[#v.wrong + 1] = g end
  end
  return v
end

-- Delays (ns) from the time each group's report left (at_ns[g]) to the
-- group's first (join) or last (leave) frame at a port (seen_ns[g]; nil:
-- none came, counted as missing). A frame of the group that arrived before
-- a join's report is no delay but a DUT that forwarded without it
-- (flooding): counted apart; a leave whose group's last frame came before
-- it has a delay of 0.
-- Returns { n (groups measured), min_us, mean_us, max_us, missing (no frame
-- at all), early (forwarded before the join), per = { [g] = us } }.
function M.delays(at_ns, seen_ns, from, to, leave)
  local d = { n = 0, missing = 0, early = 0, per = {} }
  local sum
  for g = from, to do
    local at, seen = at_ns[g], seen_ns[g]
    if at == nil then
      d.missing = d.missing + 1
    elseif seen == nil then
      d.missing = d.missing + 1       -- the group never came: no delay to measure, join or leave
    elseif seen < at and not leave then
      d.early = d.early + 1
    else
      d.per[g] = math.max(0, seen - at) / 1e3
    end
    local us = d.per[g]
    if us then
      d.n = d.n + 1
      sum = (sum or 0) + us
      d.min_us = math.min(d.min_us or math.huge, us)
      d.max_us = math.max(d.max_us or -math.huge, us)
    end
  end
  if d.n > 0 then d.mean_us = sum / d.n end
  return d
end

-- Group capacity (RFC 3918 6.1): joins for more and more groups, each step
-- keeping the groups before it joined, until a step's groups are not all
-- forwarded correctly. Ascending only: a DUT whose table overflows may stay
-- broken after it (the Linux bridge turns snooping off), so no step after a
-- failure would measure anything. o: start, step, max, trial(n) -> correct
-- (how many of the n groups were forwarded correctly), detail. Returns {
-- capacity (the largest n whose groups all passed; 0: not even the first),
-- limit_reached (every step passed, up to max: capacity is a lower bound),
-- steps = { { groups, correct, pass, detail } } }.
function M.capacity(o)
  local start, step, max = o.start or 1, o.step or 1, o.max
  assert(type(max) == "number" and max >= 1 and start >= 1 and step >= 1, "capacity: start, step, max >= 1")
  local res = { capacity = 0, limit_reached = false, steps = {} }
  local n = math.min(start, max)
  while true do
    local correct, detail = o.trial(n)
    local pass = correct == n
    res.steps[#res.steps + 1] = { groups = n, correct = correct, pass = pass, detail = detail }
    if not pass then return res end
    res.capacity = n
    if n >= max then res.limit_reached = true return res end
    n = math.min(max, n + step)
  end
end

return M
