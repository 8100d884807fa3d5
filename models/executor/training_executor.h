#pragma once
// Public entry point of the training executor: runs one training job on the engine, building
// every simulated GPU group's op graph (compute stream + TP/PP/DP communication streams with
// their dependencies) and executing it, so overlap, pipeline bubbles and exposed communication
// come out of the simulation (DESIGN.md §1, §3).
// Three pieces, so front ends can stop in between (e.g. export the graph as a Chakra trace):
// build_training_graph (graph_builder.h) -> run_op_graph (op_graph.h) -> training_report
// (training_report.h); simulate_training (training_run.h) does all, with the power/thermal
// model's setup from power_thermal_setup.h. The job's layout: parallel_layout.h.

#include "models/executor/graph_builder.h"
#include "models/executor/op_graph.h"
#include "models/executor/override_effects.h"
#include "models/executor/power_thermal_setup.h"
#include "models/executor/training_graph.h"
#include "models/executor/training_report.h"
#include "models/executor/training_run.h"
