-- gen/loop.lua - the one loop skeleton of the generated apply(self, burst),
-- shared by surge.flow and surge.size: what a packet does is theirs, how the
-- burst is walked and the state kept between bursts is this.
--
-- A counter that moves with every packet is kept as its value at i = 0 of
-- the run (d), the packet's value being d + i, and the loop runs only up to
-- the packet where a counter takes its last value (`last`); its wrap comes
-- after the loop, which goes on from there. Why: in a LuaJIT trace a
-- variable carried from one iteration to the next is a double (counters
-- kept as "d = d + 1" cost float adds, compares and conversions on every
-- packet), while the loop index is an integer and tobit(d) is invariant
-- inside the loop. And a wrap tested inside the loop is a branch the trace
-- may record on its rare side (when the trace is recorded in a wrapping
-- iteration, the common path becomes the side exit). So the loop body
-- holds integer code and no test of the counters.
local check = require("surge.check")

local M = {}

local function num(v) return ("%.0f"):format(v) end

-- The state's locals (names) loaded from the upvalues that keep it between
-- calls (slots), as a line ("" with no state).
function M.load(names, slots)
  if #names == 0 then return "" end
  return ("    local %s = %s"):format(table.concat(names, ", "), table.concat(slots, ", "))
end

-- The state stored back after `after` packets: a counter that moves with
-- the packet index (moves[name]) is stored as its value there.
function M.save(names, slots, moves, after)
  if #names == 0 then return "" end
  local out = {}
  for i, v in ipairs(names) do out[i] = moves[v] and ("%s + %s"):format(v, after) or v end
  return ("    %s = %s"):format(table.concat(slots, ", "), table.concat(out, ", "))
end

-- The last packet of the run that starts at i0: the burst's last, or the
-- one where a moving counter (moves: name -> how many values it takes)
-- takes its last value.
local function run_end(moves)
  local L = { "local last = n_ - 1" }
  local vars = {}
  for v in pairs(moves) do vars[#vars + 1] = v end
  table.sort(vars)
  for _, v in ipairs(vars) do
    if moves[v] < math.huge then
      local top = num(moves[v] - 1)
      L[#L + 1] = ("if %s - %s < last then last = %s - %s end"):format(top, v, top, v)
    end
  end
  return "    " .. table.concat(L, "\n    ")
end

-- The source of apply(self, burst). l.names, l.slots: the state (see load);
-- l.moves: the counters that move with the packet index i; l.packet: the
-- code of packet i (its lines, indented); l.wraps: the code run after each
-- run, with `last` its last packet ("" for none).
-- burst.data[i] is read in the packet's code each time rather than kept in
-- a local: a reference to the array is a cdata the trace cannot always
-- sink, one allocation a burst.
function M.apply(l)
  return table.concat({
    "local function apply(self, burst)",
    "  local n_ = burst.n",
    "  do",
    M.load(l.names, l.slots),
    "  local i0 = 0",
    "  while i0 < n_ do",
    run_end(l.moves),
    "  for i = i0, last do",
    l.packet,
    "  end",
    l.wraps,
    "    i0 = last + 1",
    "  end",
    M.save(l.names, l.slots, l.moves, "n_"),
    "  end",
    "  return n_",
    "end",
  }, "\n")
end

-- The first line of next(self, p): p must be a pointer, else bad_p(args).
function M.pointer_test(args)
  return ("  if not (%s) then bad_p(%s) end"):format(check.test_source("p", "pointer"), args)
end

-- The generated text as a chunk named "=" .. who (the name traces and
-- errors show).
function M.chunk(text, who)
  local chunk, err = loadstring(text, "=" .. who)
  if not chunk then error(who .. ": internal: generated code does not load: " .. err .. "\n" .. text, 0) end
  return chunk
end

return M
