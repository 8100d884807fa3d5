#pragma once
// What a job meets beyond one iteration and around the GPUs: storage, reliability, cost, power and
// thermal settings (DESIGN §4.5). Storage, reliability and cost are optional: absent = not modelled.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace traincast::models {

/// Where data is read from or checkpoints are written to.
enum class StorageTarget { local, shared_fs };

/// RAID layout of a node's local drives.
enum class RaidLevel { raid0, raid1, raid10, raid5, raid6 };

/// RAID controller cache policy. write_back: a write is acknowledged once in the controller's
/// DRAM cache, which coalesces sequential writes into full stripes; write_through: acknowledged
/// once on the drives, every write committed as it comes (parity RAID pays read-modify-write).
enum class WriteCachePolicy { write_back, write_through };

/// synchronous: training stops while the checkpoint is written; asynchronous: training stops only
/// for the device-to-host snapshot, the write runs in the background (e.g. PyTorch DCP async_save).
enum class CheckpointMode { synchronous, asynchronous };

/// A node's local drives (NVMe) and, optionally, a hardware RAID controller in front of them.
struct LocalStorageSpec {
  /// Data drives per node. Default 8: DGX H100 has 8 x 3.84 TB U.2 NVMe data-cache drives
  /// (NVIDIA DGX H100 User Guide, hardware overview).
  int drives = 8;
  /// Sequential read/write per drive [GB/s]. Defaults 7.0 / 3.8: Samsung PM1733 3.84 TB
  /// (Samsung PM1733 datasheet: up to 7,000 MB/s read, 3,800 MB/s write).
  double drive_read_gb_per_s = 7.0;
  double drive_write_gb_per_s = 3.8;
  /// Default raid0: DGX OS stripes the data drives into one RAID-0 volume (DGX H100 User Guide).
  RaidLevel raid = RaidLevel::raid0;
  /// A hardware RAID controller sits between host and drives (its cache and host link apply).
  /// Default false: Linux software RAID (mdadm), no controller cache.
  bool hardware_controller = false;
  WriteCachePolicy cache_policy = WriteCachePolicy::write_back;
  /// Controller DRAM write cache [bytes]. Default 8 GiB: Broadcom MegaRAID 9670W-16i (8 GB DDR4).
  double controller_cache_bytes = 8.0 * 1073741824.0;
  /// Controller host link [GB/s]. Default 31.5: PCIe 4.0 x16 per direction after encoding
  /// (the 9670W-16i is a PCIe 4.0 x16 card).
  double controller_gb_per_s = 31.5;
  bool operator==(const LocalStorageSpec&) const = default;
};

/// A shared (parallel/network) file system seen by every node.
struct SharedFsSpec {
  /// Aggregate read/write bandwidth of the file system [GB/s]. Defaults 90 / 65: one DDN
  /// AI400X2 appliance (DDN A3I AI400X2 datasheet, 2023: 90 GB/s read, 65 GB/s write).
  double aggregate_read_gb_per_s = 90.0;
  double aggregate_write_gb_per_s = 65.0;
  /// Per-node client bandwidth [GB/s] (storage NICs). Default 50: two 200 Gb/s storage ports
  /// per DGX H100 (NVIDIA DGX SuperPOD H100 reference architecture, storage fabric).
  double per_node_gb_per_s = 50.0;
  bool operator==(const SharedFsSpec&) const = default;
};

