# What `cmake --install` puts where, and the .deb and .rpm made from it by CPack (`cpack` in the
# build directory; Debian's rpm package provides rpmbuild). tools/release.sh makes the tarballs
# from the same installation, so every form carries the same files.
include(GNUInstallDirs)
install(TARGETS stackcheck RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES docs/stackcheck.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES completion/stackcheck.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME stackcheck)
install(FILES README.md LICENSE docs/findings.md docs/probes.md docs/snapshot.schema.json
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The machine the binary is for (a cross build's, not this machine's).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(sc_deb_arch arm64)
  set(sc_rpm_arch aarch64)
else()
  set(sc_deb_arch amd64)
  set(sc_rpm_arch x86_64)
endif()

set(CPACK_GENERATOR DEB RPM)
set(CPACK_PACKAGE_NAME stackcheck)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "stackcheck developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "check an accelerator software stack (ROCm/DTK, CUDA, CANN) layer by layer")
set(CPACK_PACKAGE_DESCRIPTION "stackcheck checks the stack of an AMD/Hygon, NVIDIA or Huawei Ascend \
node bottom-up (driver, runtime, libraries, framework, application), names the first layer that \
fails and why, and writes a JSON snapshot that can be compared with another node's.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_FILE_NAME stackcheck-${PROJECT_VERSION})
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${sc_deb_arch})
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_ARCHITECTURE ${sc_rpm_arch})
set(CPACK_RPM_PACKAGE_LICENSE MIT)
set(CPACK_RPM_PACKAGE_GROUP "Applications/System")
# Directories the system owns (filesystem, man-db, bash-completion) are not the package's, nor
# are build-id links (a debug-info matter of the distribution's own packages).
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION /usr/share/man /usr/share/man/man1
    /usr/share/bash-completion /usr/share/bash-completion/completions)
set(CPACK_RPM_SPEC_MORE_DEFINE "%define _build_id_links none")
if(SC_PORTABLE)
  # Everything but glibc is inside the binary, and tools/glibc-floor.sh holds it to this floor.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= ${SC_GLIBC_FLOOR})")
  set(CPACK_RPM_PACKAGE_AUTOREQ OFF)
  set(CPACK_RPM_PACKAGE_REQUIRES "glibc >= ${SC_GLIBC_FLOOR}")
else()
  # The libraries it links, as the packaging tools find them: dpkg-shlibdeps for the .deb,
  # rpmbuild's automatic requirements (sonames with symbol versions) for the .rpm.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
include(CPack)
