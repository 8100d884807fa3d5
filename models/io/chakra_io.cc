#include "models/io/chakra_io.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_set>

#include "chakra_et.pb.h"
#include "models/io/json_reader.h"

namespace traincast::io {
namespace {

namespace pb = traincast::chakra;
namespace fs = std::filesystem;
using models::ChakraNode;
using models::ChakraNodeType;

constexpr const char* kProcessGroupInit = "## process_group:init ##";

/// Prefix of every message about one message of a file.
std::string at(const std::string& path, std::uint64_t offset) {
  return path + ": byte " + std::to_string(offset) + ": ";
}

const char* value_case_name(const pb::AttributeProto& a) {
  switch (a.value_case()) {
    case pb::AttributeProto::kDoubleVal:
      return "double_val";
    case pb::AttributeProto::kFloatVal:
      return "float_val";
    case pb::AttributeProto::kInt32Val:
      return "int32_val";
    case pb::AttributeProto::kInt64Val:
      return "int64_val";
    case pb::AttributeProto::kUint32Val:
      return "uint32_val";
    case pb::AttributeProto::kUint64Val:
      return "uint64_val";
    case pb::AttributeProto::kSint32Val:
      return "sint32_val";
    case pb::AttributeProto::kSint64Val:
      return "sint64_val";
    case pb::AttributeProto::kFixed32Val:
      return "fixed32_val";
    case pb::AttributeProto::kFixed64Val:
      return "fixed64_val";
    case pb::AttributeProto::kSfixed32Val:
      return "sfixed32_val";
    case pb::AttributeProto::kSfixed64Val:
      return "sfixed64_val";
    case pb::AttributeProto::kBoolVal:
      return "bool_val";
    case pb::AttributeProto::kStringVal:
      return "string_val";
    case pb::AttributeProto::kBytesVal:
      return "bytes_val";
    case pb::AttributeProto::VALUE_NOT_SET:
      return "no value";
    default:
      return "a list";
  }
}

/// Integer value of any integer-typed attribute; nullopt-like false for other types.
bool integer_value(const pb::AttributeProto& a, long double& v) {
  switch (a.value_case()) {
    case pb::AttributeProto::kInt32Val:
      v = a.int32_val();
      return true;
    case pb::AttributeProto::kInt64Val:
      v = static_cast<long double>(a.int64_val());
      return true;
    case pb::AttributeProto::kUint32Val:
      v = a.uint32_val();
      return true;
    case pb::AttributeProto::kUint64Val:
      v = static_cast<long double>(a.uint64_val());
      return true;
    case pb::AttributeProto::kSint32Val:
      v = a.sint32_val();
      return true;
    case pb::AttributeProto::kSint64Val:
      v = static_cast<long double>(a.sint64_val());
      return true;
    case pb::AttributeProto::kFixed32Val:
      v = a.fixed32_val();
      return true;
    case pb::AttributeProto::kFixed64Val:
      v = static_cast<long double>(a.fixed64_val());
      return true;
    case pb::AttributeProto::kSfixed32Val:
      v = a.sfixed32_val();
      return true;
    case pb::AttributeProto::kSfixed64Val:
      v = static_cast<long double>(a.sfixed64_val());
      return true;
    default:
      return false;
  }
}

class NodeReader {
 public:
  NodeReader(const std::string& where, const pb::Node& n) : where_(where), n_(n) {}

  [[noreturn]] void fail(const std::string& what) const { throw ChakraError(where_ + what); }

  long double integer(const pb::AttributeProto& a) const {
    long double v = 0;
    if (!integer_value(a, v)) fail("attribute " + a.name() + ": expected an integer (got " + value_case_name(a) + ")");
    return v;
  }
  /// A count or size: an integer, or a finite double, >= 0.
  double size(const pb::AttributeProto& a) const {
    long double v = 0;
    if (a.value_case() == pb::AttributeProto::kDoubleVal || a.value_case() == pb::AttributeProto::kFloatVal) {
      v = a.value_case() == pb::AttributeProto::kDoubleVal ? a.double_val() : a.float_val();
      if (!std::isfinite(static_cast<double>(v)))
        fail("attribute " + a.name() + ": expected a finite number >= 0 (got " +
             std::to_string(static_cast<double>(v)) + ")");
    } else {
      v = integer(a);
    }
    if (v < 0)
      fail("attribute " + a.name() + ": expected a number >= 0 (got " + std::to_string(static_cast<double>(v)) + ")");
    return static_cast<double>(v);
  }
  int rank(const pb::AttributeProto& a) const {
    const long double v = integer(a);
    if (v < 0 || v > 1e9)
      fail("attribute " + a.name() + ": expected a rank >= 0 (got " + std::to_string(static_cast<double>(v)) + ")");
    return static_cast<int>(v);
  }

