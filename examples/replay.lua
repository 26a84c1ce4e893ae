-- replay.lua - replay a pcap file: with its original timing, scaled, as fast
-- as possible or at a fixed rate; once, N times or forever.
--
--   surge run examples/replay.lua                                  # a generated demo capture
--   surge run examples/replay.lua --file in.pcap --timing original
--   surge run examples/replay.lua --file in.pcapng --timing scale=10 --loop 5
--   surge run examples/replay.lua --file in.pcap --rate 1mpps --loop 0    # until Ctrl-C
--   surge run --vdev net_pcap0,tx_pcap=out.pcap examples/replay.lua --port net_pcap0 --file in.pcap
--
-- master() reads the whole file into memory (a damaged file stops here, with
-- the record that is wrong) and hands the reader to a task, which fills
-- bursts from it and sends them. Original and scaled timing pace the queue
-- with each packet's gap from the file; --rate paces it evenly instead.
-- Without --file, master first writes a small capture of its own: frames of
-- several sizes and protocols, a few milliseconds apart.
local surge = require("surge")
local pcap = require("surge.pcap")
local ffi = require("ffi")

function configure(p)
  p:description("Replays a pcap/pcapng file (default: a generated demo capture) on a port.")
  p:option("--port", "port number or device name", "0")
  p:option("--file", "pcap or pcapng file (Ethernet) to replay; empty: write and replay a demo", "")
  p:option("--loop", "passes over the file, 0 = until the run ends", 1, "integer 0..4294967295")
  p:option("--timing", "fast | original | scale=X (the file's gaps divided by X)", "original")
  p:option("--rate", "a fixed rate instead of the file's timing, e.g. 10kpps or 100mbit", "")
  p:option("--burst", "packets per burst (1..256)", 32, "integer 1..256")
  p:option("--idle", "how the sender waits for a packet's time: sleep (surge's default) | pause | busy "
    .. "(spin: exact on a core of its own, worse on a shared one)", "sleep")
end

-- The demo capture: { frame bytes, milliseconds since the previous frame }.
local function demo_frames()
  local udp = surge.proto.udp
  local function hex(s) return (s:gsub("%s", ""):gsub("..", function(h) return string.char(tonumber(h, 16)) end)) end
  local arp = hex [[ffffffffffff 020000000001 0806 0001 0800 06 04 0001
                    020000000001 0a000001 000000000000 0a000002]]
  return {
    { arp, 0 },
    { udp{ src = "10.0.0.1", dst = "10.0.0.2", dport = 53, size = 60 }.bytes, 2 },
    { udp{ src = "10.0.0.1", dst = "10.0.0.2", dport = 5000, size = 200 }.bytes, 5 },
    { udp{ src = "10.0.0.3", dst = "10.0.0.2", dport = 5001, size = 1000 }.bytes, 1 },
    { udp{ src = "10.0.0.1", dst = "10.0.0.2", dport = 5000, size = 1514 }.bytes, 8 },
    { udp{ src = "10.0.0.4", dst = "10.0.0.9", dport = 123, size = 90 }.bytes, 3 },
    { arp, 4 },
    { udp{ src = "10.0.0.1", dst = "10.0.0.2", dport = 5000, size = 64 }.bytes, 6 },
  }
end

-- Writes the demo capture through a pcap writer: one packet per burst, its
-- time set in burst.tsc.
local function write_demo(path)
  local pool = surge.pool{ size = 63 }
  local b = pool:burst(1)
  local w = pcap.writer(path)
  local t, hz = surge.tsc(), surge.tsc_hz()
  for _, f in ipairs(demo_frames()) do
    local bytes, ms = f[1], f[2]
    t = t + math.floor(ms * hz / 1000)
    b:alloc(1)
    ffi.copy(b.data[0], bytes, #bytes)
    b.len[0] = #bytes
    b.tsc = t
    w:write(b)
    b:free()
  end
  return w:close()
end

function master(args)
  if not ({ sleep = 1, pause = 1, busy = 1 })[args.idle] then
    error(("--idle '%s': expected sleep, pause or busy"):format(args.idle), 0)
  end
  local timing = args.rate ~= "" and "fast" or args.timing
  local file, demo = args.file, nil
  if file == "" then
    demo = os.tmpname()
    file = demo
    print(("replay: no --file: wrote a demo capture of %d packets to %s"):format(write_demo(file), file))
  end
  local ok, r = pcall(pcap.reader, file, { loop = args.loop == 0 or args.loop, timing = timing })
  if demo then os.remove(demo) end          -- the reader has it in memory
  if not ok then error(r, 0) end
  local info = r:info()
  print(("replay: %s: %d packets, %d bytes over %.6f s; %s, %s"):format(file, info.records, info.bytes,
    info.duration, args.rate ~= "" and ("at " .. args.rate) or ("timing " .. timing),
    args.loop == 0 and "looping until the run ends" or (args.loop .. " pass(es)")))
  -- jumbo captures need a port MTU that lets their largest frame through
  local mtu = info.max_len > 1514 and info.max_len - 14 or nil
  local port = surge.port(tonumber(args.port) or args.port, { txq = 1, rxq = 1, mtu = mtu })
  surge.launch("replay", port:txq(0), r, args)
  if args.loop > 0 then                     -- progress with an ETA on stderr
    local q = port:txq(0)
    surge.progress.watch("replayed", info.records * args.loop, function() return q:stats().packets end)
  end
  local sent = surge.wait()[1]
  print(("replay: sent %d packets"):format(sent))
  r:close()
  return 0
end

function replay(q, r, args)
  surge.idle(args.idle)
  local max_len = r:info().max_len
  -- the default data room holds standard frames; jumbo captures need more
  -- (shared: ports like net_ring hand the mbufs to a receiver that frees them)
  local pool = surge.pool{ data_room = max_len > 1518 and max_len or nil, shared = true }
  local b = pool:burst(args.burst)
  if args.rate ~= "" then q:set_rate(args.rate) else r:pace(q) end
  local sent = 0
  while surge.running() do
    if r:fill(b) == 0 then break end
    sent = sent + q:send(b)
  end
  b:free()
  return sent
end
