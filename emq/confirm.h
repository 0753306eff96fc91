// Asking before an operator's command deletes many jobs at once.
#pragma once

#include <string>

namespace echomq::cli {

// True when the command may go on: --yes was given, or stdin is a
// terminal and the person there answered y or yes to question. Without
// --yes and no terminal (a script, a pipe), throws Error{Invalid} saying to
// pass --yes: a script must say what it means. A "no" at the prompt returns
// false.
bool confirmed(const std::string& question, bool yes);

}  // namespace echomq::cli