  ChakraNode read() const {
    ChakraNode out;
    out.id = n_.id();
    out.name = n_.name();
    const int type = static_cast<int>(n_.type());
    switch (type) {
      case pb::METADATA_NODE:
      case pb::MEM_LOAD_NODE:
      case pb::MEM_STORE_NODE:
      case pb::COMP_NODE:
      case pb::COMM_SEND_NODE:
      case pb::COMM_RECV_NODE:
      case pb::COMM_COLL_NODE:
        out.type = static_cast<ChakraNodeType>(type);
        break;
      case pb::INVALID_NODE:
        fail(
            "type INVALID_NODE (0): expected one of METADATA_NODE, MEM_LOAD_NODE, MEM_STORE_NODE, COMP_NODE, "
            "COMM_SEND_NODE, COMM_RECV_NODE, COMM_COLL_NODE");
      case pb::STORAGE_NODE:
      case pb::BATCH_NODE:
      case pb::CHECKPOINT_NODE:
        fail("type " + pb::NodeType_Name(static_cast<pb::NodeType>(type)) + " (" + std::to_string(type) +
             ") is not simulated (supported: METADATA, MEM_LOAD, MEM_STORE, COMP, COMM_SEND, COMM_RECV, COMM_COLL)");
      default:
        fail("type " + std::to_string(type) + " is not a Chakra node type (et_def.proto NodeType is 0..10)");
    }
    out.ctrl_deps.assign(n_.ctrl_deps().begin(), n_.ctrl_deps().end());
    out.data_deps.assign(n_.data_deps().begin(), n_.data_deps().end());
    if (n_.duration_micros() > 0) {
      if (n_.duration_micros() > 9'000'000'000'000ull)  // 104 days: beyond any kernel, keeps ns in range
        fail("duration_micros " + std::to_string(n_.duration_micros()) + " is out of range (expected < 9e12)");
      out.duration_ns = static_cast<std::int64_t>(n_.duration_micros()) * 1000;
    }
    bool have_duration_ns = false;
    for (const pb::AttributeProto& a : n_.attr()) {
      const std::string& k = a.name();
      if (k == "duration_ns") {
        const long double v = integer(a);
        if (v < 0 || v > 9e18)
          fail("attribute duration_ns: expected an integer in [0, 9e18] (got " +
               std::to_string(static_cast<double>(v)) + ")");
        out.duration_ns = static_cast<std::int64_t>(v);
        have_duration_ns = true;
      } else if (k == "num_ops") {
        out.num_ops = size(a);
      } else if (k == "tensor_size") {
        out.tensor_size_bytes = size(a);
      } else if (k == "is_cpu_op") {
        if (a.value_case() == pb::AttributeProto::kBoolVal)
          out.is_cpu_op = a.bool_val();
        else
          out.is_cpu_op = integer(a) != 0;
      } else if (k == "comm_type") {
        const long double v = integer(a);
        if (v < 0 || v > 9)
          fail("attribute comm_type: " + std::to_string(static_cast<long long>(v)) +
               " is not a CollectiveCommType (expected 0..9: ALL_REDUCE, REDUCE, ALL_GATHER, GATHER, SCATTER, "
               "BROADCAST, ALL_TO_ALL, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, BARRIER)");
        out.comm_type = static_cast<int>(v);
      } else if (k == "comm_size") {
        out.comm_size_bytes = size(a);
      } else if (k == "comm_src") {
        out.comm_src = rank(a);
      } else if (k == "comm_dst") {
        out.comm_dst = rank(a);
      } else if (k == "comm_tag") {
        const long double v = integer(a);
        out.comm_tag = static_cast<std::int64_t>(std::clamp<long double>(v, -9e18L, 9e18L));
      } else if (k == "pg_name") {
        if (a.value_case() == pb::AttributeProto::kStringVal)
          out.pg_name = a.string_val();
        else
          out.pg_name = std::to_string(static_cast<long long>(integer(a)));  // some writers store the id
      }
    }
    (void)have_duration_ns;
    // A communication node on the host (is_cpu_op, e.g. PyTorch's c10d::broadcast_ launch) is
    // replayed as a CPU op; its attributes are not needed.
    const bool host = out.is_cpu_op;
    switch (host ? ChakraNodeType::comp : out.type) {
      case ChakraNodeType::comm_coll:
        if (out.comm_type < 0) fail("COMM_COLL_NODE without a comm_type attribute (expected 0..9)");
        if (out.comm_size_bytes < 0 && out.comm_type != static_cast<int>(models::ChakraCollective::barrier))
          fail("COMM_COLL_NODE without a comm_size attribute (expected bytes >= 0)");
        break;
      case ChakraNodeType::comm_send:
        if (out.comm_dst < 0) fail("COMM_SEND_NODE without a comm_dst attribute (expected the receiving rank)");
        if (out.comm_size_bytes < 0) fail("COMM_SEND_NODE without a comm_size attribute (expected bytes >= 0)");
        break;
      case ChakraNodeType::comm_recv:
        if (out.comm_src < 0) fail("COMM_RECV_NODE without a comm_src attribute (expected the sending rank)");
        break;
      default:
        break;
    }
    return out;
  }

