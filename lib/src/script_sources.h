// The generated half of scripts.cpp: the text of each lua/*.lua file.
#pragma once

#include "echomq/scripts.h"

namespace echomq::detail {
const char* script_source(Script s);
}
