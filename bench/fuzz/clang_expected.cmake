# clang 14 cannot compile libstdc++ 12's <expected>: the header asks for
# __cpp_concepts >= 202002L, and it declares two destructors told apart by
# their constraints (P0848), which clang implements only from version 16. The
# fuzz build therefore reads a copy of the header, made here at configure time,
# that keeps one destructor (the one that destroys the active member; the
# defaulted trivial one is dropped, so every std::expected is non-trivially
# destructible: a difference of triviality only, not of behaviour).
file(GLOB _expected_candidates /usr/include/c++/*/expected)
list(SORT _expected_candidates COMPARE NATURAL)
list(REVERSE _expected_candidates)
list(GET _expected_candidates 0 _expected_source)
file(READ ${_expected_source} _text)
string(REPLACE "#if __cplusplus > 202002L && __cpp_concepts >= 202002L" "#if __cplusplus > 202002L" _text "${_text}")
string(REPLACE "      constexpr ~expected() = default;\n" "" _text "${_text}")
string(REPLACE "constexpr ~expected()\n      requires (!is_trivially_destructible_v<_Tp>)\n\t    || (!is_trivially_destructible_v<_Er>)\n"
               "constexpr ~expected()\n" _text "${_text}")
string(REPLACE "constexpr ~expected() requires (!is_trivially_destructible_v<_Er>)" "constexpr ~expected()" _text "${_text}")
string(FIND "${_text}" "requires (!is_trivially_destructible" _left)
if(NOT _left EQUAL -1)
  message(FATAL_ERROR "${_expected_source}: unexpected layout, cannot make the clang copy of <expected>")
endif()
set(_shim ${CMAKE_BINARY_DIR}/clang_expected)
file(WRITE ${_shim}/expected "// Made from ${_expected_source} by bench/fuzz/clang_expected.cmake\n${_text}")
include_directories(BEFORE SYSTEM ${_shim})
message(STATUS "fuzz: <expected> for clang from ${_expected_source}")