 private:
  const std::string& where_;
  const pb::Node& n_;
};

/// inputs.values of PyTorch's process_group:init node: a JSON list of groups, possibly wrapped
/// in a Python list literal (['...'], the Chakra converter's str()).
std::vector<models::ChakraProcessGroup> parse_process_groups(const std::string& where, std::string text) {
  auto trim = [](std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    const auto e = s.find_last_not_of(" \t\r\n");
    s = b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  trim(text);
  if (text.size() >= 4 && text.front() == '[' && (text[1] == '\'' || text[1] == '"') && text.back() == ']' &&
      text[text.size() - 2] == text[1]) {
    const char quote = text[1];
    text = text.substr(2, text.size() - 4);
    if (quote == '\'') {  // Python repr escapes: \' and \\ only matter here
      std::string un;
      for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '\'' || text[i + 1] == '\\')) ++i;
        un.push_back(text[i]);
      }
      text = std::move(un);
    }
  }
  const detail::JsonReadResult r = detail::read_json(text, 16);
  const std::string prefix = where + "\"" + kProcessGroupInit + "\" inputs.values: ";
  if (!r.value)
    throw ChakraError(prefix + "not JSON (" + r.error + " at column " + std::to_string(r.error_pos.column) + ")");
  const detail::JsonValue& list = *r.value;
  if (list.kind != detail::JsonValue::Kind::array)
    throw ChakraError(prefix + "expected a JSON list of process groups (got " +
                      std::string(detail::describe(list.kind)) + ")");
  std::vector<models::ChakraProcessGroup> out;
  for (const detail::JsonValue& g : list.items) {
    if (g.kind != detail::JsonValue::Kind::object)
      throw ChakraError(prefix + "expected an object per process group (got " + std::string(detail::describe(g.kind)) +
                        ")");
    models::ChakraProcessGroup pg;
    bool named = false;
    for (const detail::JsonMember& m : g.members) {
      if (m.key == "pg_name") {
        if (m.value.kind != detail::JsonValue::Kind::string && m.value.kind != detail::JsonValue::Kind::number)
          throw ChakraError(prefix + "pg_name: expected a string");
        pg.name = m.value.text;
        named = true;
      } else if (m.key == "ranks") {
        if (m.value.kind != detail::JsonValue::Kind::array)
          throw ChakraError(prefix + "ranks: expected a list of ranks");
        for (const detail::JsonValue& v : m.value.items) {
          char* end = nullptr;
          const long long x = v.kind == detail::JsonValue::Kind::number ? std::strtoll(v.text.c_str(), &end, 10) : -1;
          if (v.kind != detail::JsonValue::Kind::number || end == nullptr || *end != '\0' || x < 0 || x > 1'000'000'000)
            throw ChakraError(prefix + "pg_name " + pg.name + ": ranks: expected integers >= 0 (got " + v.text + ")");
          pg.ranks.push_back(static_cast<int>(x));
        }
      }
    }
    if (!named) throw ChakraError(prefix + "a process group without pg_name");
    std::vector<int> sorted = pg.ranks;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      throw ChakraError(prefix + "pg_name " + pg.name + ": a rank is listed twice");
    out.push_back(std::move(pg));
  }
  return out;
}

void write_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void append_message(std::string& out, const google::protobuf::MessageLite& m) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream s(&bytes);
    google::protobuf::io::CodedOutputStream c(&s);
    c.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&c);
  }
  write_varint(out, bytes.size());
  out += bytes;
}

}  // namespace

