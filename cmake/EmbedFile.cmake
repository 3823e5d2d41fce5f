# cmake -DINPUT=file -DOUTPUT=file.inc -DSYMBOL=name -P EmbedFile.cmake
# Writes `static const unsigned char SYMBOL[] = {...};` holding INPUT's bytes.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" length)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
math(EXPR size "${length} / 2")
file(WRITE "${OUTPUT}" "// Generated from ${INPUT} by cmake/EmbedFile.cmake; ${size} bytes.\n"
     "static const unsigned char ${SYMBOL}[] = {\n${bytes}\n};\n")
