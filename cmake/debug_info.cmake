# EMQ_DEBUG_INFO=OFF: a RelWithDebInfo build without -g. GCC's code does not
# depend on -g, so the programs are the same ones; only the debug sections
# go, which are a third of the compile and which the .deb strips anyway.
# CI (.ci/run) builds so: it debugs nothing, and it waits for every unit.
option(EMQ_DEBUG_INFO "Debug information (-g) in RelWithDebInfo builds; OFF compiles faster, same code" ON)

if(NOT EMQ_DEBUG_INFO)
  foreach(lang C CXX)
    # A normal variable over the cache entry: the cache keeps the default,
    # so turning the option on again brings -g back.
    string(REGEX REPLACE "(^| )-g[0-9]*( |$)" " " flags "${CMAKE_${lang}_FLAGS_RELWITHDEBINFO}")
    set(CMAKE_${lang}_FLAGS_RELWITHDEBINFO "${flags}")
  endforeach()
  message(STATUS "EMQ_DEBUG_INFO=OFF: RelWithDebInfo compiles with '${CMAKE_CXX_FLAGS_RELWITHDEBINFO}'")
endif()
