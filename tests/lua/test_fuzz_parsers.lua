-- Bounded fuzzing of the Lua parsers that read text surge did not write
-- itself: the task-data decoder (surge.serial), script options
-- (surge.args) and the JSON `surge otg` takes from the network with what
-- reads it after the decoder (surge.results.json, the OTG model's checks,
-- the flow compiler and builder). Seeds come from
-- tests/fuzz/{serial,args,otg}; each target gets a
-- fixed number of mutations under a time cap. A parser may accept an input
-- or refuse it with its own error (string "corrupt task data: ..." /
-- args.OptionError); anything else (a Lua runtime error, a stack overflow, a
-- hang past the cap) fails the test and prints the input to add to
-- regressions below. SURGE_FUZZ_SEED=N replays a run; SURGE_FUZZ_SECONDS
-- raises the cap for a longer local campaign.
local serial = require("surge.base.serial")
local args = require("surge.args")
local json = require("surge.results.json")
local otg_schema = require("surge.otg.schema")
local otg_model = require("surge.otg.model")
local otg_flows = require("surge.otg.flows")
local otg_devices = require("surge.otg.devices")
local otg_stats = require("surge.otg.stats")
local otg_task = require("surge.otg.task")
local otg_ping = require("surge.otg.ping")
local view = require("surge.proto.view")
local ip4 = require("surge.proto.ip4")
local ip6 = require("surge.proto.ip6")
local ffi = require("ffi")
local surge = require("surge")

local T = {}

local root = package.surge_lua:match("^(.*)/lua$")
local SEED = tonumber(os.getenv("SURGE_FUZZ_SEED") or "") or 20261130
local SECONDS = tonumber(os.getenv("SURGE_FUZZ_SECONDS") or "") or 4
local ITERATIONS = 200000

