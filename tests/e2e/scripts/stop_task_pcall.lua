-- stop_task_pcall.lua - a task catching "run stopped" and calling again
-- (the watchdog says so), and a launch after the stop (refused: master ends).
local surge = require "surge"
function spin() while true do pcall(surge.sleep, 0.01) end end
function tx() end
function master(args)
  if args.mode == "late" then
    surge.stop()
    surge.launch("tx")
    print("launched after the stop")
    return
  end
  surge.launch("spin")
  surge.wait()
end
function configure(p) p:option("--mode", "spin or late", "spin") end
