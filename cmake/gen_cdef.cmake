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
set(c_abi "${abi}")
string(REGEX REPLACE "([a-z_]+)((\\[[A-Z_]+\\])?;[ \t]*/\\* read-only in Lua)" "ro_\\1\\2" abi "${abi}")
file(WRITE "${OUT}.tmp" "-- Generated from core/include/surge.h by core/gen_cdef.cmake. Do not edit.\nlocal ffi = require \"ffi\"\nffi.cdef[==[${abi}]==]\nreturn [==[${abi}]==]\n")
file(RENAME "${OUT}.tmp" "${OUT}")

# With -DTABLE=FILE also the ABI layout table (core/base/abi.c includes it):
# a size row for every struct of the block and an offset/size row for each
# of its fields, so the table cannot miss a field the header declares; the
# layout test (tests/lua/test_abi.lua) compares it with LuaJIT's view.
if(DEFINED TABLE)
  string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" bare "${c_abi}")
  string(REPLACE ";" "@" bare "${bare}")   # ';' would split CMake's lists
  string(REGEX MATCHALL "struct [a-z_][a-z0-9_]* {[^}]*}" structs "${bare}")
  set(rows "/* Generated from core/include/surge.h by cmake/gen_cdef.cmake. Do not edit. */\n")
  foreach(s IN LISTS structs)
    string(REGEX MATCH "^struct ([a-z_][a-z0-9_]*) {([^}]*)}" _ "${s}")
    set(name "${CMAKE_MATCH_1}")
    set(body "${CMAKE_MATCH_2}")
    string(APPEND rows "S(${name}),\n")
    string(REPLACE "@" "\n" decls "${body}")
    string(REGEX MATCHALL "[^\n]+" decls "${decls}")
    foreach(d IN LISTS decls)
      string(REGEX REPLACE "\\[[^]]*\\]" "" d "${d}")
      # "uint8_t a, b, c": a row for each name the declaration lists
      string(REGEX MATCHALL "[a-z_][a-z0-9_]*[ \t]*(,|$)" names "${d}")
      foreach(n IN LISTS names)
        string(REGEX REPLACE "[ \t,]" "" n "${n}")
        string(APPEND rows "F(${name}, ${n}),\n")
      endforeach()
    endforeach()
  endforeach()
  file(WRITE "${TABLE}.tmp" "${rows}")
  file(RENAME "${TABLE}.tmp" "${TABLE}")
endif()