local function corpus(dir)
  local out = {}
  local p = io.popen("ls " .. root .. "/tests/fuzz/" .. dir .. "/* 2>/dev/null")
  for f in p:lines() do
    local h = assert(io.open(f, "rb"))
    out[#out + 1] = h:read("*a")
    h:close()
  end
  p:close()
  assert(#out >= 3, "seed corpus tests/fuzz/" .. dir .. " is missing")
  return out
end

-- Pieces that steer mutations toward the grammar's corners.
local tokens = { "{", "}", "[", "]", "=", ",", "(", ")", '"', "\\", "\n", "0/0", "1/0", "-", "e308",
                 "nil", "true", "n=", "return", "port(", "txq(0,", "pcap_writer(1,", "\\999", "9e999",
                 ("{"):rep(150), ("["):rep(50), "--", "=", "0x", "inf", "nan", " ",
                 -- JSON and OTG's shapes
                 '"choice":', '"increment"', '"values":[', '"count":', '"start":"', "\\ud800", "\255\254", "1e999",
                 "-0", ":null", '":{}', "}]", '"packet":[{"choice":"', "65536", "-1", '"fixed":' }

local function mutate(s, rnd, seeds)
  for _ = 1, rnd(1, 4) do
    local op, i = rnd(1, 6), rnd(1, #s + 1)
    if op == 1 then                                   -- flip a byte
      s = s:sub(1, i - 1) .. string.char(rnd(0, 255)) .. s:sub(i + 1)
    elseif op == 2 then                               -- delete a run
      s = s:sub(1, i - 1) .. s:sub(i + rnd(1, 8))
    elseif op == 3 or op == 4 then                    -- insert a token
      s = s:sub(1, i - 1) .. tokens[rnd(1, #tokens)] .. s:sub(i)
    elseif op == 5 then                               -- splice another seed
      local o = seeds[rnd(1, #seeds)]
      local j = rnd(1, #o + 1)
      s = s:sub(1, i - 1) .. o:sub(j, j + rnd(0, 40)) .. s:sub(i)
    else                                              -- repeat a slice
      local j = math.min(#s, i + rnd(0, 10))
      s = s:sub(1, i - 1) .. s:sub(i, j):rep(rnd(2, 30)) .. s:sub(i)
    end
  end
  return s
end

-- Runs `check(input)` on mutations of the seeds; returns iterations done.
local function fuzz(seeds, check)
  math.randomseed(SEED)
  local rnd = math.random
  local deadline = os.clock() + SECONDS
  for _, s in ipairs(seeds) do check(s) end
  local n = 0
  while n < ITERATIONS and os.clock() < deadline do
    n = n + 1
    check(mutate(seeds[rnd(1, #seeds)], rnd, seeds))
  end
  return n
end

local env = { port = function(id) return { port = id } end, txq = function(p, q) return { txq = { p, q } } end,
              rxq = function(p, q) return { rxq = { p, q } } end, pool = function(id) return { pool = id } end,
              pcap_writer = function(id, path) return { w = id, path = path } end,
              pcap_reader = function(id, path) return { r = id, path = path } end }

local function check_decode(text)
  local t0 = os.clock()
  local ok, r = pcall(serial.decode, text, env)
  if ok then
    assert(type(r) == "table" and type(r.n) == "number", "decode returned no list for " .. ("%q"):format(text))
  elseif type(r) ~= "string" or not r:match("^corrupt task data: ") then
    error(("decode raised %s for input %q"):format(tostring(r), text), 0)
  end
  assert(os.clock() - t0 < 0.5, ("decode took %.2f s on %q"):format(os.clock() - t0, text))
end

local function split(line)
  local argv = {}
  for w in line:gmatch("%S+") do argv[#argv + 1] = w end
  return argv
end

local function parser()
  local p = args.new("fuzz.lua")
  p:option("--count", "c", 0, "integer >=0")
  p:option("--burst", "b", 32, "integer 1..256")
  p:option("--gap", "g", 1, "number")
  p:option("--name", "n", "x")
  p:flag("--verbose", "v")
  return p
end

local function check_args(line)
  local argv = split(line)
  for i, a in ipairs(argv) do if a == "--help" or a == "-h" then argv[i] = "--hel" end end
  local ok, r = pcall(parser().parse, parser(), argv)
  if ok then
    assert(type(r) == "table")
    assert(type(r.count) == "number" and r.count >= 0 and r.count < 2 ^ 53 and r.count == math.floor(r.count),
      "count out of its declared range for " .. line)
    assert(r.burst >= 1 and r.burst <= 256 and r.burst == math.floor(r.burst), "burst out of range for " .. line)
    assert(r.gap == r.gap and r.gap > -math.huge and r.gap < math.huge, "gap not finite for " .. line)
  elseif getmetatable(r) ~= args.OptionError or tostring(r):find("\n") then
    error(("parse raised %s for argv %q"):format(tostring(r), line), 0)
  end
end

-- The JSON decoder answers a value or nil and "json: ..." (never raises,
-- bounded time and depth); what it decodes goes through the model's check
-- (a value or errors naming paths, never a raise) and, when that passes,
-- the devices' checks (errors), the flow compiler (a { path, msg } refusal)
-- and builder (a message).
local function check_otg(text)
  local t0 = os.clock()
  local ok, v, why = pcall(json.decode, text, 64)
  if not ok then error(("json.decode raised %s for %q"):format(tostring(v), text), 0) end
  if v == nil then
    assert(type(why) == "string" and why:match("^json: "), "no reason for " .. ("%q"):format(text))
    return
  end
  for _, node in ipairs({ otg_model.CONFIG, otg_model.CONTROL_STATE, otg_model.METRICS_REQUEST,
                          otg_model.STATES_REQUEST, otg_model.CONTROL_ACTION }) do
    local ok2, cfg, errs = pcall(otg_schema.check, node, v, "")
    if not ok2 then error(("schema.check raised %s for %q"):format(tostring(cfg), text), 0) end
    assert(cfg ~= nil or (type(errs) == "table" and #errs > 0), "neither a value nor errors for " .. text)
    if cfg and node == otg_model.CONFIG then
      local names = {}
      for _, p in ipairs(cfg.ports or {}) do names[p.name] = 0 end
      -- the devices: checked by devices.lua (errors, never a raise), their flows' endpoints
      local okd, dev, derrs = pcall(otg_devices.compile, cfg, names)
      if not okd or type(derrs) ~= "table" then
        error(("devices.compile raised %s for %q"):format(tostring(dev), text), 0)
      end
      for i, f in ipairs(cfg.flows or {}) do
        local ok3, spec = pcall(otg_flows.compile, f, i - 1, names, "flows", dev)
        if not ok3 and (type(spec) ~= "table" or type(spec.path) ~= "string") then
          error(("flows.compile raised %s for %q"):format(tostring(spec), text), 0)
        end
        if ok3 then
          local ok4, e = pcall(otg_flows.build, spec)
          if not ok4 and not (type(e) == "table" and type(e.path) == "string") and
             (type(e) ~= "string" or e:match("attempt to") or e:match("%.lua:%d+: bad argument")) then
            error(("flows.build raised %s for %q"):format(tostring(e), text), 0)
          end
        end
      end
    end
  end
  assert(os.clock() - t0 < 0.5, ("otg took %.2f s on %q"):format(os.clock() - t0, text))
end

function T.otg_json_survives_mutations()
  local n = fuzz(corpus("otg"), check_otg)
  print(("  otg json/model/flows: %d mutated inputs, seed %d"):format(n, SEED))
  assert(n >= 300, "too few iterations: " .. n)
end

-- The frames an OTG port's task receives are the network's: its per-frame
-- count (otg/task.lua's counter) on mutated frames counts exactly the frames
-- whose first l bytes carry a flow's tag at one of the offsets, and reads
-- nothing past l (the buffer past each frame holds tags at every offset: a
-- read there would count one more). Probes of a timed flow, stamped or not,
-- go to its latency receiver.
function T.otg_received_frames_counted_within_their_length()
  local offs, nflows = { 42, 46, 62 }, 3
  -- flow 2 (headers of 62 bytes) tagged: its first 4 bits and the last 3 of its headers, 7 bits, its
  -- received row from slot 128 (its sent row first)
  local tagged = { { index = 2, header_bytes = 62, tag_bits = 7, tag_base = 0,
                     tags = { { name = "a", offset = 0, length = 4 }, { name = "b", offset = 62 * 8 - 3, length = 3 } } } }
  local st = otg_stats.new(nflows, 1, 256)
  local receiver = surge.latency.receiver({ offset = 1 })
  local lat = ffi.new("int32_t[4]", -1, receiver.id, -1, -1)
  local hz = surge.tsc_hz()
  local count = otg_task.counter(st.rx, lat, offs, nflows, hz, require("surge.otg.flows").tag_readers(tagged, 0),
    st.tags)
  local want_tag = {}
  for v = 0, 127 do want_tag[v] = 0 end
  local buf = ffi.new("uint8_t[256]")
  local seeds = {}
  for _, o in ipairs(offs) do
    for k = 0, 4 do
      local probe = "SRGP" .. "\1\0\0\0" .. "\16\0\0\0\0\0\0\0"
      seeds[#seeds + 1] = ("\0"):rep(o) .. "SOTG" .. string.char(0, k) .. probe .. ("x"):rep(10)
    end
  end
  local want = { [0] = 0, 0, 0 }
  local function check(frame)
    local l = math.min(#frame, 160)
    ffi.fill(buf, 256, 0)
    ffi.copy(buf, frame, l)
    for _, o in ipairs(offs) do    -- a tag of flow 1 wherever it lies past the frame's end
      for i = 0, 5 do if o + i >= l then buf[o + i] = ("SOTG\0\1"):byte(i + 1) end end
    end
    for _, o in ipairs(offs) do
      if l >= o + 6 and frame:sub(o + 1, o + 4) == "SOTG" then
        local k = frame:byte(o + 5) * 256 + frame:byte(o + 6)
        if k < nflows then want[k] = want[k] + 1 end
        if k == 2 and o == 62 then
          local v = math.floor(frame:byte(1) / 16) * 8 + frame:byte(62) % 8
          want_tag[v] = want_tag[v] + 1
        end
        break
      end
    end
    count(buf, l, 1e6)
  end
  local n = fuzz(seeds, check)
  for k = 0, nflows - 1 do
    assert(st.rx[k].frames == want[k], ("flow %d: counted %d, %d carry its tag"):format(k, st.rx[k].frames, want[k]))
  end
  local tagged_n = 0
  for v = 0, 127 do
    assert(st.tags[128 + v].frames == want_tag[v], ("tag value %d: counted %d, %d carry it"):format(v,
      st.tags[128 + v].frames, want_tag[v]))
    assert(st.tags[v].frames == 0, "a received frame counted as sent")
    tagged_n = tagged_n + want_tag[v]
  end
  assert(tagged_n > 50, "too few frames of the tagged flow: " .. tagged_n)
  assert(want[1] > 100 and want[0] > 100, "too few tagged frames: " .. want[1])
  assert(receiver:summary().probes <= want[1])
  print(("  otg received frames: %d mutated frames, %d %d %d tagged, seed %d"):format(n, want[0], want[1], want[2],
    SEED))
end

-- The frames a ping task receives are the network's too: otg/ping.lua's
-- reply matcher on mutated echo replies (IPv4, IPv6), whole or cut short,
-- reads nothing past a frame's length: the bytes past it are, in turn, the IPv4 reply's and the
-- IPv6 reply's, and the answer is the same with both (a read there would
-- match with one of them).
function T.otg_ping_replies_read_within_their_length()
  local IDENT, mac = 7, "\2\0\0\0\0\1"
  local by_seq, seeds = {}, {}
  local buf = ffi.new("uint8_t[256]")
  for seq, six in ipairs({ false, true }) do
    local dev, dst = six and "2001:db8::2" or "192.0.2.2", six and "2001:db8::1" or "192.0.2.1"
    -- the reply: an echo from the destination to the device, its type made a reply
    local n = otg_ping.write_echo(buf, { kind = six and 6 or 4, mac = "02:00:00:00:00:02", addr = dst },
      { dst = dev, seq = seq }, IDENT, mac)
    buf[six and 54 or 34] = six and 129 or 0
    seeds[seq] = ffi.string(buf, n)
    by_seq[seq] = { seq = seq, six = six, src_b = six and ip6.addr(dev, "fuzz", 1) or ip4.addr(dev, "fuzz", 1),
                    dst_b = six and ip6.addr(dst, "fuzz", 1) or ip4.addr(dst, "fuzz", 1) }
  end
  local v = view.new()
  local matched = { 0, 0 }
  local function answer(frame, l, past)
    ffi.fill(buf, 256, 0)
    ffi.copy(buf, past, #past)
    ffi.copy(buf, frame, l)
    local r = view.parse(v, buf, l) and otg_ping.reply(buf, l, v, IDENT, by_seq)
    return r and r.seq or nil
  end
  local function check(frame)
    -- whole, or cut short anywhere (a mutation seldom ends a frame inside its headers)
    local l = math.min(#frame, 200)
    if l > 14 and math.random(1, 2) == 1 then l = math.random(14, l) end
    local a, b = answer(frame, l, seeds[1]), answer(frame, l, seeds[2])
    assert(a == b, ("a read past the frame's %d bytes: %s and %s for %q"):format(l, tostring(a), tostring(b), frame))
    if a then matched[a] = matched[a] + 1 end
  end
  local n = fuzz(seeds, check)
  assert(matched[1] > 100 and matched[2] > 100, ("too few replies matched: %d %d"):format(matched[1], matched[2]))
  print(("  otg ping replies: %d mutated frames, %d and %d matched, seed %d"):format(n, matched[1], matched[2], SEED))
end

function T.otg_json_bounds()
  local v, why = json.decode(("["):rep(100000), 64)
  assert(v == nil and why:match("nested deeper than 64"), why)
  v, why = json.decode(('{"a":'):rep(65) .. "1" .. ("}"):rep(65), 64)
  assert(v == nil and why:match("nested deeper than 64"), why)
  v = json.decode(('{"a":'):rep(64) .. "1" .. ("}"):rep(64), 64)
  assert(type(v) == "table")
  v, why = json.decode('"a\\nb\\u00e9"')
  assert(v == "a\nb\195\169", tostring(why))
  v, why = json.decode('"tab\\tinside"')
  assert(v == "tab\tinside", why)
  v, why = json.decode('"raw\ncontrol"')    -- a raw newline in a string: RFC 8259 says escape it
  assert(v == nil and why:match("control character"), tostring(why))
  v = json.decode('"' .. ("x"):rep(4e6) .. '"')   -- long strings: a run at a time, not a table entry a byte
  assert(#v == 4e6)
end

function T.decoder_survives_mutations()
  local n = fuzz(corpus("serial"), check_decode)
  print(("  serial.decode: %d mutated inputs, seed %d"):format(n, SEED))
  assert(n >= 1000, "too few iterations: " .. n)
end

function T.script_options_survive_mutations()
  local n = fuzz(corpus("args"), check_args)
  print(("  args.parse: %d mutated argv, seed %d"):format(n, SEED))
  assert(n >= 1000, "too few iterations: " .. n)
end

-- Anything encode writes decodes to an equal value (random plain data).
function T.encode_decode_round_trip()
  math.randomseed(SEED)
  local rnd = math.random
  local function value(depth)
    local k = rnd(1, depth > 4 and 4 or 6)
    if k == 1 then return rnd(-1e6, 1e6) * (rnd() < 0.5 and 1 or 1e-7) end
    if k == 2 then
      local b = {}
      for i = 1, rnd(0, 12) do b[i] = string.char(rnd(0, 255)) end
      return table.concat(b)
    end
    if k == 3 then return rnd() < 0.5 end
    if k == 4 then return ({ 0 / 0, 1 / 0, -1 / 0, 2 ^ 53 - 1, -2 ^ 63, 5e-324 })[rnd(1, 6)] end
    local t = {}
    for i = 1, rnd(0, 4) do t[i] = value(depth + 1) end
    for _ = 1, rnd(0, 3) do t["k" .. rnd(1, 99)] = value(depth + 1) end
    return t
  end
  local function same(a, b)
    if type(a) ~= type(b) then return false end
    if type(a) ~= "table" then return a == b or (a ~= a and b ~= b) end
    for k, v in pairs(a) do if not same(v, b[k]) then return false end end
    for k in pairs(b) do if a[k] == nil then return false end end
    return true
  end
  for _ = 1, 3000 do
    local v = { value(0), value(0) }
    local d = serial.decode(serial.encode(v, 2), env)
    assert(d.n == 2 and same(v[1], d[1]) and same(v[2], d[2]), serial.encode(v, 2))
  end
end

-- Inputs the fuzzer (or review) found; each once broke a parser.
function T.regressions()
  for _, text in ipairs({
    "return {n=1," .. ("{"):rep(300) .. "}",          -- loadstring: "too many syntax levels"
    "return {n=1,(\"x\"):rep(1e9)}",                   -- loadstring ran code: memory blow-up
    "return {n=1,(function() while true do end end)()}", -- loadstring ran code: a hang
    "return {n=1e300,}",                               -- unpack of a huge count
    "return {n=1,\"\\999\"}",                          -- bad decimal escape
    "return {n=1,txq(0,1,2,3,4,5,6,7,8,9)}",           -- handle with too many arguments
    "return {n=1,[0/0]=1}",                            -- NaN key
  }) do
    check_decode(text)
    assert(not pcall(serial.decode, text, env), "refused: " .. text)
  end
  for _, line in ipairs({ "--count 9007199254740993", "--count 1e309", "--gap -nan", "--burst 0x101",
                          "--count=", "--=1", "-- --", "--verbose=1" }) do
    check_args(line)
    assert(not pcall(parser().parse, parser(), split(line)), "refused: " .. line)
  end
end

return T
