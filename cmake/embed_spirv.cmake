# Turns a SPIR-V binary into a C++ initializer list of uint32_t words (little-endian file).
# Usage: cmake -DIN=x.spv -DOUT=x.inc -P embed_spirv.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR rem "${n} % 8")
if(NOT rem EQUAL 0 OR n EQUAL 0)
  message(FATAL_ERROR "${IN} is not a whole number of 32-bit words")
endif()
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," words "${hex}")
string(REGEX REPLACE "(([^,]*,){8})" "\\1\n" words "${words}")
file(WRITE "${OUT}.tmp" "${words}\n")
file(RENAME "${OUT}.tmp" "${OUT}")
