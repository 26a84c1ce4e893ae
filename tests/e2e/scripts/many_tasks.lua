-- many_tasks.lua - master launches more tasks than there are worker lcores;
-- the launch that finds none free fails with how to give more (or that no
-- more can be given).
local surge = require("surge")

function master()
  for _ = 1, 1024 do
    surge.launch("spin") -- LAUNCH_LINE
  end
end

function spin()
  while surge.running() do surge.sleep(0.001) end
  return 0
end
