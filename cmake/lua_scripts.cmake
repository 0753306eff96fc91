# The transitions are the files of lua/: what the build knows of each comes
# from the file itself, so that a new transition is a new lua/<name>.lua
# and no list besides. Included by lib/CMakeLists.txt (configure time) and
# by cmake/embed_lua.cmake (build time).

# Script::<Enum> for lua/<name>.lua: enqueue_lane -> EnqueueLane.
function(emq_script_enum name out)
  string(REPLACE "_" ";" parts "${name}")
  set(enum "")
  foreach(p IN LISTS parts)
    string(SUBSTRING "${p}" 0 1 first)
    string(TOUPPER "${first}" first)
    string(SUBSTRING "${p}" 1 -1 rest)
    string(APPEND enum "${first}${rest}")
  endforeach()
  set(${out} "${enum}" PARENT_SCOPE)
endfunction()

# echomq/script_names.h: the Script enum, one per name, and kScriptCount.
# Written only when it changes, so that a configure rebuilds nothing else.
function(emq_write_script_names names header)
  set(body "// Generated from the file names in lua/ by cmake/lua_scripts.cmake. Do not edit:\n")
  string(APPEND body "// a new transition is a new lua/<name>.lua (echomq/scripts.h).\n#pragma once\n\n")
  string(APPEND body "#include <cstddef>\n\nnamespace echomq {\n\n// One per lua/<name>.lua, in the names' byte order.\nenum class Script {\n")
  list(LENGTH names count)
  foreach(name IN LISTS names)
    emq_script_enum("${name}" enum)
    string(APPEND body "  ${enum},\n")
  endforeach()
  string(APPEND body "};\n\ninline constexpr std::size_t kScriptCount = ${count};\n\n}  // namespace echomq\n")
  file(CONFIGURE OUTPUT "${header}" CONTENT "${body}" @ONLY)
endfunction()

# What the header of a script declares (the comment it opens with, through
# its first "]]"): in <prefix>_KEYS the KEYS lines, in <prefix>_OPTIONAL
# those that say "optional" (the KEYS a call may add after the others), and
# in <prefix>_EVENTS whether one of them is the queue's events stream.
function(emq_script_header text prefix)
  string(FIND "${text}" "]]" end)
  string(SUBSTRING "${text}" 0 ${end} header)
  string(REPLACE ";" "," header "${header}")  # a CMake list splits at ';'
  string(REGEX MATCHALL "\n[ \t]*KEYS\\[[0-9]+\\][^\n]*" lines "${header}")
  list(LENGTH lines keys)
  set(optional 0)
  set(events false)
  foreach(line IN LISTS lines)
    if(line MATCHES "optional")
      math(EXPR optional "${optional} + 1")
    endif()
    if(line MATCHES "emq:{q}:events")
      set(events true)
    endif()
  endforeach()
  set(${prefix}_KEYS ${keys} PARENT_SCOPE)
  set(${prefix}_OPTIONAL ${optional} PARENT_SCOPE)
  set(${prefix}_EVENTS ${events} PARENT_SCOPE)
endfunction()
