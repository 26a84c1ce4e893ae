-- stop_wait_in_task.lua - surge.wait() and surge.poll() are master's (issue 7.6).
local surge = require("surge")
function configure(p) p:option("--call", "wait | poll", "wait") end
function master(args)
  surge.launch("t", args.call)
  surge.wait()
end
function t(call)
  if call == "poll" then surge.poll() end -- POLL_LINE
  surge.wait()                            -- WAIT_LINE
end
