// The scenario's scalar fields for sweeps (sweep_fields.h): found by reflection over the schema,
// read from messages, and their defaults taken from models/spec/scenario.h.

#include "models/io/sweep_fields.h"

#include "models/io/scenario_convert.h"

namespace traincast::io::detail {

namespace pb = google::protobuf;
namespace tp = traincast::proto;

namespace {

void collect_scalars(const pb::Descriptor* type, const std::string& prefix,
                     std::vector<const pb::FieldDescriptor*>& chain, std::vector<ScalarField>& out) {
  for (int i = 0; i < type->field_count(); ++i) {
    const pb::FieldDescriptor* f = type->field(i);
    if (f->is_repeated()) continue;
    chain.push_back(f);
    const std::string path = prefix.empty() ? f->name() : prefix + "." + f->name();
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      collect_scalars(f->message_type(), path, chain, out);
    } else {
      out.push_back({path, chain});
    }
    chain.pop_back();
  }
}

/// The value of scalar `f` in `m` (present or not).
ExprValue scalar_value(const pb::Message& m, const pb::FieldDescriptor* f) {
  const pb::Reflection* r = m.GetReflection();
  using F = pb::FieldDescriptor;
  switch (f->cpp_type()) {
    case F::CPPTYPE_INT32:
      return ExprValue::of_number(r->GetInt32(m, f));
    case F::CPPTYPE_INT64:
      return ExprValue::of_number(static_cast<double>(r->GetInt64(m, f)));
    case F::CPPTYPE_UINT32:
      return ExprValue::of_number(r->GetUInt32(m, f));
    case F::CPPTYPE_UINT64:
      return ExprValue::of_number(static_cast<double>(r->GetUInt64(m, f)));
    case F::CPPTYPE_DOUBLE:
      return ExprValue::of_number(r->GetDouble(m, f));
    case F::CPPTYPE_FLOAT:
      return ExprValue::of_number(r->GetFloat(m, f));
    case F::CPPTYPE_BOOL:
      return ExprValue::of_bool(r->GetBool(m, f));
    case F::CPPTYPE_ENUM: {
      const pb::EnumValueDescriptor* v = f->enum_type()->FindValueByNumber(r->GetEnumValue(m, f));
      return ExprValue::of_string(v != nullptr ? v->name() : std::to_string(r->GetEnumValue(m, f)));
    }
    case F::CPPTYPE_STRING:
      return ExprValue::of_string(r->GetString(m, f));
    case F::CPPTYPE_MESSAGE:
      break;
  }
  return ExprValue::of_number(0.0);
}

/// Every field of the scenario set to the default of models/spec/scenario.h (the value a field
/// not written takes).
const tp::Scenario& scenario_defaults() {
  static const tp::Scenario defaults = [] {
    models::Scenario s;  // both inlet temperatures, whichever the cooling uses (scenario_fields.cc)
    s.thermal.given.supply_air_c = s.thermal.given.coolant_c = true;
    return to_proto(s);
  }();
  return defaults;
}

}  // namespace

const std::vector<ScalarField>& scenario_scalars() {
  static const std::vector<ScalarField> fields = [] {
    std::vector<ScalarField> out;
    std::vector<const pb::FieldDescriptor*> chain;
    collect_scalars(tp::Scenario::descriptor(), "", chain, out);
    return out;
  }();
  return fields;
}

const ScalarField* find_scalar(std::string_view path) {
  for (const ScalarField& f : scenario_scalars()) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

ExprType expr_type_of(const pb::FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return ExprType::boolean;
    case pb::FieldDescriptor::CPPTYPE_ENUM:
    case pb::FieldDescriptor::CPPTYPE_STRING:
      return ExprType::string;
    default:
      return ExprType::number;
  }
}

bool is_numeric(const pb::FieldDescriptor* f) { return expr_type_of(f) == ExprType::number; }

bool is_integer(const pb::FieldDescriptor* f) {
  using F = pb::FieldDescriptor;
  const auto t = f->cpp_type();
  return t == F::CPPTYPE_INT32 || t == F::CPPTYPE_INT64 || t == F::CPPTYPE_UINT32 || t == F::CPPTYPE_UINT64;
}

ExprNameInfo name_info_of(const pb::FieldDescriptor* f) {
  ExprNameInfo info;
  info.type = expr_type_of(f);
  if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM) {
    for (int i = 0; i < f->enum_type()->value_count(); ++i) info.allowed.push_back(f->enum_type()->value(i)->name());
  }
  return info;
}

std::optional<ExprValue> written_value(const pb::Message& root, const ScalarField& field) {
  const pb::Message* m = &root;
  for (std::size_t i = 0; i + 1 < field.chain.size(); ++i) {
    if (!m->GetReflection()->HasField(*m, field.chain[i])) return std::nullopt;
    m = &m->GetReflection()->GetMessage(*m, field.chain[i]);
  }
  if (!m->GetReflection()->HasField(*m, field.field())) return std::nullopt;
  return scalar_value(*m, field.field());
}

std::optional<ExprValue> base_value(const tp::Scenario& base, const ScalarField& field) {
  // A mixed cluster (node groups, which no axis can change): its nodes are the groups' sum and its
  // template (for gpus_per_node, the same in every group) the first group's; cluster.num_nodes and
  // node_template left unset say nothing then (scenario_convert.cc fills them the same way).
  if (const tp::ClusterSpec& c = base.cluster(); c.node_group_size() > 0) {
    if (field.path == "cluster.num_nodes") {
      double nodes = 0;
      for (const tp::ClusterSpec::NodeGroup& g : c.node_group()) nodes += g.has_num_nodes() ? g.num_nodes() : 1;
      return ExprValue::of_number(nodes);
    }
    if (field.path == "cluster.node_template") return ExprValue::of_string(c.node_group(0).node_template());
  }
  if (auto v = written_value(base, field)) return v;
  return written_value(scenario_defaults(), field);
}

}  // namespace traincast::io::detail
