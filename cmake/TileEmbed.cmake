# tile_embed_files(OUT <header> NAME <c identifier prefix> FILES <files...>)
# Generates a header with each file's bytes as a string literal and its file name, so that
# the plugin carries the device header library of a target and writes it next to the
# generated source it compiles.
function(tile_embed_files)
  cmake_parse_arguments(E "" "OUT;NAME" "FILES" ${ARGN})
  add_custom_command(
    OUTPUT ${E_OUT}
    COMMAND ${CMAKE_COMMAND} -DOUT=${E_OUT} -DNAME=${E_NAME} "-DFILES=${E_FILES}"
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    DEPENDS ${E_FILES} ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    COMMENT "Embedding ${E_NAME}"
    VERBATIM)
endfunction()
