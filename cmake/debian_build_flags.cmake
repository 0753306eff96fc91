# Debian's hardening flags, as dpkg-buildflags gives them with
# hardening=+all (the stack protector, _FORTIFY_SOURCE, format checks,
# relro and bind-now), for every build but Debug and the sanitizers'. So
# the binaries `make test` runs are the ones `make deb` packs, hardened as
# Debian's own packages are (docs/decisions.md).
#
# The build type keeps choosing optimisation and debug information: -O and
# -g are left out of dpkg-buildflags' words, and so is the prefix map
# (reproducibility, not hardening: it would make a developer's debugger
# look for sources relative to the tree). DEB_BUILD_OPTIONS and
# DEB_BUILD_MAINT_OPTIONS in the environment are honoured, as dpkg's own
# builds honour them. Without dpkg-buildflags (not Debian), nothing is added.
option(EMQ_DEBIAN_FLAGS "Add Debian's hardening flags (dpkg-buildflags) outside Debug and the sanitizers" ON)

# The words of `dpkg-buildflags --get WHAT` that are hardening, into OUT.
function(emq_debian_flags what out)
  set(maint "$ENV{DEB_BUILD_MAINT_OPTIONS}")
  if(maint STREQUAL "")
    set(maint "hardening=+all")
  endif()
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env "DEB_BUILD_MAINT_OPTIONS=${maint}" dpkg-buildflags --get ${what}
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    OUTPUT_VARIABLE text
    OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-buildflags --get ${what} failed (${rc}): "
                        "configure with -DEMQ_DEBIAN_FLAGS=OFF to build without Debian's flags")
  endif()
  separate_arguments(words UNIX_COMMAND "${text}")
  list(FILTER words EXCLUDE REGEX "^-(O.*|g.*|f(file|debug|macro)-prefix-map=.*)$")
  set(${out} "${words}" PARENT_SCOPE)
endfunction()

find_program(EMQ_DPKG_BUILDFLAGS dpkg-buildflags)
if(EMQ_DEBIAN_FLAGS AND EMQ_DPKG_BUILDFLAGS AND NOT EMQ_SANITIZE AND NOT EMQ_FUZZ
   AND NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
  emq_debian_flags(CFLAGS c_flags)
  emq_debian_flags(CXXFLAGS cxx_flags)
  emq_debian_flags(CPPFLAGS cpp_flags)
  emq_debian_flags(LDFLAGS ld_flags)
  foreach(flag IN LISTS c_flags)
    add_compile_options($<$<COMPILE_LANGUAGE:C>:${flag}>)
  endforeach()
  foreach(flag IN LISTS cxx_flags)
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:${flag}>)
  endforeach()
  add_compile_options(${cpp_flags})
  add_link_options(${ld_flags})
  string(JOIN " " shown ${cxx_flags} ${cpp_flags} ${ld_flags})
  message(STATUS "Debian's hardening flags (dpkg-buildflags): ${shown}")
endif()
