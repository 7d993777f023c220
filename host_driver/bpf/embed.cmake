# cmake -DIN=obj -DOUT=file.cpp -DNAME=sym -P embed.cmake: the bytes of IN as
# `extern const unsigned char NAME[]; extern const size_t NAME_len;` in OUT.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR bytes "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE ${OUT} "#include <cstddef>\nextern const unsigned char ${NAME}[] = {${body}};\nextern const size_t ${NAME}_len = ${bytes};\n")
