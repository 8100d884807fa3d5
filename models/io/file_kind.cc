#include "models/io/file_kind.h"

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "models/io/message_reader.h"
#include "traincast.pb.h"

namespace traincast::io::detail {
namespace {

namespace pb = google::protobuf;
namespace tp = traincast::proto;

/// One kind of traincast file: its message, what to call it, and which command takes it.
struct Kind {
  const pb::Descriptor* type;
  const char* noun;
  std::function<std::unique_ptr<pb::Message>()> make;
  std::function<std::string(std::string_view origin)> use;
};

const std::vector<Kind>& kinds() {
  static const std::vector<Kind> all = {
      {tp::Scenario::descriptor(), "scenario", [] { return std::make_unique<tp::Scenario>(); },
       [](std::string_view f) {
         return "run it with `traincast run " + std::string(f) + "` (or plan, nccl-tests, explain, chakra)";
       }},
      {tp::Sweep::descriptor(), "sweep file", [] { return std::make_unique<tp::Sweep>(); },
       [](std::string_view f) { return "run it with `traincast sweep " + std::string(f) + " --out RESULTS.csv`"; }},
      {tp::ValidationCases::descriptor(), "validation cases file",
       [] { return std::make_unique<tp::ValidationCases>(); },
       [](std::string_view f) { return "run it with `traincast validate " + std::string(f) + "`"; }},
      {tp::Profile::descriptor(), "calibration profile", [] { return std::make_unique<tp::Profile>(); },
       [](std::string_view f) {
         return "use it with `--profile " + std::string(f) + "` or a scenario's `profile` field";
       }},
      {tp::Measurements::descriptor(), "measurements file", [] { return std::make_unique<tp::Measurements>(); },
       [](std::string_view f) {
         return "fit a profile to it with `traincast calibrate fit " + std::string(f) + " --base BASE --out PROFILE`";
       }},
  };
  return all;
}

/// Top-level fields set in `m` that `other` has no field of that name for, in declaration order.
std::vector<const pb::FieldDescriptor*> set_fields_unknown_to(const pb::Message& m, const pb::Descriptor* other) {
  std::vector<const pb::FieldDescriptor*> set;
  m.GetReflection()->ListFields(m, &set);
  std::vector<const pb::FieldDescriptor*> out;
  for (const pb::FieldDescriptor* f : set)
    if (other->FindFieldByName(f->name()) == nullptr) out.push_back(f);
  return out;
}

bool before(SourcePos a, SourcePos b) { return a.line != b.line ? a.line < b.line : a.column < b.column; }

}  // namespace

std::optional<std::string> wrong_kind_message(std::string_view text, std::string_view origin, Format format,
                                              const pb::Descriptor* expected) {
  const Kind* mine = nullptr;
  for (const Kind& k : kinds())
    if (k.type == expected) mine = &k;
  if (mine == nullptr) return std::nullopt;
  // Fields the document has that only the expected kind knows rule every other kind out.
  const std::unique_ptr<pb::Message> as_expected = mine->make();
  read_message(text, origin, format, *as_expected);
  // Of the kinds the document could be, the one it reads as with the fewest errors (a measurements
  // file has a `power` field a scenario knows too, but its other fields only a measurements file
  // reads); ties: the order of kinds().
  const Kind* best = nullptr;
  std::unique_ptr<pb::Message> best_message;
  ReadOutcome best_read;
  for (const Kind& k : kinds()) {
    if (&k == mine || !set_fields_unknown_to(*as_expected, k.type).empty()) continue;
    std::unique_ptr<pb::Message> as_other = k.make();
    ReadOutcome read = read_message(text, origin, format, *as_other);
    if (set_fields_unknown_to(*as_other, expected).empty()) continue;
    if (best == nullptr || read.errors.size() < best_read.errors.size()) {
      best = &k;
      best_message = std::move(as_other);
      best_read = std::move(read);
    }
  }
  if (best != nullptr) {
    const Kind& k = *best;
    const ReadOutcome& read = best_read;
    const std::vector<const pb::FieldDescriptor*> only_other = set_fields_unknown_to(*best_message, expected);
    std::string names;
    const pb::FieldDescriptor* first = nullptr;
    SourcePos first_pos;
    for (const pb::FieldDescriptor* f : only_other) {
      names += (names.empty() ? "" : ", ") + f->name();
      const SourcePos pos = read.source_map->locate({PathStep{f, f->is_repeated() ? 0 : -1}});
      if (first == nullptr || before(pos, first_pos)) {
        first = f;
        first_pos = pos;
      }
    }
    return format_pos(origin, first_pos) + ": " + first->name() + ": this is a " + k.noun + ", not a " + mine->noun +
           " (top-level fields " + names + "); " + k.use(origin);
  }
  return std::nullopt;
}

}  // namespace traincast::io::detail
