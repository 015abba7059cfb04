# The installable SDK (`cmake --install build --prefix PREFIX`): the pe-vp binary, every library a driver or an own
# sc_main links, their headers, the generated register headers (C++17 and C99) and schemas, a CMake package
# (`find_package(pevp CONFIG REQUIRED)`: imported targets pevp::driver, pevp::platform, pevp::host, ...; it finds
# SystemC through pkg-config itself) and a pkg-config file (pevp.pc). docs/sdk.md.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# In link order (a library before what it uses), for pevp.pc's static link line.
set(PEVP_SDK_LIBRARIES
  pevp_tools pevp_capi pevp_capi_numerics pevp_remote pevp_isa_tools pevp_sweep pevp_platform pevp_coverage pevp_trace pevp_host pevp_driver pevp_seq pevp_arr_seq
  pevp_pe_array pevp_pe_array_rtl pevp_pe_rtl pevp_firmware_stub pevp_pe_compute pevp_memory pevp_hbm pevp_dma pevp_dma_format pevp_regfile_rtl pevp_apb pevp_regfile pevp_regfile_tables pevp_isa_text
  pevp_isa pevp_numerics pevp_buffers pevp_documents pevp_files pevp_energy pevp_params)

set(PEVP_REGS_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/pevp/regs)
get_directory_property(PEVP_REGFILE_SCHEMAS DIRECTORY ${PROJECT_SOURCE_DIR}/models/regfile DEFINITION PEVP_REGFILE_SCHEMAS)
get_directory_property(PEVP_REGFILE_GEN_DIR DIRECTORY ${PROJECT_SOURCE_DIR}/models/regfile DEFINITION PEVP_REGFILE_GEN_DIR)
foreach(lib IN LISTS PEVP_SDK_LIBRARIES)
  # The build's absolute include folders for the build, the prefix's for an installed consumer.
  get_target_property(dirs ${lib} INTERFACE_INCLUDE_DIRECTORIES)
  set(wrapped "")
  if(dirs)
    foreach(dir IN LISTS dirs)
      list(APPEND wrapped "$<BUILD_INTERFACE:${dir}>")
    endforeach()
  endif()
  list(APPEND wrapped "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
  if(lib STREQUAL "pevp_regfile_tables")
    list(APPEND wrapped "$<INSTALL_INTERFACE:${PEVP_REGS_INCLUDEDIR}>")
  endif()
  set_property(TARGET ${lib} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${wrapped}")
  string(REGEX REPLACE "^pevp_" "" short ${lib})
  set_property(TARGET ${lib} PROPERTY EXPORT_NAME ${short})
endforeach()

install(TARGETS pe-vp RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ${PEVP_SDK_LIBRARIES} EXPORT pevpTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT pevpTargets NAMESPACE pevp:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pevp FILE pevpTargets.cmake)

# Headers: every library's include/ tree (pevp/<unit>/...), and the generated register headers.
foreach(dir support/files support/buffers models/params models/numerics models/isa models/isa_text models/regfile
            models/apb models/regfile_rtl models/memory models/hbm models/dma models/pe_array models/pe_array_rtl models/pe_rtl models/energy models/arr_seq models/seq models/trace firmware_stub platform/driver
            platform/coverage platform/vp platform/host platform/sweep platform/cli platform/remote platform/capi)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${dir}/include)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endforeach()
foreach(schema IN LISTS PEVP_REGFILE_SCHEMAS)
  install(FILES ${PEVP_REGFILE_GEN_DIR}/${schema}_regs.h ${PEVP_REGFILE_GEN_DIR}/${schema}_regs_c.h
          DESTINATION ${PEVP_REGS_INCLUDEDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/models/regfile/schemas/${schema}.json
                ${PEVP_REGFILE_GEN_DIR}/${schema}.v ${PEVP_REGFILE_GEN_DIR}/${schema}.md
          DESTINATION ${CMAKE_INSTALL_DATADIR}/pevp/regfile)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/scripts/sweep_plots.py ${PROJECT_SOURCE_DIR}/scripts/slurm-cluster.sh
              ${PROJECT_SOURCE_DIR}/scripts/onnx_gemms.py
        DESTINATION ${CMAKE_INSTALL_DATADIR}/pevp/scripts
        PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

# The example programs of docs/getting-started.md and docs/running.md (sources, operands, scripts, sweep specs), so
# the page's commands work from an installed SDK as from a checkout.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/platform/examples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/pevp/examples
        PATTERN __pycache__ EXCLUDE)

# The Python client of the MMIO protocol (docs/protocol.md), where Debian's python3 finds it for a /usr/local prefix.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/pevp DESTINATION lib/python3/dist-packages
        PATTERN __pycache__ EXCLUDE)

# The CMake package.
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/pevpConfig.cmake.in
  ${PROJECT_BINARY_DIR}/pevpConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pevp)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pevpConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pevpConfig.cmake ${PROJECT_BINARY_DIR}/pevpConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pevp)

# The pkg-config file: the static libraries in link order, then what they need.
set(PEVP_PC_LIBS "")
foreach(lib IN LISTS PEVP_SDK_LIBRARIES)
  get_target_property(type ${lib} TYPE)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    string(APPEND PEVP_PC_LIBS " -l${lib}")
  endif()
endforeach()
# Relocatable: the prefix is found from the .pc file's own folder, so `cmake --install --prefix` anywhere works.
file(RELATIVE_PATH PEVP_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" PEVP_PC_TO_PREFIX "${PEVP_PC_TO_PREFIX}")
# The Verilated register files' runtime (models/regfile_rtl) writes FST waveforms with zlib and uses atomics.
get_property(pevp_have_rtl GLOBAL PROPERTY PEVP_HAVE_RTL)
set(PEVP_PC_RTL_LIBS "")
if(pevp_have_rtl)
  set(PEVP_PC_RTL_LIBS " -lz -latomic")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/pevp.pc.in ${PROJECT_BINARY_DIR}/pevp.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pevp.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