models::ChakraRankTrace parse_chakra_trace(std::string_view bytes, const std::string& path, int rank) {
  models::ChakraRankTrace trace;
  trace.path = path;
  trace.rank = rank;
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const std::size_t size = bytes.size();
  std::size_t pos = 0;
  std::size_t index = 0;
  std::unordered_set<std::uint64_t> ids;
  bool have_pg_node = false;
  {
    const auto first = bytes.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && bytes[first] == '{')
      throw ChakraError(path +
                        ": a PyTorch execution trace in JSON, not a Chakra .et file (convert it with Chakra's "
                        "chakra_trace_link and chakra_converter first; traincast reads the protobuf .et output)");
  }
  while (pos < size) {
    const std::size_t start = pos;
    // Varint length prefix (at most 10 bytes).
    std::uint64_t len = 0;
    int shift = 0;
    bool done = false;
    while (pos < size && shift < 64) {
      const std::uint8_t b = data[pos++];
      len |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      shift += 7;
      if (b < 0x80) {
        done = true;
        break;
      }
    }
    if (!done) {
      if (pos >= size) throw ChakraError(at(path, start) + "truncated: the file ends inside a message's length prefix");
      throw ChakraError(at(path, start) + "not a length-delimited Chakra trace (length prefix longer than 10 bytes)");
    }
    if (len > size - pos)
      throw ChakraError(at(path, start) + "truncated: the message declares " + std::to_string(len) +
                        " bytes but only " + std::to_string(size - pos) + " remain");
    const std::string where = at(path, start);
    if (index == 0) {
      pb::GlobalMetadata meta;
      // A corrupt message makes libprotobuf log its own "[libprotobuf ERROR ...]" line (invalid
      // UTF-8 in a string field) to stderr before our message (issue 21); the error below says it.
      const google::protobuf::LogSilencer quiet;
      if (!meta.ParseFromArray(data + pos, static_cast<int>(len)))
        throw ChakraError(where + "the first message is not a Chakra GlobalMetadata (file not a Chakra .et trace?)");
      trace.version = meta.version();
      for (const pb::AttributeProto& a : meta.attr())
        if (a.name() == "schema" && a.value_case() == pb::AttributeProto::kStringVal) trace.schema = a.string_val();
    } else {
      pb::Node n;
      bool parsed = false;
      {
        const google::protobuf::LogSilencer quiet;  // as for the metadata above
        parsed = n.ParseFromArray(data + pos, static_cast<int>(len));
      }
      if (!parsed) throw ChakraError(where + "message " + std::to_string(index) + " is not a Chakra Node");
      const std::string where_node = where + "node " + std::to_string(n.id()) + ": ";
      ChakraNode node = NodeReader(where_node, n).read();
      node.file_offset = start;
      if (!ids.insert(node.id).second)
        throw ChakraError(where_node + "id " + std::to_string(node.id) + " appears twice in the file");
      if (node.type == ChakraNodeType::metadata && node.name == kProcessGroupInit) {
        if (have_pg_node) throw ChakraError(where_node + "a second \"" + kProcessGroupInit + "\" node");
        have_pg_node = true;
        trace.process_groups = parse_process_groups(where_node, n.inputs().values());
      }
      trace.nodes.push_back(std::move(node));
    }
    pos += static_cast<std::size_t>(len);
    ++index;
  }
  if (index == 0) throw ChakraError(path + ": empty file (expected a Chakra GlobalMetadata message, then nodes)");
  // A data dependency must name a node of the file. A control dependency on a missing node is
  // dropped: Chakra's PyTorch converter writes the calling op as ctrl_deps and removes callers
  // that have no dependencies of their own (remove_dangling_nodes), so such parents are gone.
  // A dependency of a node on itself (seen in converter output) cannot be waited for: dropped too.
  for (ChakraNode& n : trace.nodes) {
    for (std::uint64_t d : n.data_deps)
      if (!ids.count(d))
        throw ChakraError(at(path, n.file_offset) + "node " + std::to_string(n.id) + ": depends on node " +
                          std::to_string(d) + " (data_deps), which is not in the file");
    const std::size_t before = n.ctrl_deps.size() + n.data_deps.size();
    std::erase_if(n.ctrl_deps, [&](std::uint64_t d) { return d == n.id || !ids.count(d); });
    std::erase_if(n.data_deps, [&](std::uint64_t d) { return d == n.id; });
    trace.dropped_deps += static_cast<std::int64_t>(before - n.ctrl_deps.size() - n.data_deps.size());
  }
  std::map<std::string, int> seen;
  for (const auto& pg : trace.process_groups)
    if (seen[pg.name]++ > 0) throw ChakraError(path + ": process group " + pg.name + " is defined twice");
  return trace;
}

