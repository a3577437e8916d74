# The installed CMake package: find_package(Tile) + target_link_libraries(app PRIVATE Tile::tile).
include(CMakePackageConfigHelpers)
install(EXPORT TileTargets NAMESPACE Tile:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tile)
configure_package_config_file(cmake/TileConfig.cmake.in ${PROJECT_BINARY_DIR}/TileConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tile
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TileConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TileConfig.cmake ${PROJECT_BINARY_DIR}/TileConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tile)
