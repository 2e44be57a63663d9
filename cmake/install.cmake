# `cmake --install BUILD [--prefix DIR]` (DESTDIR honoured), or scripts/setup.sh --prefix DIR:
#
#   bin/hmc, bin/hmc-build-model           the sampler; the one-command build of a user's models
#   libexec/hmc/hmc-LEVEL                   a portable build's levels, which bin/hmc chooses from
#   include/hmc/...                         the headers: core/, model/, keys/ and distributions/ (what a model
#                                           uses) and the rest of the engine, which an executable with
#                                           a user's model instantiates; include/hmc/models: the shipped
#                                           models' headers
#   lib/libhmc_*.a                          hmc::core, hmc::app, hmc::models
#   lib/cmake/hmc/                          the package: find_package(hmc) and hmc_add_executable
#   share/hmc/scripts, share/hmc/configs    scaling sweeps and Slurm templates; the shipped configs and data
#   share/doc/hmc                           README.md and docs/
#
# hmcConfig.cmake finds the Kokkos this build used (its Kokkos_DIR, unless the user sets
# Kokkos_DIR or Kokkos_ROOT), MPI, CLI11, nlohmann_json, spdlog and netCDF.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(HMC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/hmc)
set_target_properties(hmc_core PROPERTIES EXPORT_NAME core)
set_target_properties(hmc_app PROPERTIES EXPORT_NAME app)
set_target_properties(hmc_models PROPERTIES EXPORT_NAME models)
set_target_properties(hmc_arch PROPERTIES EXPORT_NAME arch)
set_target_properties(hmc_warnings PROPERTIES EXPORT_NAME warnings)
set_target_properties(hmc_sanitizers PROPERTIES EXPORT_NAME sanitizers)

install(TARGETS hmc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(HMC_LEVEL_TARGETS)
  install(TARGETS ${HMC_LEVEL_TARGETS} RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/hmc)
endif()
install(TARGETS hmc_core hmc_app hmc_models hmc_arch hmc_warnings hmc_sanitizers
        EXPORT hmcTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/hmc DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/models/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hmc/models
        FILES_MATCHING PATTERN "*.hpp")
install(EXPORT hmcTargets NAMESPACE hmc:: DESTINATION ${HMC_INSTALL_CMAKEDIR})

set(HMC_KOKKOS_DIR "${Kokkos_DIR}")
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/hmcConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/generated/hmcConfig.cmake
                              INSTALL_DESTINATION ${HMC_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/generated/hmcConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/generated/hmcConfig.cmake ${PROJECT_BINARY_DIR}/generated/hmcConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/hmcAddExecutable.cmake
        DESTINATION ${HMC_INSTALL_CMAKEDIR})

# hmc-build-model, with the compiler of this build (nvcc_wrapper for a CUDA Kokkos).
set(HMC_CXX_COMPILER "${CMAKE_CXX_COMPILER}")
configure_file(${PROJECT_SOURCE_DIR}/scripts/hmc-build-model.in ${PROJECT_BINARY_DIR}/generated/hmc-build-model @ONLY)
install(PROGRAMS ${PROJECT_BINARY_DIR}/generated/hmc-build-model DESTINATION ${CMAKE_INSTALL_BINDIR})

install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/scaling DESTINATION ${CMAKE_INSTALL_DATADIR}/hmc/scripts)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scripts/slurm DESTINATION ${CMAKE_INSTALL_DATADIR}/hmc/scripts
        FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/hmc/configs)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