models::ChakraRankTrace read_chakra_file(const std::string& path, int rank) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw ChakraError(path + ": is a directory (expected a .et file)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ChakraError(path + ": cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw ChakraError(path + ": read error");
  return parse_chakra_trace(s.str(), path, rank);
}

int chakra_rank_from_path(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  if (name.size() < 5 || name.substr(name.size() - 3) != ".et") return -1;
  const std::string stem = name.substr(0, name.size() - 3);
  const auto dot = stem.rfind('.');
  if (dot == std::string::npos || dot + 1 == stem.size()) return -1;
  const std::string digits = stem.substr(dot + 1);
  if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoi(digits);
}

std::vector<std::string> chakra_trace_files(const std::vector<std::string>& inputs) {
  if (inputs.empty()) throw ChakraError("no trace given (expected DIR/NAME, a directory or NAME.<rank>.et files)");
  std::vector<std::string> files;
  std::error_code ec;
  if (inputs.size() == 1 && !fs::is_regular_file(inputs[0], ec)) {
    const std::string& in = inputs[0];
    if (fs::is_directory(in, ec)) {
      for (const auto& e : fs::directory_iterator(in, ec))
        if (e.path().extension() == ".et") files.push_back(e.path().string());
      if (files.empty()) throw ChakraError(in + ": no .et files in this directory");
    } else {
      // A prefix DIR/NAME: every DIR/NAME.<rank>.et.
      const fs::path p(in);
      const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
      const std::string stem = p.filename().string();
      if (!fs::is_directory(dir, ec)) throw ChakraError(in + ": no such file, directory or trace prefix");
      for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.size() > stem.size() + 1 && name.compare(0, stem.size() + 1, stem + ".") == 0 &&
            chakra_rank_from_path(name) >= 0 && name.find('.', stem.size() + 1) == name.size() - 3)
          files.push_back(e.path().string());
      }
      if (files.empty())
        throw ChakraError(in + ": no such file, directory or trace prefix (expected files " + in + ".<rank>.et)");
    }
    std::sort(files.begin(), files.end());
  } else {
    files = inputs;
  }
  return files;
}

std::vector<models::ChakraRankTrace> load_chakra_traces(const std::vector<std::string>& inputs) {
  const std::vector<std::string> files = chakra_trace_files(inputs);
  std::string expect_pattern;  // for "missing rank" messages: prefix of the files
  auto base_of = [](const std::string& f) {
    const std::string name = fs::path(f).filename().string();
    const std::string stem = name.substr(0, name.size() - 3);
    return (fs::path(f).parent_path() / stem.substr(0, stem.rfind('.'))).string();
  };
  // Ranks from the names.
  std::map<int, std::string> by_rank;
  if (files.size() == 1 && chakra_rank_from_path(files[0]) < 0) {
    by_rank[0] = files[0];
  } else {
    std::string base;
    for (const std::string& f : files) {
      const int r = chakra_rank_from_path(f);
      if (r < 0) throw ChakraError(f + ": cannot tell its rank (expected a file named NAME.<rank>.et)");
      const std::string b = base_of(f);
      if (base.empty()) base = b;
      if (b != base) {
        std::string msg = f;
        msg.append(": belongs to another trace than ").append(files[0]);
        msg.append(" (").append(b).append(".* vs ").append(base).append(".*)");
        throw ChakraError(msg);
      }
      auto [it, fresh] = by_rank.emplace(r, f);
      if (!fresh) throw ChakraError(f + ": rank " + std::to_string(r) + " given twice (also " + it->second + ")");
    }
    expect_pattern = base;
  }
  const int n = static_cast<int>(by_rank.size());
  for (int r = 0; r < n; ++r) {
    if (by_rank.count(r)) continue;
    std::string msg = "trace ";
    msg.append(expect_pattern).append(": rank ").append(std::to_string(r)).append(" is missing (expected ");
    msg.append(expect_pattern).append(".").append(std::to_string(r)).append(".et; found ").append(std::to_string(n));
    msg.append(" files, highest rank ").append(std::to_string(by_rank.rbegin()->first)).append(")");
    throw ChakraError(msg);
  }
  std::vector<models::ChakraRankTrace> out;
  out.reserve(by_rank.size());
  for (const auto& [r, f] : by_rank) out.push_back(read_chakra_file(f, r));
  return out;
}

