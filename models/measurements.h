#pragma once
// Moved: models/calibration/measurements.h (temporary forwarding header during the layout step).
#include "models/calibration/measurements.h"
