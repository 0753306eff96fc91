#include "confirm.h"

#include <unistd.h>

#include <iostream>

#include "echomq/errors.h"

namespace echomq::cli {

bool confirmed(const std::string& question, bool yes) {
  if (yes) return true;
  if (!::isatty(STDIN_FILENO)) {
    throw Error(ErrorKind::Invalid, "confirm",
                "stdin is not a terminal, so nobody can be asked: " + question + " Pass --yes to go on without asking");
  }
  std::cerr << "emq: " << question << " [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes" || answer == "YES";
}

}  // namespace echomq::cli
