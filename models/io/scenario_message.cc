// Stand-in definitions of scenario_message.h over scenario_io.h's public text API: the message
// is printed or parsed as protobuf text on the way. The same results as direct definitions in
// scenario_io.cc (to_proto; load_impl after parsing) would give; replace this file with those.

#include "models/io/scenario_message.h"

#include <google/protobuf/text_format.h>

#include "models/io/scenario_io.h"

namespace traincast::io::detail {

proto::Scenario scenario_message(const models::Scenario& scenario) {
  proto::Scenario message;
  google::protobuf::TextFormat::ParseFromString(scenario_to_text(scenario), &message);
  return message;
}

models::Scenario load_scenario_message(const proto::Scenario& message, std::string_view origin,
                                       const std::vector<std::string>& overrides) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(message, &text);
  return load_scenario_text(text, origin, Format::text, overrides);
}

}  // namespace traincast::io::detail
