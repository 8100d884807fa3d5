// Node templates as data (node_template_text.h): the checks a template's fields go through, and
// the reader of the built-in catalog's text (models/hardware/node_templates.textproto).

#include "models/hardware/node_template_text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/hardware/pcie_tree.h"

namespace traincast::models {
namespace {

using std::to_string;

/// Largest node a template describes: GB200/GB300 NVL72 racks hold 72 GPUs; 1,024 leaves room for
/// larger NVLink domains without letting a typo allocate millions of elements.
constexpr int kMaxGpusPerNode = 1024;

/// Most CPU sockets a node of few GPUs has: 8-socket x86 platforms (Intel Xeon Scalable "8S"
/// glueless topologies) are the largest; GPU servers ship 1 or 2. A superchip rack has one CPU per
/// one or two GPUs (GH200 1:1, GB200 NVL72 36 Grace for 72 GPUs), so the bound is the larger of
/// this and gpus_per_node.
constexpr int kMaxSockets = 8;
/// Most compute NICs a node of few GPUs carries: OCI's BM.GPU4.8 has 16 x 100 GbE for 8 A100, the
/// most of any shipping GPU server (DGX H100: 8); a one-GPU slice of such a node may see all of
/// them (NVIDIA/nccl-tests issue 232: one H100 with 4 NICs). Larger domains: 2 per GPU.
constexpr int kMaxNicsFewGpus = 16;
constexpr int kMaxNicsPerGpu = 2;
/// Fastest host link a node has, per direction: NVLink-C2C, 900 GB/s in total, 450e9 bytes/s each
/// way (NVIDIA Grace Hopper and GB200 superchip datasheets), which the superchip templates write as
/// their GPUs' "PCIe" and uplink rate; PCIe 6.0 x16 is 128e9 (PCI-SIG). 1e12 per direction leaves
/// room above both without letting a typo (1e308) through.
constexpr double kMaxHostLinkBytesPerS = 1e12;

/// NVLink ports of one NVSwitch chip by NVLink generation: gen 2, NVSwitch v1, 18 ports (NVIDIA
/// DGX-2 whitepaper); gen 3, NVSwitch v2, 36 ports (NVIDIA A100 / DGX A100 whitepaper); gen 4,
/// NVSwitch v3, 64 NVLink4 ports (NVIDIA H100 whitepaper); gen 5, the NVLink 5 switch chip, 72
/// ports (GB200 NVL72: 18 chips for 72 GPUs x 18 links). 0 for a generation without a switch.
int nvswitch_ports(int nvlink_generation) {
  switch (nvlink_generation) {
    case 2:
      return 18;
    case 3:
      return 36;
    case 4:
      return 64;
    case 5:
      return 72;
    default:
      return 0;
  }
}

/// Slowest host link a node can have when a rate is written, per direction: PCIe 1.0 x1, 2.5 GT/s
/// with 8b/10b encoding = 250e6 bytes/s (PCI-SIG PCIe 1.0a); any CPU socket link is faster.
constexpr double kMinHostLinkBytesPerS = 250e6;

/// A bandwidth field: 0 (its default meaning) or finite in [kMinHostLinkBytesPerS, most], with NaN
/// and infinity named as such. The message gives the value as written (bytes/s, the field's unit)
/// and, when positive, in GB/s, and the range in GB/s and as written: "got 1.5e+12 bytes/s = 1500
/// GB/s (expected 0 for the generation's rate, or 0.25 GB/s, PCIe 1.0 x1, to 1000 GB/s per
/// direction: 250e6 to 1e12 bytes/s)".
void check_rate(const char* field, double v, double most, const std::string& zero_means,
                std::vector<NodeTemplateProblem>& out) {
  const auto text = [](double x) {  // the shortest text that reads back as x: 1000000100000, not 1e+12
    char buf[32];
    return std::string(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
  };
  const auto engineering = [&](double x) {  // 250e6, 1e12: the bounds as a scenario writes them
    int e = 0;
    while (x >= 1000 * std::pow(10.0, e)) e += 3;
    return text(x / std::pow(10.0, e)) + "e" + to_string(e);
  };
  if (v == 0 || (v >= kMinHostLinkBytesPerS && v <= most)) return;
  constexpr double kBytesPerGb = 1e9;  // GB/s = 1e9 bytes/s, as every rate in traincast's output
  const std::string got =
      std::isfinite(v) && v > 0 ? text(v) + " bytes/s = " + text(v / kBytesPerGb) + " GB/s" : text(v);
  out.push_back({field, "got " + got + " (expected 0 for " + zero_means + ", or " +
                            text(kMinHostLinkBytesPerS / kBytesPerGb) + " GB/s, PCIe 1.0 x1, to " +
                            text(most / kBytesPerGb) + " GB/s per direction: " + engineering(kMinHostLinkBytesPerS) +
                            " to " + engineering(most) + " bytes/s)"});
}

void check_counts(const NodeTemplate& t, std::vector<NodeTemplateProblem>& out) {
  auto bad = [&](const char* field, std::string what) { out.push_back({field, std::move(what)}); };
  if (t.gpus_per_node < 1 || t.gpus_per_node > kMaxGpusPerNode)
    bad("gpus_per_node", "got " + to_string(t.gpus_per_node) + " (expected 1 to " + to_string(kMaxGpusPerNode) + ")");
  const int max_nics = std::max(kMaxNicsFewGpus, kMaxNicsPerGpu * std::clamp(t.gpus_per_node, 1, kMaxGpusPerNode));
  if (t.nics < 0 || t.nics > max_nics)
    bad("nics", "got " + to_string(t.nics) + " (expected 0 to " + to_string(max_nics) +
                    ": 16, the most a shipping GPU server has, or 2 per GPU)");
  const int max_sockets = std::max(kMaxSockets, std::clamp(t.gpus_per_node, 1, kMaxGpusPerNode));
  if (t.sockets < 1 || t.sockets > max_sockets)
    bad("sockets", "got " + to_string(t.sockets) + " (expected 1 to " + to_string(max_sockets) +
                       ": 8, the largest glueless x86 platforms, or one CPU per GPU as on GH200)");
  // A written tree is held to its entries' count (check_pcie_tree); the regular layout to one
  // switch per GPU at most.
  if (!has_written_pcie_tree(t) && (t.pcie_switches < 0 || (t.gpus_per_node >= 1 && t.pcie_switches > t.gpus_per_node)))
    bad("pcie_switches", "got " + to_string(t.pcie_switches) + " (expected 0, GPUs on CPU root ports, to " +
                             to_string(t.gpus_per_node) + ", one per GPU)");
  // The regular layout puts ceil(G / switches) GPUs under each switch in turn: a count for which
  // fewer switches fill up (5 for 8 GPUs: 2, 2, 2, 2, none) would leave a switch with no GPU or
  // NIC below it, which no server has (a written tree is refused for it too, check_pcie_tree).
  if (!has_written_pcie_tree(t) && t.pcie_switches > 0 && t.gpus_per_node >= 1 && t.pcie_switches <= t.gpus_per_node) {
    const int per = t.gpus_per_pcie_switch();
    const int filled = (t.gpus_per_node + per - 1) / per;
    if (filled < t.pcie_switches)
      bad("pcie_switches",
          "got " + to_string(t.pcie_switches) + " for " + to_string(t.gpus_per_node) +
              " GPUs: the regular layout puts " + to_string(per) + " GPUs under each switch, so " +
              (t.pcie_switches - filled == 1
                   ? "switch " + to_string(filled)
                   : "switches " + to_string(filled) + " to " + to_string(t.pcie_switches - 1)) +
              " would have no GPU or NIC below it (expected a count whose switches all get GPUs, e.g. " +
              to_string(filled) + " with " + to_string(per) + " GPUs each, or pcie_switch entries for another tree)");
  }
  if (t.pcie_generation < 1 || t.pcie_generation > 6)
    bad("pcie_generation", "got " + to_string(t.pcie_generation) + " (expected 1 to 6)");
  const int l = t.pcie_lanes;
  if (l != 1 && l != 2 && l != 4 && l != 8 && l != 16)
    bad("pcie_lanes", "got " + to_string(l) + " (expected 1, 2, 4, 8 or 16)");
  check_rate("pcie_bytes_per_s", t.pcie_bytes_per_s, kMaxHostLinkBytesPerS, "the generation's rate", out);
  check_rate("pcie_uplink_bytes_per_s", t.pcie_uplink_bytes_per_s, kMaxHostLinkBytesPerS, "the GPU link's rate", out);
  check_rate("nic_pcie_bytes_per_s", t.nic_pcie_bytes_per_s, kMaxHostLinkBytesPerS, "the GPU link's rate", out);
  check_rate("socket_link_bytes_per_s", t.socket_link_bytes_per_s, kMaxHostLinkBytesPerS, "no link", out);
  for (std::size_t s = 0; s < t.pcie_tree.size(); ++s) {
    const std::string field = "pcie_switch[" + to_string(s) + "].uplink_bytes_per_s";
    check_rate(field.c_str(), t.pcie_tree[s].uplink_bytes_per_s, kMaxHostLinkBytesPerS,
               "uplink_generation x uplink_lanes or the node's uplink", out);
  }
  if (t.sockets > 1 && t.socket_link_bytes_per_s == 0)
    bad("socket_link_bytes_per_s", "not set on a node of " + to_string(t.sockets) +
                                       " sockets (expected GPU traffic between sockets per direction, e.g. NCCL's "
                                       "16e9 for AMD Rome, 10e9 for Intel Skylake to Ice Lake)");
  if (t.gpus_per_rack < 0 || (t.gpus_per_node >= 1 && t.gpus_per_rack % t.gpus_per_node != 0))
    bad("gpus_per_rack", "got " + to_string(t.gpus_per_rack) + " (expected 0, or a multiple of gpus_per_node " +
                             to_string(t.gpus_per_node) + ")");
  if (t.source.empty()) bad("source", "not set (expected where the figures come from: datasheet, whitepaper, lspci)");
}

/// The NVLink graph: every entry's GPUs in range and distinct, each pair once, no GPU beyond its links.
void check_graph(const NodeTemplate& t, const GpuSpec& gpu, std::vector<NodeTemplateProblem>& out) {
  if (t.scale_up != ScaleUp::graph) {
    if (!t.nvlinks.empty())
      out.push_back({"nvlink", "set with scale_up " + std::string(scale_up_name(t.scale_up)) +
                                   " (expected scale_up: graph for a node whose NVLinks are listed)"});
    return;
  }
  if (t.nvlinks.empty()) {
    out.push_back({"scale_up", "graph without nvlink entries (expected nvlink { gpus: [a, b] links: n } entries)"});
    return;
  }
  if (t.gpus_per_node < 1 || t.gpus_per_node > kMaxGpusPerNode) return;  // named by check_counts
  std::vector<int> used(static_cast<std::size_t>(std::max(t.gpus_per_node, 0)), 0);
  std::set<std::pair<int, int>> pairs;
  for (std::size_t i = 0; i < t.nvlinks.size(); ++i) {
    const NvlinkEdge& e = t.nvlinks[i];
    const std::string at = "nvlink[" + to_string(i) + "].";
    const auto in_range = [&](int g) { return g >= 0 && g < t.gpus_per_node; };
    if (!in_range(e.gpu_a) || !in_range(e.gpu_b)) {
      std::string what = "[";
      what += to_string(e.gpu_a);
      what += ", ";
      what += to_string(e.gpu_b);
      what += "] names a GPU out of range (expected indices 0 to ";
      what += to_string(t.gpus_per_node - 1);
      what += ")";
      out.push_back({at + "gpus", what});
      continue;
    }
    if (e.gpu_a == e.gpu_b) {
      std::string what = "GPU ";
      what += to_string(e.gpu_a);
      what += " linked to itself (expected two different GPUs)";
      out.push_back({at + "gpus", what});
      continue;
    }
    if (e.links < 1) out.push_back({at + "links", "got " + to_string(e.links) + " (expected >= 1)"});
    if (!pairs.insert(std::minmax(e.gpu_a, e.gpu_b)).second) {
      out.push_back({at + "gpus", "GPUs " + to_string(e.gpu_a) + " and " + to_string(e.gpu_b) +
                                      " listed twice (expected each pair once, with its link count)"});
    }
    used[static_cast<std::size_t>(e.gpu_a)] += std::max(e.links, 0);
    used[static_cast<std::size_t>(e.gpu_b)] += std::max(e.links, 0);
  }
  for (int g = 0; g < static_cast<int>(used.size()); ++g) {
    if (used[static_cast<std::size_t>(g)] > gpu.nvlink_links) {
      out.push_back({"nvlink", "GPU " + to_string(g) + " has " + to_string(used[static_cast<std::size_t>(g)]) +
                                   " NVLink links listed and a " + gpu.name + " has " + to_string(gpu.nvlink_links) +
                                   " (expected at most " + to_string(gpu.nvlink_links) + " per GPU)"});
    }
  }
}

/// Whether the GPU can be wired as the template's scale-up says.
void check_scale_up(const NodeTemplate& t, const GpuSpec& gpu, std::vector<NodeTemplateProblem>& out) {
  const bool card = gpu.form_factor == FormFactor::pcie;
  const bool links = gpu.nvlink_links > 0 && gpu.nvlink_bytes_per_s_per_link > 0;
  const std::string kind = scale_up_name(t.scale_up);
  if ((t.scale_up == ScaleUp::nvswitch || t.scale_up == ScaleUp::mesh || t.scale_up == ScaleUp::graph) &&
      (card || !links)) {
    out.push_back({"scale_up", kind + " with " + gpu.name + (card ? ", a PCIe card" : ", which has no NVLink") +
                                   " (expected a baseboard GPU with NVLink or xGMI links, or scale_up: " +
                                   (card && links ? "bridges" : "none") + ")"});
  }
  if (t.scale_up == ScaleUp::bridges) {
    if (!card) {
      out.push_back({"scale_up", "bridges with " + gpu.name +
                                     ", a baseboard GPU (expected a PCIe card with NVLink bridge connectors)"});
    } else if (const std::string p = bridge_group_problem(t, gpu, t.bridge_gpus); !p.empty()) {
      out.push_back({"bridge_gpus", p});
    }
  }
  if (t.scale_up == ScaleUp::mesh && links && !card && gpu.nvlink_links < t.gpus_per_node - 1) {
    out.push_back({"scale_up", "mesh of " + to_string(t.gpus_per_node) + " GPUs and a " + gpu.name + " has " +
                                   to_string(gpu.nvlink_links) + " links (expected at least one link to each of the " +
                                   to_string(t.gpus_per_node - 1) + " peers)"});
  }
  // The fewest chips is known when the GPU's links are: then a missing count (0) is told it too.
  const bool ports_known = links && !card && t.gpus_per_node >= 1 && t.gpus_per_node <= kMaxGpusPerNode;
  if (t.scale_up == ScaleUp::nvswitch && t.nvswitches < 1 && !ports_known)
    out.push_back({"nvswitches", "got " + to_string(t.nvswitches) + " with scale_up nvswitch (expected >= 1)"});
  if (t.scale_up == ScaleUp::nvswitch && ports_known) {
    // Every GPU link ends on a switch port: the chips must have as many ports as the GPUs have
    // links, and each chip needs at least one GPU link.
    const long long gpu_ports = static_cast<long long>(t.gpus_per_node) * gpu.nvlink_links;
    const int ports = nvswitch_ports(gpu.nvlink_generation);
    const long long fewest = ports > 0 ? (gpu_ports + ports - 1) / ports : 1;
    if (t.nvswitches < fewest) {
      out.push_back({"nvswitches", "got " + to_string(t.nvswitches) + " for " + to_string(t.gpus_per_node) + " x " +
                                       to_string(gpu.nvlink_links) + " NVLink" + to_string(gpu.nvlink_generation) +
                                       " links = " + std::to_string(gpu_ports) + " GPU ports (expected at least " +
                                       std::to_string(fewest) + ": an NVLink" + to_string(gpu.nvlink_generation) +
                                       " switch chip has " + to_string(ports) + " ports)"});
    } else if (t.nvswitches > gpu_ports) {
      out.push_back({"nvswitches", "got " + to_string(t.nvswitches) + " for " + std::to_string(gpu_ports) +
                                       " GPU links (expected at most " + std::to_string(gpu_ports) +
                                       ": a switch chip no GPU link reaches carries no traffic)"});
    }
  }
  if (t.scale_up != ScaleUp::nvswitch && t.nvswitches != 0) {
    out.push_back({"nvswitches", "got " + to_string(t.nvswitches) + " with scale_up " + kind +
                                     " (expected 0: only an NVSwitch node has NVSwitch chips)"});
  }
  check_graph(t, gpu, out);
}

}  // namespace

const char* scale_up_name(ScaleUp s) {
  switch (s) {
    case ScaleUp::none:
      return "none";
    case ScaleUp::nvswitch:
      return "nvswitch";
    case ScaleUp::mesh:
      return "mesh";
    case ScaleUp::bridges:
      return "bridges";
    case ScaleUp::graph:
      return "graph";
  }
  return "?";
}

std::vector<NodeTemplateProblem> complete_node_template(NodeTemplate& t) {
  std::vector<NodeTemplateProblem> out;
  if (t.name.empty()) out.push_back({"name", "not set (expected the name cluster.node_template gives it)"});
  if (t.name.find('/') != std::string::npos)
    out.push_back({"name", "\"" + t.name + "\" holds a '/' (expected a name without it: 'base/N' names a partition)"});
  // A space or control character would make a name that reads like another in every report
  // ("dgx_h100 " printed as the built-in dgx_h100).
  if (std::any_of(t.name.begin(), t.name.end(), [](unsigned char c) { return c <= ' ' || c == 0x7f; }))
    out.push_back({"name", "\"" + t.name +
                               "\" holds a space or control character (expected one word: reports print the name "
                               "as it is, so \"dgx_h100 \" would read as the built-in)"});
  const GpuSpec* gpu = nullptr;
  try {
    gpu = &find_gpu(t.gpu);
  } catch (const std::invalid_argument& e) {
    out.push_back({"gpu", e.what()});
  }
  try {
    find_nic(t.nic);
  } catch (const std::invalid_argument& e) {
    out.push_back({"nic", e.what()});
  }
  check_counts(t, out);
  if (gpu != nullptr) check_scale_up(t, *gpu, out);
  const bool counts_ok = std::none_of(out.begin(), out.end(), [](const NodeTemplateProblem& p) {
    return p.field == "gpus_per_node" || p.field == "nics" || p.field == "sockets";
  });
  if (counts_ok) check_pcie_tree(t, out);
  if (!out.empty()) return out;
  if (t.pcie_bytes_per_s == 0) t.pcie_bytes_per_s = pcie_bytes_per_s(t.pcie_generation, t.pcie_lanes);
  if (t.pcie_uplink_bytes_per_s == 0 && t.pcie_switches > 0) t.pcie_uplink_bytes_per_s = t.pcie_bytes_per_s;
  complete_pcie_tree(t);
  return out;
}

namespace {

/// A reader of the protobuf text form, for the fields of message NodeTemplate only: comments
/// (`#` to the line's end), `field: value`, `field { ... }`, strings with adjacent literals
/// joined, numbers, `true`/`false`, enum names and `[a, b]` lists of integers.
class TextReader {
 public:
  TextReader(std::string_view text, std::string_view origin) : text_(text), origin_(origin) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw std::invalid_argument(std::string(origin_) + ":" + to_string(line_) + ":" + to_string(col_) + ": " +
                                (field.empty() ? "" : field + ": ") + what);
  }
  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  void expect(char c, const std::string& field) {
    if (peek() != c) fail(field, std::string("expected '") + c + "'");
    advance();
  }
  /// Line and column of the next token, for errors found after reading it.
  std::pair<int, int> here() {
    skip_space();
    return {line_, col_};
  }
  void go_to(std::pair<int, int> at) {
    line_ = at.first;
    col_ = at.second;
  }
  std::string identifier(const std::string& field) {
    skip_space();
    std::string out;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) != 0 || text_[pos_] == '_')) {
      out += text_[pos_];
      advance();
    }
    if (out.empty()) fail(field, "expected a name");
    return out;
  }
  std::string string_value(const std::string& field) {
    if (peek() != '"') fail(field, "expected a quoted string");
    std::string out;
    while (peek() == '"') {  // adjacent literals join, as in protobuf's text format
      advance();
      while (pos_ < text_.size() && text_[pos_] != '"') {
        if (text_[pos_] == '\n') fail(field, "string not closed on its line");
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) advance();
        out += text_[pos_];
        advance();
      }
      if (pos_ >= text_.size()) fail(field, "string not closed");
      advance();
    }
    return out;
  }
  double number(const std::string& field) {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) != 0 || text_[pos_] == '.' ||
                                   text_[pos_] == '-' || text_[pos_] == '+')) {
      advance();
    }
    const std::string word(text_.substr(start, pos_ - start));
    char* end = nullptr;
    const double v = std::strtod(word.c_str(), &end);
    if (word.empty() || end != word.c_str() + word.size()) fail(field, "\"" + word + "\" is not a number");
    return v;
  }
  int integer(const std::string& field) {
    const double v = number(field);
    if (v != static_cast<double>(static_cast<int>(v))) fail(field, "expected an integer");
    return static_cast<int>(v);
  }
  bool boolean(const std::string& field) {
    const std::string w = identifier(field);
    if (w != "true" && w != "false") fail(field, "\"" + w + "\" (expected true or false)");
    return w == "true";
  }

 private:
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void skip_space() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
      } else if (std::isspace(static_cast<unsigned char>(c)) != 0 || c == ',' || c == ';') {
        advance();
      } else {
        break;
      }
    }
  }

  std::string_view text_;
  std::string_view origin_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