std::string write_chakra_trace(const models::ChakraRankTrace& trace) {
  std::string out;
  pb::GlobalMetadata meta;
  meta.set_version(trace.version.empty() ? "0.0.4" : trace.version);
  if (!trace.schema.empty()) {
    pb::AttributeProto* a = meta.add_attr();
    a->set_name("schema");
    a->set_string_val(trace.schema);
  }
  append_message(out, meta);
  if (!trace.process_groups.empty()) {
    std::uint64_t max_id = 0;
    for (const ChakraNode& n : trace.nodes) max_id = std::max(max_id, n.id);
    pb::Node pg;
    pg.set_id(trace.nodes.empty() ? 0 : max_id + 1);
    pg.set_name(kProcessGroupInit);
    pg.set_type(pb::METADATA_NODE);
    std::string json = "[";
    for (std::size_t i = 0; i < trace.process_groups.size(); ++i) {
      const auto& g = trace.process_groups[i];
      json += (i ? ", " : "") + std::string("{\"pg_name\": \"") + g.name + "\", \"ranks\": [";
      for (std::size_t k = 0; k < g.ranks.size(); ++k) json += (k ? ", " : "") + std::to_string(g.ranks[k]);
      json += "], \"group_size\": " + std::to_string(g.ranks.size()) + "}";
    }
    json += "]";
    pg.mutable_inputs()->set_values(json);
    append_message(out, pg);
  }
  auto attr = [](pb::Node& n, const char* name) {
    pb::AttributeProto* a = n.add_attr();
    a->set_name(name);
    return a;
  };
  for (const ChakraNode& n : trace.nodes) {
    pb::Node m;
    m.set_id(n.id);
    m.set_name(n.name);
    m.set_type(static_cast<pb::NodeType>(static_cast<int>(n.type)));
    for (std::uint64_t d : n.ctrl_deps) m.add_ctrl_deps(d);
    for (std::uint64_t d : n.data_deps) m.add_data_deps(d);
    if (n.duration_ns >= 0) {
      const std::int64_t us = (n.duration_ns + 500) / 1000;
      m.set_duration_micros(static_cast<std::uint64_t>(n.duration_ns > 0 ? std::max<std::int64_t>(us, 1) : 0));
      attr(m, "duration_ns")->set_int64_val(n.duration_ns);
    }
    attr(m, "is_cpu_op")->set_bool_val(n.is_cpu_op);
    if (n.num_ops >= 0) attr(m, "num_ops")->set_int64_val(static_cast<std::int64_t>(std::llround(n.num_ops)));
    if (n.tensor_size_bytes >= 0)
      attr(m, "tensor_size")->set_int64_val(static_cast<std::int64_t>(std::llround(n.tensor_size_bytes)));
    if (n.comm_type >= 0) attr(m, "comm_type")->set_int64_val(n.comm_type);
    if (n.comm_size_bytes >= 0)
      attr(m, "comm_size")->set_int64_val(static_cast<std::int64_t>(std::llround(n.comm_size_bytes)));
    if (n.comm_src >= 0) attr(m, "comm_src")->set_int64_val(n.comm_src);
    if (n.comm_dst >= 0) attr(m, "comm_dst")->set_int64_val(n.comm_dst);
    if (n.comm_tag >= 0) attr(m, "comm_tag")->set_int64_val(n.comm_tag);
    if (!n.pg_name.empty()) attr(m, "pg_name")->set_string_val(n.pg_name);
    append_message(out, m);
  }
  return out;
}

}  // namespace traincast::io
