// The integer fields' ranges. See int_ranges.h.

#include "models/io/int_ranges.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>

#include "models/io/scenario_io.h"

namespace traincast::io::detail {
namespace pb = google::protobuf;

namespace {

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

/// The bounds of scenarios/README.md, "Limits": beyond them a run would not fit in memory or time.
constexpr std::string_view kSimulatorRange = ": the simulator's range";

/// Largest workload.training.global_batch_size [sequences]: 2^24, about 200x the largest published
/// global batches (ResNet-50 on ImageNet at 81,920 images, Yamazaki et al. 2019, arXiv:1903.12650;
/// LLM pretraining at 16M tokens = 2,048 sequences of 8,192, Llama 3 405B, arXiv:2407.21783;
/// DeepSeek-V3 at 15,360 sequences, arXiv:2412.19437). With seq_length <= 2^24 an iteration holds
/// at most 2^48 tokens, so token and FLOP counts stay far inside a double's exact range.
constexpr std::int64_t kMaxGlobalBatchSize = std::int64_t{1} << 24;
constexpr std::string_view kGlobalBatchWhy =
    ": about 200x the largest published global batches: 81,920 images for ResNet-50 (Yamazaki et al. 2019), "
    "2,048 x 8,192-token sequences for Llama 3 405B (Meta 2024)";

/// Largest workload.model.hidden_size (2^20; the largest published, PaLM 540B, is 18,432), and so
/// of a LoRA rank, which is at most hidden_size.
constexpr std::int64_t kMaxHiddenSize = 1048576;

/// NCCL's MAXCHANNELS (src/include/device.h: 32 in 2.20, 64 in later releases) bounds
/// cluster.collectives.min_channels / max_channels; NCCL clamps larger values with a warning, the
/// simulator refuses them. 0 = NCCL's default.
constexpr std::int64_t kNcclMaxChannels = 64;
constexpr std::string_view kChannelsWhy = ": 0 for NCCL's default, else a channel count up to NCCL's MAXCHANNELS";

std::string threads_note() { return ": " + std::string(kThreadsWhy); }

/// The indices of a node template's written PCIe tree (docs/hardware.md, "User-described nodes"):
/// bounded by the template's own counts, which complete_node_template checks; here only whole
/// numbers >= 0 (a negative socket or switch would read as "not set", node_template_io.cc).
constexpr std::string_view kSocketIndex = ": a socket of the node, below sockets";
constexpr std::string_view kGpuIndex = ": a GPU of the node, below gpus_per_node";
constexpr std::string_view kNicIndex = ": a NIC of the node, below nics";

/// Full proto field name -> range. Fields not here take their type's range.
const std::map<std::string, IntRange, std::less<>>& table() {
  static const std::string threads = threads_note();
  static const std::map<std::string, IntRange, std::less<>> t = {
      // Cluster.
      {"traincast.proto.ClusterSpec.num_nodes", {1, kInt32Max, ""}},
      // At most 32: more than any server's PCIe slots carry (a DGX H100 has 8 compute NICs, DGX
      // H100 user guide); a larger count only lengthens NCCL's search.
      {"traincast.proto.ClusterSpec.nics_per_node",
       {0, 32, ", at least 1 when num_nodes > 1; at most 32 compute NICs per server"}},
      // NVIDIA's NVLink bridges join 2 or 4 cards (H200 datasheet, H200 NVL: "2- or 4-way").
      {"traincast.proto.ClusterSpec.nvlink_bridge_gpus", {2, 4, ": 2-way or 4-way NVLink bridges"}},
      {"traincast.proto.FabricSpec.switch_latency_ns", {0, 1000000000, kSimulatorRange}},
      {"traincast.proto.FabricSpec.nodes_per_leaf", {1, kInt32Max, ""}},
      {"traincast.proto.FabricSpec.tiers", {2, 3, ""}},
      {"traincast.proto.FabricSpec.leaves_per_pod", {1, kInt32Max, ""}},
      // 2^20 ports: far above any leaf switch (a 64-port radix today), below int overflow in port sums.
      {"traincast.proto.FabricSpec.leaf_up_ports", {0, 1 << 20, ""}},
      {"traincast.proto.FabricSpec.leaf_ports", {0, 1 << 20, ""}},
      {"traincast.proto.FabricSpec.torus_dims", {1, kInt32Max, ""}},
      {"traincast.proto.ClusterSpec.NodeGroup.num_nodes", {1, kInt32Max, ""}},
      {"traincast.proto.ParallelSpec.pipeline_stage_layers", {1, kInt32Max, ""}},
      {"traincast.proto.CollectiveSpec.min_channels", {0, kNcclMaxChannels, kChannelsWhy}},
      {"traincast.proto.CollectiveSpec.max_channels", {0, kNcclMaxChannels, kChannelsWhy}},
      {"traincast.proto.PowerSpec.psu_redundant", {0, kInt32Max, ", below the node's number of power supplies"}},
      {"traincast.proto.ThermalSpec.nodes_per_rack", {1, 1000, kSimulatorRange}},
      // A node template's written PCIe tree.
      // A node template's counts, as complete_node_template (models/hardware/node_template_text.cc)
      // checks them; the bounds that depend on other fields are named in the note.
      {"traincast.proto.NodeTemplate.gpus_per_node", {1, 1024, ": the simulator's range"}},
      {"traincast.proto.NodeTemplate.bridge_gpus", {2, 4, ": 2-way or 4-way NVLink bridges"}},
      {"traincast.proto.NodeTemplate.nvswitches", {0, kInt32Max, ": at most one per GPU NVLink port", true}},
      {"traincast.proto.NodeTemplate.nics",
       {0, kInt32Max, ": at most 16, the most a shipping GPU server has, or 2 per GPU", true}},
      {"traincast.proto.NodeTemplate.sockets", {1, kInt32Max, ": at most 8, or one CPU per GPU", true}},
      {"traincast.proto.NodeTemplate.pcie_switches", {0, kInt32Max, ": at most one per GPU", true}},
      {"traincast.proto.NodeTemplate.pcie_generation", {1, 6, ""}},
      {"traincast.proto.NodeTemplate.pcie_lanes", {1, 16, ", one of 1, 2, 4, 8 or 16"}},
      {"traincast.proto.NodeTemplate.Nvlink.links", {1, kInt32Max, ": at most the GPU's NVLink links", true}},
      {"traincast.proto.NodeTemplate.PcieSwitch.socket", {0, kInt32Max, kSocketIndex, true}},
      {"traincast.proto.NodeTemplate.PcieSwitch.upstream_switch",
       {0, kInt32Max, ": the index of another pcie_switch entry", true}},
      // PCIe generations 1 to 6 and link widths x1 to x16 (PCI-SIG); 0 takes the node's link.
      {"traincast.proto.NodeTemplate.PcieSwitch.uplink_generation", {0, 6, ": 0 for the node's pcie_generation"}},
      {"traincast.proto.NodeTemplate.PcieSwitch.uplink_lanes",
       {0, 16, ": 0 for the node's pcie_lanes, else 1, 2, 4, 8 or 16"}},
      {"traincast.proto.NodeTemplate.PcieSwitch.gpus", {0, kInt32Max, kGpuIndex, true}},
      {"traincast.proto.NodeTemplate.PcieSwitch.nics", {0, kInt32Max, kNicIndex, true}},
      {"traincast.proto.NodeTemplate.RootPorts.socket", {0, kInt32Max, kSocketIndex, true}},
      {"traincast.proto.NodeTemplate.RootPorts.gpus", {0, kInt32Max, kGpuIndex, true}},
      {"traincast.proto.NodeTemplate.RootPorts.nics", {0, kInt32Max, kNicIndex, true}},
      {"traincast.proto.NodeTemplate.NicGpus.nic", {0, kInt32Max, kNicIndex, true}},
      {"traincast.proto.NodeTemplate.NicGpus.gpus", {0, kInt32Max, kGpuIndex, true}},
      // Model.
      {"traincast.proto.ModelSpec.num_layers", {1, 100000, kSimulatorRange}},
      {"traincast.proto.ModelSpec.hidden_size", {1, kMaxHiddenSize, kSimulatorRange}},
      {"traincast.proto.ModelSpec.num_attention_heads", {1, kInt32Max, ""}},
      {"traincast.proto.ModelSpec.num_query_groups", {0, kInt32Max, ", 0 for plain multi-head attention"}},
      {"traincast.proto.ModelSpec.ffn_hidden_size", {0, kInt32Max, ", 0 for 4 * hidden_size"}},
      {"traincast.proto.ModelSpec.vocab_size", {1, 16777216, kSimulatorRange}},
      {"traincast.proto.ModelSpec.make_vocab_size_divisible_by", {1, 16777216, kSimulatorRange}},
      {"traincast.proto.ModelSpec.seq_length", {1, 16777216, kSimulatorRange}},
      {"traincast.proto.ModelSpec.num_experts", {0, 65536, kSimulatorRange}},
      {"traincast.proto.ModelSpec.moe_top_k", {1, kInt32Max, ", at most num_experts"}},
      {"traincast.proto.ModelSpec.moe_ffn_hidden_size", {0, kInt32Max, ", 0 for ffn_hidden_size"}},
      {"traincast.proto.ModelSpec.num_shared_experts", {0, 65536, kSimulatorRange}},
      {"traincast.proto.ModelSpec.first_dense_layers", {0, kInt32Max, ", below num_layers"}},
      {"traincast.proto.ModelSpec.head_dim", {0, 65536, ", 0 for hidden_size / num_attention_heads"}},
      {"traincast.proto.ModelSpec.q_lora_rank", {0, 65536, ", 0 for queries projected from hidden_size"}},
      {"traincast.proto.ModelSpec.kv_lora_rank", {0, 65536, kSimulatorRange}},
      {"traincast.proto.ModelSpec.qk_nope_head_dim", {0, 65536, kSimulatorRange}},
      {"traincast.proto.ModelSpec.qk_rope_head_dim", {0, 65536, kSimulatorRange}},
      {"traincast.proto.ModelSpec.v_head_dim", {0, 65536, kSimulatorRange}},
      {"traincast.proto.ModelSpec.sliding_window", {0, 16777216, ", 0 for full attention in every layer"}},
      {"traincast.proto.ModelSpec.sliding_window_pattern",
       {0, 65536, ": 0 for every layer windowed, or N >= 2 for every N-th layer global"}},
      {"traincast.proto.ModelSpec.image_size", {32, 4096, kSimulatorRange}},
      {"traincast.proto.ModelSpec.num_classes", {1, 1000000, kSimulatorRange}},
      // Parallelism and training.
      {"traincast.proto.ParallelSpec.tp", {1, kInt32Max, ""}},
      {"traincast.proto.ParallelSpec.pp", {1, kInt32Max, ""}},
      {"traincast.proto.ParallelSpec.dp", {1, kInt32Max, ""}},
      {"traincast.proto.ParallelSpec.virtual_stages", {1, kInt32Max, ""}},
      {"traincast.proto.ParallelSpec.zero_stage",
       {0, 3, ": 0 = none, 1 = optimizer state, 2 = + gradients, 3 = + parameters sharded over DP"}},
      {"traincast.proto.ParallelSpec.ep", {1, kInt32Max, ""}},
      {"traincast.proto.ParallelSpec.cp", {1, 65536, kSimulatorRange}},
      {"traincast.proto.TrainingSpec.global_batch_size", {1, kMaxGlobalBatchSize, kGlobalBatchWhy}},
      {"traincast.proto.TrainingSpec.micro_batch_size", {1, kMaxGlobalBatchSize, kGlobalBatchWhy}},
      {"traincast.proto.TrainingSpec.moe_max_nodes_per_token", {0, 65536, ", 0 for no node limit"}},
      {"traincast.proto.TrainingSpec.lora_rank",
       {0, kMaxHiddenSize, ": 0 for full training, or a LoRA rank up to hidden_size"}},
      {"traincast.proto.OptionsSpec.iterations", {1, 1000, kSimulatorRange}},
      {"traincast.proto.OptionsSpec.threads", {0, kMaxThreads, threads}},
      // Storage and reliability.
      {"traincast.proto.LocalStorageSpec.drives", {1, 1024, kSimulatorRange}},
      {"traincast.proto.ReliabilitySpec.monte_carlo_draws", {1, 1000000, kSimulatorRange}},
      // Validation cases.
      {"traincast.proto.ValidationCases.NcclTests.run", {0, kInt32Max, ""}},
      // Calibration profiles and measurements.
      {"traincast.proto.CollectiveFitSpec.num_ranks", {2, kInt32Max, ""}},
      {"traincast.proto.ProfileSystem.num_nodes", {0, 1000000, ": 0 for a GPU base"}},
      {"traincast.proto.CollectiveMeasurement.num_ranks", {1, kInt32Max, ""}},
      {"traincast.proto.PowerSample.gpu", {0, kInt32Max, ": a device index"}},
  };
  return t;
}

IntRange type_range(const pb::FieldDescriptor* field) {
  using F = pb::FieldDescriptor;
  switch (field->cpp_type()) {
    case F::CPPTYPE_INT32:
      return {std::numeric_limits<std::int32_t>::min(), kInt32Max, ""};
    case F::CPPTYPE_UINT32:
      return {0, std::numeric_limits<std::uint32_t>::max(), ""};
    case F::CPPTYPE_UINT64:
      return {0, std::numeric_limits<std::int64_t>::max(), ""};
    default:
      return {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), ""};
  }
}

bool has_int_range(const pb::FieldDescriptor* field) { return table().count(field->full_name()) > 0; }

}  // namespace

