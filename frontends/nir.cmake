# NIR import and export (HDF5 C API; docs/nir.md). Included by
# frontends/CMakeLists.txt so that the NIR sources stay one line there.
enable_language(C)  # FindHDF5 checks its C wrapper with the C compiler
find_package(HDF5 REQUIRED COMPONENTS C)
target_sources(refinery_frontends PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/nir_import.cpp ${CMAKE_CURRENT_LIST_DIR}/nir_export.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nir_hdf5.cpp)
target_include_directories(refinery_frontends SYSTEM PRIVATE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
target_compile_definitions(refinery_frontends PRIVATE ${HDF5_C_DEFINITIONS})
target_link_libraries(refinery_frontends PRIVATE ${HDF5_C_LIBRARIES})
# .npz arrays: the inputs and spike traces of `refinery run` on a spiking graph.
find_package(ZLIB REQUIRED)
target_sources(refinery_frontends PRIVATE ${CMAKE_CURRENT_LIST_DIR}/npz.cpp)
target_link_libraries(refinery_frontends PRIVATE ZLIB::ZLIB)
