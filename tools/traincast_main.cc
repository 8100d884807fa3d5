// traincast: predict a deep-learning training job on a GPU cluster (see README.md).
#include <iostream>

#include "tools/cli/commands.h"

int main(int argc, char** argv) { return traincast::cli::main_dispatch(argc, argv, std::cout, std::cerr); }