std::vector<std::string> int_range_field_names() {
  std::vector<std::string> out;
  for (const auto& entry : table()) out.push_back(entry.first);
  return out;
}

IntRange int_range(const pb::FieldDescriptor* field) {
  const auto& t = table();
  if (const auto it = t.find(field->full_name()); it != t.end()) return it->second;
  return type_range(field);
}

std::string expected_integer(const pb::FieldDescriptor* field) {
  if (!has_int_range(field)) {
    switch (field->cpp_type()) {
      case pb::FieldDescriptor::CPPTYPE_INT32:
        return "an integer in [-2147483648, 2147483647]";
      case pb::FieldDescriptor::CPPTYPE_UINT32:
        return "an integer in [0, 4294967295]";
      case pb::FieldDescriptor::CPPTYPE_UINT64:
        return "an integer in [0, 18446744073709551615]";
      default:
        return "an integer in [-9223372036854775808, 9223372036854775807]";
    }
  }
  const IntRange r = int_range(field);
  if (r.open_above) return "a whole number >= " + std::to_string(r.minimum) + std::string(r.note);
  return "an integer from " + std::to_string(r.minimum) + " to " + std::to_string(r.maximum) + std::string(r.note);
}

bool is_integer_literal(std::string_view s) {
  std::size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
  if (i >= s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

std::string octal_literal_problem(std::string_view literal) {
  const std::string_view digits = literal.substr(!literal.empty() && literal[0] == '-' ? 1 : 0);
  // Hexadecimal (0x2), which protobuf's text format reads as 2 where 02 was refused (session 36).
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') &&
      digits.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string_view::npos) {
    const std::string hex(digits.substr(2));
    errno = 0;
    const unsigned long long v = std::strtoull(hex.c_str(), nullptr, 16);
    std::string out(literal);
    out += " is hexadecimal (expected a decimal number";
    if (errno == 0) out += std::string(", e.g. ") + (literal[0] == '-' ? "-" : "") + std::to_string(v);
    return out + ")";
  }
  if (digits.size() < 2 || digits[0] != '0' || !is_integer_literal(digits)) return {};
  const std::string decimal(digits.substr(std::min(digits.find_first_not_of('0'), digits.size() - 1)));
  std::string out(literal);
  out += " has a leading zero (expected a decimal number without leading zeros, e.g. ";
  out += literal[0] == '-' ? "-" + decimal : decimal;
  if (digits.find_first_of("89") == std::string_view::npos) {
    out += "; protobuf's text format reads ";
    out += literal;
    out += " as octal ";
    out += std::to_string(std::strtoll(std::string(literal).c_str(), nullptr, 8));
  }
  return out + ")";
}

bool double_out_of_range(std::string_view literal) {
  const std::string text(literal);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return false;  // not a number
  // strtod gives inf past the largest double, 0 with ERANGE below the smallest subnormal, and a
  // subnormal (nonzero, below DBL_MIN) in between: all three refused.
  if (std::isinf(v)) return text.find_first_of("iI") == std::string::npos;
  return (v == 0 && errno == ERANGE) || (v != 0 && std::fabs(v) < std::numeric_limits<double>::min());
}

}  // namespace traincast::io::detail
