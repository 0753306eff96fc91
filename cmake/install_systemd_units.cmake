# Run by `cmake --install` (install(CODE) in the top CMakeLists.txt): writes
# emqd.service and emqd@.service from systemd/emqd.service.in with the
# prefix of this install, which `--prefix` may have changed since configure
# time. So the units always run the emqd this same install put in bin/.
#
# In: EMQ_UNIT_TEMPLATE (the .in file), EMQ_UNIT_WORK (a scratch directory),
#     EMQ_BINDIR_REL and EMQ_DOCDIR_REL (GNUInstallDirs' relative dirs),
#     EMQ_UNITDIR_REL (where the units go: EMQ_SYSTEMD_UNITDIR), and
#     CMAKE_INSTALL_PREFIX as the install sets it.
foreach(dir EMQ_BINDIR EMQ_DOCDIR EMQ_UNITDIR)
  if(IS_ABSOLUTE "${${dir}_REL}")
    set(${dir} "${${dir}_REL}")
  else()
    set(${dir} "${CMAKE_INSTALL_PREFIX}/${${dir}_REL}")
  endif()
endforeach()

# Per destination, so two installs to different roots never share a file.
string(MD5 destination "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
set(work "${EMQ_UNIT_WORK}/${destination}")

# name: the unit file; then what its ExecStart, EnvironmentFile,
# StateDirectory and log identifier are named after.
foreach(unit "emqd.service|emqd|emqd|emqd" "emqd@.service|emqd@%i|emqd-%i|emqd/%i")
  string(REPLACE "|" ";" parts "${unit}")
  list(GET parts 0 file_name)
  list(GET parts 1 EMQ_UNIT_NAME)
  list(GET parts 2 EMQ_CONFIG_NAME)
  list(GET parts 3 EMQ_STATE_NAME)
  configure_file("${EMQ_UNIT_TEMPLATE}" "${work}/${file_name}" @ONLY)
  file(INSTALL "${work}/${file_name}" DESTINATION "${EMQ_UNITDIR}")
endforeach()