ScaleUp scale_up_value(TextReader& in) {
  const std::string w = in.identifier("scale_up");
  for (ScaleUp s : {ScaleUp::none, ScaleUp::nvswitch, ScaleUp::mesh, ScaleUp::bridges, ScaleUp::graph}) {
    if (w == scale_up_name(s)) return s;
  }
  in.fail("scale_up", "unknown value \"" + w + "\" (expected none, nvswitch, mesh, bridges or graph)");
}

NvlinkEdge nvlink_entry(TextReader& in) {
  NvlinkEdge e;
  if (in.peek() == ':') in.expect(':', "nvlink");
  in.expect('{', "nvlink");
  while (in.peek() != '}') {
    const std::string field = in.identifier("nvlink");
    in.expect(':', field);
    if (field == "links") {
      e.links = in.integer(field);
    } else if (field == "gpus") {
      in.expect('[', field);
      e.gpu_a = in.integer(field);
      e.gpu_b = in.integer(field);
      in.expect(']', field);
    } else {
      in.fail(field, "unknown field of nvlink (expected gpus, links)");
    }
  }
  in.expect('}', "nvlink");
  return e;
}

/// `[a, b, ...]`: a list of integers (possibly empty).
std::vector<int> int_list(TextReader& in, const std::string& field) {
  std::vector<int> out;
  in.expect('[', field);
  while (in.peek() != ']') {
    if (in.at_end()) in.fail(field, "list not closed (expected ']')");
    out.push_back(in.integer(field));
  }
  in.expect(']', field);
  return out;
}

