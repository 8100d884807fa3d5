#pragma once
// Moved: models/spec/report.h (temporary forwarding header during the layout step).
#include "models/spec/report.h"
