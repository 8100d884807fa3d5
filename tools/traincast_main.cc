// traincast: predict a deep-learning training job on a GPU cluster (see README.md).
#include <iostream>

#include "tools/cli/commands.h"

int main(int argc, char** argv) {
  const int status = traincast::cli::main_dispatch(argc, argv, std::cout, std::cerr);
  // A report that could not be written (a full disk, /dev/full) is not a success. A pipe closed by
  // its reader ends the process by SIGPIPE before this (the default action, as for cat or grep).
  std::cout.flush();
  if (status == 0 && !std::cout) {
    std::cerr << "traincast: cannot write the output to standard output (disk full or stream closed)\n";
    return 1;
  }
  return status;
}
