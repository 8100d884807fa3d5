#pragma once
// Moved: models/calibration/calibration_profile.h (temporary forwarding header during the layout step).
#include "models/calibration/calibration_profile.h"