struct StorageSpec {
  LocalStorageSpec local;
  SharedFsSpec shared_fs;
  /// Where the data loader reads training samples. Default shared_fs.
  StorageTarget data_source = StorageTarget::shared_fs;
  /// Bytes read per token [bytes]; 0 = token IDs as Megatron-LM's indexed datasets store them:
  /// uint16 (2 B) when vocab_size < 65,500, else int32 (4 B) (megatron/core/datasets/
  /// indexed_dataset.py, DType.optimal_dtype).
  double bytes_per_token = 0.0;
  /// Extra bytes read per sequence (images, raw documents, metadata) [bytes]. Default 0.
  double bytes_per_sample = 0.0;
  /// Where checkpoints are written (and read back on restart). Default shared_fs.
  StorageTarget checkpoint_target = StorageTarget::shared_fs;
  CheckpointMode checkpoint_mode = CheckpointMode::synchronous;
  /// Training time between checkpoints [s]; 0 = the Young/Daly optimum from the failure rates
  /// (reliability's, or its defaults when reliability is absent).
  double checkpoint_interval_s = 0.0;
  /// Device-to-host copy per GPU for the asynchronous snapshot [GB/s]; 0 = the node template's
  /// PCIe link per direction.
  double snapshot_gb_per_s = 0.0;
  bool operator==(const StorageSpec&) const = default;
};

/// One failure cause: rate per GPU-hour (scales with GPUs) and/or per node-hour (with nodes).
struct FailureRate {
  std::string cause;
  double per_gpu_hour = 0.0;   ///< failures per GPU-hour, >= 0
  double per_node_hour = 0.0;  ///< failures per node-hour, >= 0
  bool operator==(const FailureRate&) const = default;
};

struct ReliabilitySpec {
  /// Failure causes; empty = the defaults derived from Llama 3 Table 5 (models/reliability/).
  std::vector<FailureRate> failures;
  /// Work between checkpoints [s]; 0 = Daly's optimum (falls back to storage.checkpoint_interval_s
  /// when that is set).
  double checkpoint_interval_s = 0.0;
  /// Time from an interruption to training again, besides reading the checkpoint back [s]:
  /// detection, rescheduling onto spares, process start, NCCL initialisation. Default 600 s:
  /// an assumption (the phases as in Kokolis et al., arXiv:2410.21680, §V ETTR model); see
  /// scenarios/README.md for its effect.
  double restart_overhead_s = 600.0;
  /// Wall-clock window [s]; 0 = until train_tokens are trained (then train_tokens must be set).
  /// When both are given a draw stops at whichever comes first.
  double horizon_s = 0.0;
  int monte_carlo_draws = 1000;  ///< >= 1
  std::uint64_t seed = 1;        ///< Monte-Carlo seed; same seed, same report
  bool operator==(const ReliabilitySpec&) const = default;
};

struct CostSpec {
  /// Purchase price per node [USD]; 0 = the default for the GPU (models/cost/cost_model.h).
  double node_price_usd = 0.0;
  /// Per fabric switch [USD]; 0 = the default: USD 36,000 for a 64-port 400 Gb/s InfiniBand switch
  /// (FS.com, Aug 2024), per port for a switch of other radix (cluster.fabric.leaf_ports):
  /// models::default_switch_price_usd.
  double switch_price_usd = 0.0;
  /// Per node-to-leaf or switch-to-switch link incl. both transceivers [USD]; default 2,560
  /// (public H100 cluster cost sheet, Aug 2024: USD 41.9M of cables and optics for 16,384 GPUs).
  double cable_price_usd = 2560.0;
  /// Straight-line depreciation period [years]. Default 5 (Meta 2022 10-K: servers and network
  /// equipment, 5 years).
  double amortization_years = 5.0;
  /// Upkeep (support contract, spares, repair) per year as a fraction of capex. Default 0.20
  /// (NVIDIA DGX H100 1-year support quoted at ~20% of the base price, 2024).
  double upkeep_fraction_per_year = 0.20;
  /// Electricity [USD/kWh]. Default 0.0806: U.S. industrial average 2023 (EIA, March 2024).
  double energy_price_usd_per_kwh = 0.0806;
  /// Rent price per GPU-hour [USD]; 0 = the default for the GPU (models/cost/cost_model.h).
  double cloud_price_per_gpu_hour_usd = 0.0;
  /// Fraction of the year the owned cluster does useful work (buy vs rent). Default 1.
  double utilization = 1.0;
  bool operator==(const CostSpec&) const = default;
};

