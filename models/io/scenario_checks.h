#pragma once
// The semantic checks of a parsed scenario (scenarios/README.md, "Checks"): every rule that the
// schema's types cannot say, each error positioned by a Checker. Internal to models/io.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/io/scenario_io.h"
#include "models/io/scenario_io_internal.h"
#include "models/spec/scenario.h"

namespace traincast::proto {
class Scenario;
}  // namespace traincast::proto

namespace traincast::models {
class Cluster;
}  // namespace traincast::models

namespace traincast::io::detail {

/// Largest cluster the simulator takes (2^20 GPUs: a million-GPU cluster builds about ten million
/// link resources, a few GB of memory).
inline constexpr std::int64_t kMaxGpus = std::int64_t{1} << 20;

/// Every semantic rule of the schema (scenarios/README.md, "Checks"). Appends to `k`'s errors, in
/// the order: text fields, cluster, power and thermal, then (when check_workload) model,
/// parallelism, MoE, encoder, dropout, context parallelism, data loader, GPU count, training,
/// LoRA, offload, options, storage/reliability/cost; without check_workload only options follow
/// the cluster, and storage/reliability/cost when check_sections (a job list without a workload of
/// its own, load_impl's workload_given). May normalise `s` (sequence_parallel off when tp = 1, as
/// Megatron-LM does); appends the checks' positioned warnings to s.input_warnings.
void check_scenario(models::Scenario& s, Checker& k, bool check_workload, bool check_sections = false);

/// "invalid value N (expected ...)" for each field path in `bad_enums` (to_struct's enum numbers
/// that name no value), positioned in `message`.
void enum_errors(const std::vector<std::string>& bad_enums, const traincast::proto::Scenario& message, Checker& k);

/// Overrides a cluster-only command would ignore (see load_cluster_scenario_file).
void unused_override_errors(const std::map<std::string, std::string>& override_origins, const ClusterUse& use,
                            Checker& k);

// The per-section checks check_scenario calls, defined in scenario_checks_workload.cc and
// scenario_checks_operations.cc. Each appends to `k`'s errors.

/// Power and cooling fields (scenarios/README.md, "power" and "thermal"). node, gpu: null when the
/// cluster names an unknown one (then the checks that need them are skipped).
void check_power_thermal(const models::Scenario& s, Checker& k, const models::NodeTemplate* node,
                         const models::GpuSpec* gpu);

/// Checks of the storage, reliability and cost sections (issue 4). gpu_name: the cluster's GPU,
/// for the default prices.
/// tp * pp * dp (times cp when used) is the cluster's GPU count, and that count is within the
/// simulator's range (2^20 GPUs). node: the cluster's node template, not null.
void check_gpu_count(const models::Scenario& s, const models::NodeTemplate* node, Checker& k);
void check_storage_reliability_cost(const models::Scenario& s, const std::string& gpu_name, int physical_gpus,
                                    Checker& k);

/// The warning for Scenario::input_warnings when the file writes a `storage { local { ... } }`
/// block that nothing reads or writes (neither storage.data_source nor storage.checkpoint_target is
/// local, both shared_fs by default): one line, "FILE:LINE:COL: storage.local: has no effect:
/// ...", positioned at the block. Empty otherwise, and when an override set a local field (that is
/// an error of check_storage_reliability_cost's). --print-scenario leaves such a block out while it
/// holds the defaults (scenario_convert.cc), so a printed scenario reloads without it.
std::vector<std::string> unused_local_storage_notes(const models::Scenario& s, const Checker& k);

/// LoRA fields (workload.training.lora_rank, lora_target_modules): a rank from 0 to hidden_size,
/// known target names, and a model the LoRA programs cover (dense decoder).
void check_lora(const models::Scenario& s, Checker& k);

/// CPU offload fields (workload.offload.*): finite bandwidth and efficiency, ZeRO with DP, and a
/// host-memory figure for the node's CPU. node: null for an unknown node template.
void check_offload(const models::Scenario& s, const models::NodeTemplate* node, Checker& k);

/// Encoder fields (workload.model.architecture, mlm_prediction_fraction, max_position_embeddings).
void check_encoder(const models::Scenario& s, Checker& k);

/// The elementwise ops: dropout probabilities (workload.model.attention_dropout, hidden_dropout):
/// finite, in [0, 1); workload.training.elementwise_fusion eager (its kernel list is torchtitan's
/// dense Llama block, models/workload/eager_elementwise.h) only on a dense transformer decoder
/// with a gated MLP and without multi-head latent attention.
void check_elementwise_ops(const models::Scenario& s, Checker& k);

/// workload.parallel.activation_layout batch_first (PyTorch DTensor's [b, s, h] sequence
/// parallelism) is refused with Transformer Engine's userbuffers overlap (tp_comm_overlap with
/// tp_overlap_implementation userbuffers and tp > 1), which runs Megatron's seq-first layout.
void check_activation_layout(const models::Scenario& s, Checker& k);

// The checks of scenario_checks_hardware.cc.

/// cluster.overrides (models/hardware/element_overrides.h): a selector that names something on
/// the cluster (else the error names what exists), and exactly the factor it takes, in (0, 1].
/// The cluster is built (without the overrides) to resolve the selectors; when that fails for
/// another field, only the factors are checked (that field has its own error). A cluster beyond
/// the simulator's range (GPUs or network resources; node: the cluster's node template, may be
/// null) is not built and its overrides are not checked: its size has its own error. Returns the
/// warnings of override_overlap_notes when every override passed.
std::vector<std::string> check_element_overrides(const models::Scenario& s, const models::NodeTemplate* node,
                                                 Checker& k);

/// One warning per pair of cluster.overrides entries naming an element with the same field
/// (models::override_overlaps), positioned at the later entry: "FILE:L:C: cluster.overrides[1]:
/// clock_factor 0.9 on "node3/gpu5" and cluster.overrides[0] (clock_factor 0.8 on "node3") both
/// name node3/gpu5: the later one acts there, clock_factor 0.9, as overrides apply in order
/// (expected each element named once per field)"; a repeated entry, a same value, and a factor on
/// a failed link or NIC (failed acts, in either order) say so. `cluster`: built without the
/// overrides, as check_element_overrides builds it.
std::vector<std::string> override_overlap_notes(const models::Scenario& s, const models::Cluster& cluster,
                                                const Checker& k);

/// cluster.node_group[i] (issue 20): a known template and GPU that fits it, num_nodes >= 1, every
/// group's board of the first group's shape and NIC (one fabric); node_template, num_nodes and gpu
/// not set apart from the groups (or equal to what the groups give). Errors at the group's field.
void check_node_groups(const models::Scenario& s, Checker& k);

/// workload.parallel.pipeline_stage_layers: pp entries, each >= 1, summing to num_layers, with the
/// 1F1B schedule (not interleaved). Errors at the field.
void check_pipeline_stage_layers(const models::Scenario& s, Checker& k);

/// cluster.fabric.sharp: true only on a switched fabric (fat_tree, rail_optimized) with
/// InfiniBand HDR or later NICs (the scenario's NIC, else the template's; `node` null: the NIC
/// is not checked), else an error at the field saying what was expected.
void check_sharp(const models::Scenario& s, const models::NodeTemplate* node, Checker& k);

/// cluster.nvlink_bridge_gpus, when set: models::bridge_group_problem for the template and GPU
/// (either null: not checked, their own fields have the error), else an error at the field.
void check_nvlink_bridge(const models::Scenario& s, const models::NodeTemplate* node, const models::GpuSpec* gpu,
                         Checker& k);

/// job[i] (docs/cluster.md): gpus > 0 and a multiple of the node's GPUs (`node` null: not
/// checked), arrival_s >= 0, exactly one of tokens, duration_s and alone_duration_s, > 0. A job larger than the
/// cluster is not an error: `traincast cluster` reports it as never fitting.
void check_jobs(const models::Scenario& s, const models::NodeTemplate* node, Checker& k);

/// cluster.gpu fits the node template (models::gpu_fit_problem), else an error at cluster.gpu (at
/// cluster.node_template when only that was overridden) naming both, what is expected, the GPUs
/// that fit the template and the templates the GPU fits. node, gpu: null when unknown (skipped).
void check_gpu_fits_node(const models::Scenario& s, const models::NodeTemplate* node, const models::GpuSpec* gpu,
                         Checker& k);

/// Kernels the GPU cannot run: workload.training.flash_attention unset on a GPU without fused
/// attention (models::runs_flash_attention) becomes false; set true there, an error. gpu: null
/// when unknown (skipped). fp8 is refused by check_training (no fp8 peak on the GPU).
void resolve_kernels(models::Scenario& s, const models::GpuSpec* gpu, Checker& k);

/// For cluster-only commands (`traincast chakra run` times compute nodes at
/// workload.training.precision): a precision set there has a dense peak on the GPU (fp8 needs
/// sm89+). Unset, it is not checked (the command's default is not the user's ask).
void check_cluster_only_precision(const models::Scenario& s, const models::GpuSpec* gpu, Checker& k);

/// Megatron-LM's divisibility asserts not checked elsewhere: sequence parallelism needs
/// (seq_length / cp) % tp == 0; expert parallelism refuses fp16. Run after sequence_parallel is
/// normalised (off with tp = 1).
void check_megatron_divisibility(const models::Scenario& s, Checker& k);

/// Mixture-of-experts and expert-parallel fields (workload.model.num_experts ..., parallel.ep).
void check_moe(const models::Scenario& s, Checker& k);

/// Attention shape (scenario_checks_attention.cc): head_dim, the multi-head latent attention
/// widths (only with multi_latent_attention; kv_lora_rank, qk_nope_head_dim, v_head_dim >= 1; no
/// GQA groups, head_dim, LoRA or CP with it), sliding_window and its pattern (0 or >= 2; decoders;
/// no CP), moe_expert_imbalance in [1, num_experts / moe_top_k].
void check_attention(const models::Scenario& s, Checker& k);

/// The expert-parallel all-to-all's kind (workload.training.ep_all_to_all) and node-limited
/// routing (moe_max_nodes_per_token): deepep only with num_experts > 0, ep > 1 and dropless routing;
/// the node limit only with num_experts > 0, and its nodes holding >= moe_top_k experts (the EP
/// group's ep x tp consecutive GPUs on nodes of node->gpus_per_node; node null: not checked).
void check_ep_all_to_all(const models::Scenario& s, const models::NodeTemplate* node, Checker& k);

/// The GPUs of the cluster's node groups (each group's gpu, else its template's), each once, in
/// group order; unknown ones left out (check_node_groups names them). Empty without node groups.
std::vector<const models::GpuSpec*> node_group_gpus(const models::Scenario& s);

/// Context parallelism (workload.parallel.cp): ring attention over dense transformers.
void check_context_parallel(const models::Scenario& s, Checker& k);

/// The data loader's input copies (workload.data_loader): ResNet family only.
void check_data_loader(const models::Scenario& s, Checker& k);

/// ResNet fields (workload.model.family: resnet): depth, resolution, classes; no transformer
/// shape fields; data parallel only (DDP).
void check_resnet(const models::Scenario& s, Checker& k);

}  // namespace traincast::io::detail
