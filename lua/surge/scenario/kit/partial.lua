-- scenario/kit/partial.lua - a scenario's end: its results recorded
-- (done), what it measured so far kept when a stop cuts it (the one way:
-- partial registers, a stop from the command line, from Lua or at the
-- prompt completes and marks it), and main(), its run from the command line.
local check = require("surge.check")
local core = require("surge.core")
local dut = require("surge.dut")
local results_file = require("surge.results")
local trace = require("surge.base.trace")
local dry = require("surge.scenario.kit.dry")
local options = require("surge.scenario.kit.options")
local state = require("surge.scenario.kit.state")

local M = {}

-- Where a scenario's own function f is, for messages about what it did:
-- "FILE:LINE" of its definition.
local function where(f)
  local i = debug.getinfo(f, "S")
  return ("%s:%d"):format(i.short_src, i.linedefined)
end


-- A scenario's run() ends with this: its results go to --output (under
-- its name) whether it ran by name, from a script or at the prompt.
-- `stopped`: its task saw the stop and returned what it had (http,
-- rfc9693): the results are partial.
function M.done(name, res, stopped)
  if state.dry then error(dry.DRY, 0) end
  if stopped then M.mark_partial(res, "the run stopped") end
  state.current.active = nil
  results_file.scenario_done(name, res)
  return res
end

-- What a scenario measured so far (M.partial): kept when the run stops in
-- the middle of it. `finish` completes such a table (its flat rows).
function M.partial(res, finish)
  state.partial = { res = res, finish = finish }
end

-- The one way a results table becomes partial: completed by finish (when
-- given) and marked { partial = true, stopped = why }. A stop that cut
-- run() (keep_partial, take_partial) and a task that saw the stop and
-- returned what it had (http, rfc9693) both end here.
function M.mark_partial(res, why, finish)
  if finish then finish(res) end
  res.partial, res.stopped = true, why
  return res
end

-- For the prompt (surge/repl/init.lua), whose commands a Ctrl-C interrupts: the
-- table the last scenario registered with M.partial, completed and marked
-- partial (stopped = why), or nil; it is forgotten either way. take_partial()
-- before a command forgets one left by a scenario that ran to its end.
function M.take_partial(why)
  local p = state.partial
  state.partial = nil
  if not (why and p and p.res) then return nil end
  return M.mark_partial(p.res, why, p.finish)
end

-- Whether error e is a stop that cut a scenario (Ctrl-C, SIGTERM,
-- surge.stop(), --duration): "run stopped", or a trial's "the run was
-- stopped during ...".
local function is_stop(e)
  local why = tostring(e)
  return e == core.STOPPED or why:sub(1, #dut.STOPPED_DURING) == dut.STOPPED_DURING
end

-- What a stop that cut a scenario leaves: the results so far, completed and
-- marked partial, recorded for --output under the scenario's name (nil:
-- nothing measured yet), and the one line saying which. The command line
-- (main below) and a run from Lua (stopped_in_lua) both end this way.
local function keep_partial(name, why)
  local res = state.partial and state.partial.res
  io.stderr:write(("%s: %s: %s\n"):format(name, why, res and "the results so far are partial"
    or "nothing was measured yet"))
  if not res then return nil end
  M.mark_partial(res, why, state.partial.finish)
  state.partial = nil
  results_file.scenario_done(name, res)
  return res
end

-- For the main VM (vm/master.lua), when a script ends with error e: a
-- scenario it called from Lua that a stop cut (the script did not catch
-- it) ends the run as the same stop does on the command line: its results
-- so far recorded and marked partial, no failure. True when e was that.
function M.stopped_in_lua(e)
  if state.current.cli or not state.current.active or core.C.surge_running() ~= 0 or not is_stop(e) then
    return false
  end
  keep_partial(state.current.active, tostring(e))
  state.current.active = nil
  return true
end

-- Runs scenario `name` (module mod) from the command line: parse argv,
-- run, print its report. Returns the exit code. A run stopped in the middle
-- (SIGINT, SIGTERM, surge.stop(), --duration) is not a failure: what the
-- scenario measured so far is reported and recorded, marked partial.
function M.main(name, mod, argv)
  local p = options.parser(name, mod)
  local opts = p:parse(argv)
  if opts == nil then return 0 end
  results_file.run_started(name, opts)
  state.partial = nil
  state.current.cli = true    -- what run() refuses is a command-line option: exit 2
  -- an error raised with no message or a plain table gets its position
  -- here, where the stack still has it (surge's own errors pass as they are)
  local ok, results = xpcall(mod.run, function(e)
    if type(e) == "string" or (type(e) == "table" and getmetatable(e) ~= nil) then return e end
    return trace.message(e)
  end, opts)
  state.current.cli = false
  if ok and type(results) ~= "table" then
    error(("%s: %s: run(opts) returned %s, not the results table"):format(where(mod.run), name,
      check.show(results)), 0)
  end
  if not ok then
    if not is_stop(results) then error(results, 0) end
    results = keep_partial(name, tostring(results))
    if not results then return 0 end
  end
  results_file.scenario_done(name, results) -- for --output and surge plot (once: done() may have)
  if mod.report then
    local text = mod.report(results)
    if type(text) ~= "string" then
      error(("%s: %s: report(results) returned %s, not the text to print"):format(where(mod.report), name,
        check.show(text)), 0)
    end
    print(text)
  end
  return results.ok == false and 1 or 0
end

return M