/// A nested block `name { field: value ... }`: `read` reads each field (after its ':').
template <typename Read>
void sub_block(TextReader& in, const std::string& name, const Read& read) {
  if (in.peek() == ':') in.expect(':', name);
  in.expect('{', name);
  std::set<std::string> seen;
  while (in.peek() != '}') {
    if (in.at_end()) in.fail(name, "block not closed (expected '}')");
    const auto field_at = in.here();
    const std::string field = in.identifier(name);
    std::string path = name;  // "pcie_switch.gpus" in messages
    path += '.';
    path += field;
    if (!seen.insert(field).second) {
      in.go_to(field_at);
      in.fail(path, "given twice (expected once)");
    }
    in.expect(':', field);
    if (!read(field)) {
      in.go_to(field_at);
      in.fail(path, "unknown field of " + name);
    }
  }
  in.expect('}', name);
}

PcieSwitch pcie_switch_entry(TextReader& in) {
  PcieSwitch w;
  sub_block(in, "pcie_switch", [&](const std::string& f) {
    if (f == "socket") {
      w.socket = in.integer(f);
    } else if (f == "upstream_switch") {
      w.upstream_switch = in.integer(f);
    } else if (f == "uplink_generation") {
      w.uplink_generation = in.integer(f);
    } else if (f == "uplink_lanes") {
      w.uplink_lanes = in.integer(f);
    } else if (f == "uplink_bytes_per_s") {
      w.uplink_bytes_per_s = in.number(f);
    } else if (f == "gpus") {
      w.gpus = int_list(in, f);
    } else if (f == "nics") {
      w.nics = int_list(in, f);
    } else {
      return false;
    }
    return true;
  });
  return w;
}

