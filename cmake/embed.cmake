# Turns a file into a C source defining `const char NAME[]` (NUL-terminated), at build time.
# Usage: cmake -DINPUT=file -DOUTPUT=file.c -DNAME=symbol -P embed.cmake
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" len)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" body "${body}")
file(WRITE "${OUTPUT}" "/* Generated from ${INPUT}; do not edit. */\nconst char ${NAME}[] = {\n${body}0x00};\n")
