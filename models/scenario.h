#pragma once
// Moved: models/spec/scenario.h (temporary forwarding header during the layout step).
#include "models/spec/scenario.h"
