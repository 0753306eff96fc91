// fmt 9 (Debian 12's libfmt9) builds its formatter, vformat_to<char>, into
// the shared library but leaves the template implicit in format.h, so every
// unit that logs through spdlog instantiated and optimised the whole of it
// again: 80 KB of code and two thirds of such a unit's compile at -O2.
// Declared extern here (the precompiled headers include this), those units
// call the library's. fmt 10 declares it so itself; a header-only fmt has
// no library to call.
#pragma once

#include <fmt/format.h>

#if defined(SPDLOG_FMT_EXTERNAL) && !defined(FMT_HEADER_ONLY) && FMT_VERSION >= 90000 && FMT_VERSION < 100000
FMT_BEGIN_NAMESPACE
namespace detail {
extern template FMT_API void vformat_to<char>(buffer<char>&, basic_string_view<char>,
                                              basic_format_args<FMT_BUFFER_CONTEXT(type_identity_t<char>)>, locale_ref);
}  // namespace detail
FMT_END_NAMESPACE
#endif
