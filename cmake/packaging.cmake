# SPDX-License-Identifier: Apache-2.0
# `cmake --install` and the Debian package (`cpack` in the build directory), laid out by GNUInstallDirs
# (docs/packaging.md): bin/epsim; the README, licence and notices, docs/, examples/ and data/ under
# share/doc/epsim as the repository lays them out, so their relative links resolve. Examples go there
# by Debian Policy 12.6 (/usr/share/doc/<package>/examples); nothing under it is read at run time (the
# binary embeds its presets, the demo, the accuracy suite and Vega).
include(GNUInstallDirs)
install(TARGETS epsim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# NOTICE and CHANGELOG.md where the checkout has them (CONFIGURE_DEPENDS: one added later is installed
# after the next build).
file(GLOB epsim_top_docs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE
     ${PROJECT_SOURCE_DIR}/NOTICE* ${PROJECT_SOURCE_DIR}/CHANGELOG.md)
install(FILES ${epsim_top_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples USE_SOURCE_PERMISSIONS
        PATTERN __pycache__ EXCLUDE)
install(DIRECTORY data/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/data PATTERN __pycache__ EXCLUDE)
# Debian wants the licence at /usr/share/doc/<package>/copyright.
install(FILES cmake/debian-copyright DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME copyright)

set(EPSIM_PACKAGE_MAINTAINER "epsim maintainers" CACHE STRING
    "Maintainer field of the .deb (Debian wants 'Name <email>')")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME epsim)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "epsim maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "discrete-event simulator of expert-parallel MoE inference serving")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "epsim simulates serving a mixture-of-experts model with expert parallelism: per-step expert load "
    "imbalance, routing traces, placement policies with timed migration, per-GPU variability, studies "
    "with replications and confidence intervals, and placement files serving engines load.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${EPSIM_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# The shared libraries the binary links (Boost, Clp, Protobuf, yaml-cpp, Open MPI...) from dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Vega is compiled in; Node.js draws each report figure's SVG: `epsim report` needs it unless --no-svg,
# the other commands never, so it is recommended (apt installs it by default), not required.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS nodejs)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "chromium, openmpi-bin")
include(CPack)