PcieRootPorts root_ports_entry(TextReader& in) {
  PcieRootPorts p;
  sub_block(in, "root_ports", [&](const std::string& f) {
    if (f == "socket") {
      p.socket = in.integer(f);
    } else if (f == "gpus") {
      p.gpus = int_list(in, f);
    } else if (f == "nics") {
      p.nics = int_list(in, f);
    } else {
      return false;
    }
    return true;
  });
  return p;
}

NicGpus nic_gpus_entry(TextReader& in) {
  NicGpus x;
  sub_block(in, "nic_gpus", [&](const std::string& f) {
    if (f == "nic") {
      x.nic = in.integer(f);
    } else if (f == "gpus") {
      x.gpus = int_list(in, f);
    } else {
      return false;
    }
    return true;
  });
  return x;
}

using FieldReader = std::function<void(TextReader&, NodeTemplate&)>;

const std::map<std::string, FieldReader>& field_readers() {
  static const std::map<std::string, FieldReader> readers = {
      {"name", [](TextReader& in, NodeTemplate& t) { t.name = in.string_value("name"); }},
      {"gpu", [](TextReader& in, NodeTemplate& t) { t.gpu = in.string_value("gpu"); }},
      {"gpus_per_node", [](TextReader& in, NodeTemplate& t) { t.gpus_per_node = in.integer("gpus_per_node"); }},
      {"scale_up", [](TextReader& in, NodeTemplate& t) { t.scale_up = scale_up_value(in); }},
      {"bridge_gpus", [](TextReader& in, NodeTemplate& t) { t.bridge_gpus = in.integer("bridge_gpus"); }},
      {"nvswitches", [](TextReader& in, NodeTemplate& t) { t.nvswitches = in.integer("nvswitches"); }},
      {"nic", [](TextReader& in, NodeTemplate& t) { t.nic = in.string_value("nic"); }},
      {"nics", [](TextReader& in, NodeTemplate& t) { t.nics = in.integer("nics"); }},
      {"sockets", [](TextReader& in, NodeTemplate& t) { t.sockets = in.integer("sockets"); }},
      {"pcie_switches", [](TextReader& in, NodeTemplate& t) { t.pcie_switches = in.integer("pcie_switches"); }},
      {"pcie_generation", [](TextReader& in, NodeTemplate& t) { t.pcie_generation = in.integer("pcie_generation"); }},
      {"pcie_lanes", [](TextReader& in, NodeTemplate& t) { t.pcie_lanes = in.integer("pcie_lanes"); }},
      {"pcie_bytes_per_s", [](TextReader& in, NodeTemplate& t) { t.pcie_bytes_per_s = in.number("pcie_bytes_per_s"); }},
      {"pcie_uplink_bytes_per_s",
       [](TextReader& in, NodeTemplate& t) { t.pcie_uplink_bytes_per_s = in.number("pcie_uplink_bytes_per_s"); }},
      {"nic_pcie_bytes_per_s",
       [](TextReader& in, NodeTemplate& t) { t.nic_pcie_bytes_per_s = in.number("nic_pcie_bytes_per_s"); }},
      {"socket_link_bytes_per_s",
       [](TextReader& in, NodeTemplate& t) { t.socket_link_bytes_per_s = in.number("socket_link_bytes_per_s"); }},
      {"cpu", [](TextReader& in, NodeTemplate& t) { t.cpu = in.string_value("cpu"); }},
      {"pcie_p2p", [](TextReader& in, NodeTemplate& t) { t.pcie_p2p = in.boolean("pcie_p2p"); }},
      {"liquid_cooled", [](TextReader& in, NodeTemplate& t) { t.liquid_cooled = in.boolean("liquid_cooled"); }},
      {"gpus_per_rack", [](TextReader& in, NodeTemplate& t) { t.gpus_per_rack = in.integer("gpus_per_rack"); }},
      {"source", [](TextReader& in, NodeTemplate& t) { t.source = in.string_value("source"); }},
  };
  return readers;
}

