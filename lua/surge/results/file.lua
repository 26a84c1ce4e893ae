-- results/file.lua (surge.results.file) - every file surge writes for the
-- user (--output, surge.results.write, receiver:save, surge plot's gnuplot
-- input) goes through save(), so none is ever cut short in silence.
local M = {}

-- Writes text to path, all of it or nothing: every write, the flush and the
-- close are checked (a full disk shows there), and a regular file is written
-- as PATH.tmp-N in the same folder, then renamed over PATH, so a cut file
-- never replaces a good one. A device (/dev/fd/N for --output -, /dev/stdout)
-- cannot be renamed onto: it is written in place. Returns true, or nil and
-- the reason (without the path).
local tmp_seq = 0
function M.save(path, text)
  local direct = path:match("^/dev/") ~= nil
  tmp_seq = tmp_seq + 1
  local tmp = direct and path or ("%s.tmp-%d-%d"):format(path, os.time(), tmp_seq)
  local f, err = io.open(tmp, "w")
  if not f then return nil, (tostring(err):gsub("^.-: ", "")) end
  local wok, werr = f:write(text)
  if wok then wok, werr = f:flush() end
  local cok, cerr = f:close()
  if not wok or not cok then
    if not direct then os.remove(tmp) end
    return nil, tostring(werr or cerr)
  end
  if not direct then
    local rok, rerr = os.rename(tmp, path)
    if not rok then os.remove(tmp) return nil, (tostring(rerr):gsub("^.-: ", "")) end
  end
  return true
end

return M
