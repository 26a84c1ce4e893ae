# Generates lua/surge/cdef.lua from core/include/surge.h: the text between
# the ABI-BEGIN and ABI-END markers, handed to ffi.cdef unchanged, so C and
# Lua read one declaration. Run as: cmake -DIN=surge.h -DOUT=cdef.lua -P this
file(READ "${IN}" text)
string(FIND "${text}" "/* ABI-BEGIN */" begin)
string(FIND "${text}" "/* ABI-END */" end)
if(begin EQUAL -1 OR end EQUAL -1)
  message(FATAL_ERROR "${IN}: ABI-BEGIN/ABI-END markers not found")
endif()
math(EXPR begin "${begin} + 15")
math(EXPR len "${end} - ${begin}")
string(SUBSTRING "${text}" ${begin} ${len} abi)
if(abi MATCHES "#")
  message(FATAL_ERROR "${IN}: the ABI block must not contain preprocessor lines")
endif()
# Fields commented "read-only in Lua" get the Lua name ro_NAME: Lua reads
# them through a metatype __index (lua/surge/pool.lua), and an assignment to
# NAME reaches __newindex, which refuses it naming the field.
string(REGEX REPLACE "([a-z_]+)((\\[[A-Z_]+\\])?;[ \t]*/\\* read-only in Lua)" "ro_\\1\\2" abi "${abi}")
file(WRITE "${OUT}.tmp" "-- Generated from core/include/surge.h by core/gen_cdef.cmake. Do not edit.\nlocal ffi = require \"ffi\"\nffi.cdef[==[${abi}]==]\nreturn [==[${abi}]==]\n")
file(RENAME "${OUT}.tmp" "${OUT}")
