// Scratch file for the layout.arrows self-test: hardware/ sits below executor/, so this include runs
// against the module graph and check_arrows.py must refuse it.
#include "models/executor/training_run.h"
