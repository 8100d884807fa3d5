#pragma once
// Generated training iterations (issue 16 property tests): small TP x PP x DP jobs written as
// loadable scenarios, run with models/executor, and the iteration properties; also the compute
// model's clock property over generated kernels.

#include <string>
#include <vector>

#include "tests/properties/property_harness.h"

namespace traincast::properties {

/// One generated training job.
struct TrainDraw {
  std::string id;
  std::string node_template = "dgx_h100";
  int num_nodes = 1;
  std::string nic;        ///< "" = the template's
  int nics_per_node = 0;  ///< 0 = the template's
  int nodes_per_leaf = 32;
  double oversubscription = 1.0;
  int num_layers = 4, hidden_size = 1024, num_attention_heads = 16, seq_length = 1024, vocab_size = 32000;
  int tp = 1, pp = 1, dp = 1;
  int micro_batch_size = 1, global_batch_size = 8;
  int zero_stage = 0;
  std::string recompute = "none";
  double gpu_power_limit_w = 0;  ///< 0 = TDP
  double supply_air_c = 25;
  double airflow_fraction = 1.0;  ///< every GPU position's airflow fraction
  bool fold_symmetric = true;
  int threads = 1;
  /// cluster.overrides clock_factor of the last GPU of the last node (1 = no override).
  double last_gpu_clock_factor = 1.0;  ///< options.threads (op-graph generation workers)
};

/// The draw as a loadable scenario textproto.
std::string scenario_text(const TrainDraw& d);

/// What one iteration gave.
struct TrainOutcome {
  double iteration_s = 0;
  double peak_bytes = 0;
  /// Largest relative gap between a GPU's reported energy and the integral of its traced power
  /// over the iteration, and between the report's energy and average power x time.
  double energy_error = 0;
  std::string energy_detail;
  int throttled_gpus = 0;  ///< GPUs the thermal slowdown held in the last iteration
  /// Mean average power of the GPUs whose heat reaches another GPU's inlet (every row of the
  /// chassis airflow but the last) [W]; 0 when the node has one airflow row.
  double upstream_w = 0;
};
/// Loads scenario_text(d) with models/io and runs models::simulate_training (with a trace when
/// `energy` is true, to integrate the power counters). Results are memoised by scenario text.
TrainOutcome run_train(const TrainDraw& d, bool energy = false);

/// Training group: small GPT-style models on 1-4 nodes of DGX A100/H100 or 2-socket PCIe servers.
TrainDraw draw_train(int index);

/// Runs every iteration property on `count` draws of group "train", shrinking each violation.
Tally run_train_group(int count);

/// Clock group: the compute model's kernel time never rises with the clock, over generated
/// kernels (GEMM shapes, attention, memory-bound), GPUs and precisions: `count` draws.
Tally run_clock_group(int count);

}  // namespace traincast::properties