NodeTemplate read_block(TextReader& in) {
  NodeTemplate t;
  std::set<std::string> seen;
  const auto block_at = in.here();
  in.expect('{', "node_template");
  while (in.peek() != '}') {
    if (in.at_end()) in.fail("node_template", "block not closed (expected '}')");
    const auto field_at = in.here();
    const std::string field = in.identifier("node_template");
    if (field == "nvlink") {
      t.nvlinks.push_back(nvlink_entry(in));
      continue;
    }
    if (field == "pcie_switch") {
      t.pcie_tree.push_back(pcie_switch_entry(in));
      continue;
    }
    if (field == "root_ports") {
      t.root_ports.push_back(root_ports_entry(in));
      continue;
    }
    if (field == "nic_gpus") {
      t.nic_gpus.push_back(nic_gpus_entry(in));
      continue;
    }
    const auto it = field_readers().find(field);
    if (it == field_readers().end()) {
      in.go_to(field_at);
      in.fail(field, "unknown field of node_template");
    }
    if (!seen.insert(field).second) {
      in.go_to(field_at);
      in.fail(field, "given twice (expected once)");
    }
    in.expect(':', field);
    it->second(in, t);
  }
  in.expect('}', "node_template");
  // A written tree's switch count is its entries' unless pcie_switches is written too.
  if (has_written_pcie_tree(t) && seen.count("pcie_switches") == 0)
    t.pcie_switches = static_cast<int>(t.pcie_tree.size());
  const std::vector<NodeTemplateProblem> problems = complete_node_template(t);
  if (!problems.empty()) {
    in.go_to(block_at);
    in.fail("node_template \"" + t.name + "\" " + problems.front().field, problems.front().what);
  }
  return t;
}

}  // namespace

std::vector<NodeTemplate> read_node_templates(std::string_view text, std::string_view origin) {
  TextReader in(text, origin);
  std::vector<NodeTemplate> out;
  while (!in.at_end()) {
    const std::string top = in.identifier("");
    if (top != "node_template") in.fail(top, "unknown field (expected node_template blocks)");
    if (in.peek() == ':') in.expect(':', top);
    out.push_back(read_block(in));
  }
  return out;
}

}  // namespace traincast::models