/// Power settings (DESIGN §4.5; models/power/). Unset fields keep the catalog's values.
struct PowerSpec {
  /// Per-GPU power limit as `nvidia-smi -pl` sets it [W]; 0 = the GPU's TDP (no cap). Range:
  /// the GPU's idle power < limit <= TDP.
  double gpu_power_limit_w = 0.0;
  /// Facility power usage effectiveness (total facility power / IT power), >= 1. Default 1.58:
  /// the global average of the Uptime Institute Global Data Center Survey 2023.
  double pue = 1.58;
  /// Average CPU load during training as a fraction of the sockets' TDP, in [0, 1]. Default 0.5
  /// (estimate: data loader, NCCL proxy and launcher threads on a minority of cores).
  double cpu_load_fraction = 0.5;
  /// Power supplies that may fail while the node must keep running; empty = the template's
  /// (N+1 = 1). Range 0 to psu_count - 1.
  std::optional<int> psu_redundant;
  /// Override u(a) of models/power/power_model.h for memory-bound kernels and for communication,
  /// in [0, 1]; empty = the defaults there (a calibration profile may set them).
  std::optional<double> memory_bound_fraction;
  std::optional<double> comm_fraction;
  /// Whether the scenario wrote pue (protobuf field presence; --set and a sweep axis too), even at
  /// its default: a PUE the user gave is theirs, not the survey's average (the "default PUE" notes
  /// of run and compare for liquid cooling read it). Provenance, not a setting: two specs compare
  /// equal whatever it holds.
  struct Given {
    bool pue = false;
    bool operator==(const Given&) const { return true; }
  } given;
  bool operator==(const PowerSpec&) const = default;
};

enum class Cooling { air, liquid };

/// Where a run's GPUs start thermally.
enum class ThermalStart {
  steady_state,  ///< each GPU at the periodic steady state of a first pass's last iteration (a job running for hours)
  idle,          ///< each GPU at its idle steady state (a job that has just started)
};

/// Cooling settings (DESIGN §4.5; models/power/). R and C of the lumped GPU model default to the
/// values documented in models/power/power_thermal.cc per cooling kind.
struct ThermalSpec {
  Cooling cooling = Cooling::air;
  /// Supply (cold-aisle) air temperature [C]. Default 25 (inside ASHRAE's recommended 18-27 C).
  double supply_air_c = 25.0;
  /// Liquid coolant inlet temperature [C] (cooling = liquid). Default 35 (ASHRAE W32-W40 classes).
  double coolant_c = 35.0;
  /// Whether the scenario wrote supply_air_c / coolant_c (protobuf field presence; --set too),
  /// even at its default: the one of the two that the cooling ignores is warned whenever given
  /// (thermal_settings_without_effect), and a printed scenario writes it only then. Provenance,
  /// not a setting: two specs compare equal whatever it holds (a printed scenario reads back with
  /// the acting one given).
  struct Given {
    bool supply_air_c = false;
    bool coolant_c = false;
    bool operator==(const Given&) const { return true; }
  } given;
  /// Per local GPU position in every node: fraction of the design airflow reaching it, (0, 1];
  /// empty = all 1. Blocked airflow raises R as 1/fraction^0.8 (forced convection) and raises
  /// the preheat the GPU passes downstream as 1/fraction.
  std::vector<double> gpu_airflow_fraction;
  /// Junction-to-inlet thermal resistance [K/W] and heat capacity [J/K]; 0 = the default.
  double r_k_per_w = 0.0;
  double c_j_per_k = 0.0;
  /// Heat one rack's cooling can remove [W]; 0 = unlimited. Excess heat recirculates into the
  /// rack's supply air: inlet rises by excess / (rho c_p x rack airflow).
  double rack_cooling_capacity_w = 0.0;
  /// Nodes per rack, >= 1. Default 4 (NVIDIA DGX SuperPOD H100 reference architecture: 4 DGX
  /// H100 per rack).
  int nodes_per_rack = 4;
  ThermalStart start = ThermalStart::steady_state;
  bool operator==(const ThermalSpec&) const = default;
};

}  // namespace traincast::models
