-- forward.lua - latency probes through a forwarder that drops, swaps or
-- duplicates packets on purpose, so the receiver's lost / reordered /
-- duplicated counts can be checked against what the forwarder did.
--
--   surge run --vdev net_ring0 --vdev net_ring1 --lcores '(0-3)@(0-1)' forward.lua --mode dropswap
--
-- tx (task): sends --count packets on port 0, every one a probe (every = 1).
-- forward (task): receives them from port 0 and sends copies on port 1 from
--   its own shared pool (master frees them). --mode dropswap: drops sequence
--   numbers s with s % 100 == 99 and swaps each pair 2k, 2k+1 whose members
--   both survive (2k is held, 2k+1 goes first); a held 2k whose partner was
--   dropped goes alone. --mode dup: forwards in order and sends every s with
--   s % 50 == 49 twice.
-- master: receives on port 1, scans with a latency receiver, prints the
--   receiver's summary beside the forwarder's own counts.
local ffi = require("ffi")
local surge = require("surge")

function configure(p)
  p:description("Latency probes through a dropping/swapping/duplicating forwarder.")
  p:option("--mode", "dropswap or dup", "dropswap")
  p:option("--count", "packets (all probes) to send", 10010, "integer")
  p:option("--rate", "TX rate", "200kpps")
  p:option("--size", "frame size", 64, "integer")
  p:option("--timeout", "seconds before master gives up", 20, "number")
end

local PROBE_AT = 42 + 2      -- in the UDP payload
local SLOT = 2048

function master(args)
  if args.mode ~= "dropswap" and args.mode ~= "dup" then error("--mode: dropswap or dup", 0) end
  local p0 = surge.port(0, { rxq = 1, txq = 1 })
  local p1 = surge.port(1, { rxq = 1, txq = 1 })
  p0:txq(0):set_rate(args.rate)
  local fwd = surge.launch("forward", p0:rxq(0), p1:txq(0), args)
  local tx = surge.launch("tx", p0:txq(0), args)
  local lat = surge.latency.receiver{ offset = PROBE_AT }
  local burst = surge.pool{ size = 63 }:burst(64)
  local rxq = p1:rxq(0)
  surge.idle{ mode = "pause" }                 -- master receives: keep it awake
  local got, found = 0, 0
  local deadline = surge.tsc() + args.timeout * surge.tsc_hz()
  while surge.poll() > 0 do
    local n = rxq:recv(burst)
    if n > 0 then got = got + n; found = found + lat:scan(burst) end
    if surge.tsc() > deadline then print("forward: timeout, stopping"); surge.stop() end
  end
  for _ = 1, 1000 do                           -- what is still in the ring
    local n = rxq:recv(burst)
    if n == 0 then break end
    got = got + n
    found = found + lat:scan(burst)
  end
  burst:free()
  local sent = surge.wait(tx)
  local f = surge.wait(fwd)
  local s = lat:summary()
  print(("forward: mode %s tx sent %d, forwarder received %d sent %d (dropped %d, swapped pairs %d, "
    .. "duplicates %d, highest seq out %d), master received %d, probes found %d"):format(args.mode,
    sent, f.received, f.sent, f.dropped, f.swaps, f.dups, f.top, got, found))
  print(("forward: expect lost %d reordered %d dup %d probes %d"):format(f.lost_expected, f.swaps,
    f.dups, f.received - f.dropped))
  print("forward: " .. surge.latency.format(s))
  local ok = s.lost == f.lost_expected and s.reordered == f.swaps and s.duplicated == f.dups
    and s.probes == f.received - f.dropped
  print("forward: " .. (ok and "counts match" or "counts DIFFER"))
  return ok and 0 or 1
end

function tx(q, args)
  local pool = surge.pool{ template = surge.proto.udp{ size = args.size }, shared = true }
  local burst = pool:burst(32)
  local probes = surge.latency.marker{ offset = PROBE_AT, every = 1 }
  local left, sent = args.count, 0
  while surge.running() and left > 0 do
    local n = burst:alloc(math.min(left, 32))
    probes:mark(burst)
    sent = sent + q:send(burst)
    left = left - n
  end
  return sent
end

function forward(rxq, txq, args)
  local pool = surge.pool{ size = 4095, shared = true }   -- master frees what we send
  local inb = surge.pool{ size = 63 }:burst(32)
  local out = pool:burst(64)
  -- outputs are staged as copies first: a held packet may be sent from a
  -- burst that recv has already reused
  local stage = ffi.new("uint8_t[?]", 80 * SLOT)
  local stage_len = ffi.new("uint16_t[80]")
  local held = ffi.new("uint8_t[?]", SLOT)
  local held_len, held_seq = 0, -1
  local k = 0
  local st = { received = 0, sent = 0, dropped = 0, swaps = 0, dups = 0, top = -1, lost_expected = 0 }
  local dropped_seqs = {}

  local function emit(ptr, len, seq)
    ffi.copy(stage + k * SLOT, ptr, len)
    stage_len[k] = len
    k = k + 1
    if seq > st.top then st.top = seq end
  end
  local function flush()
    local i = 0
    while i < k and surge.running() do
      local n = out:alloc(math.min(k - i, out.cap))
      for j = 0, n - 1 do
        ffi.copy(out.data[j], stage + (i + j) * SLOT, stage_len[i + j])
        out.len[j] = stage_len[i + j]
      end
      st.sent = st.sent + txq:send(out)
      i = i + n
    end
    k = 0
  end
  local function seq_of(p) return ffi.cast("uint32_t *", p + PROBE_AT + 4)[0] end

  while surge.running() and st.received < args.count do
    local n = rxq:recv(inb)
    for i = 0, n - 1 do
      local p, len = inb.data[i], inb.len[i]
      local seq = seq_of(p)
      st.received = st.received + 1
      if args.mode == "dup" then
        emit(p, len, seq)
        if seq % 50 == 49 then emit(p, len, seq); st.dups = st.dups + 1 end
      elseif seq % 100 == 99 then
        st.dropped = st.dropped + 1
        dropped_seqs[#dropped_seqs + 1] = seq
        if held_seq >= 0 then emit(held, held_len, held_seq); held_seq = -1 end
      elseif seq % 2 == 0 then
        if held_seq >= 0 then emit(held, held_len, held_seq) end   -- partner never came
        ffi.copy(held, p, len)
        held_len, held_seq = len, seq
      elseif held_seq == seq - 1 then
        emit(p, len, seq)
        emit(held, held_len, held_seq)
        held_seq = -1
        st.swaps = st.swaps + 1
      else
        emit(p, len, seq)
      end
      if k > 60 then flush() end
    end
    flush()
  end
  if held_seq >= 0 then emit(held, held_len, held_seq); flush() end
  inb:free()
  -- the receiver can only know of a drop below the highest number it saw
  for _, s in ipairs(dropped_seqs) do
    if s < st.top then st.lost_expected = st.lost_expected + 1 end
  end
  return st
end
