#include "models/io/trace_writer.h"

#include <cinttypes>
#include <cstdio>
#include <ostream>
#include <string>

namespace traincast::io {
namespace {

void write_escaped(std::ostream& out, const std::string& s) {
  out << '"';
  for (const char c : s) {
    switch (c) {
      case '"':
        out << "\\\"";
        break;
      case '\\':
        out << "\\\\";
        break;
      case '\n':
        out << "\\n";
        break;
      case '\t':
        out << "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out << buf;
        } else {
          out << c;
        }
    }
  }
  out << '"';
}

/// Nanoseconds as microseconds with three decimals (exact, no floating point).
void write_us(std::ostream& out, std::int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
  out << buf;
}

}  // namespace

void write_chrome_trace(const sim::TraceRecorder& trace, std::ostream& out) {
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  std::int32_t last_pid = -1;
  for (const auto& t : trace.tracks()) {
    if (t.process_id != last_pid) {
      sep();
      out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << t.process_id << ",\"args\":{\"name\":";
      write_escaped(out, t.process);
      out << "}}";
      sep();
      out << "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" << t.process_id
          << ",\"args\":{\"sort_index\":" << t.process_id << "}}";
      last_pid = t.process_id;
    }
    sep();
    out << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << t.process_id << ",\"tid\":" << t.thread_id
        << ",\"args\":{\"name\":";
    write_escaped(out, t.thread);
    out << "}}";
  }
  for (const auto& s : trace.spans()) {
    const auto& t = trace.tracks()[s.track];
    sep();
    out << "{\"ph\":\"X\",\"name\":";
    write_escaped(out, trace.names()[s.name]);
    out << ",\"pid\":" << t.process_id << ",\"tid\":" << t.thread_id << ",\"ts\":";
    write_us(out, s.start.ns());
    out << ",\"dur\":";
    write_us(out, (s.end - s.start).ns());
    if (s.arg >= 0) out << ",\"args\":{\"micro_batch\":" << s.arg << "}";
    out << "}";
  }
  for (const auto& c : trace.counters()) {
    const auto& t = trace.tracks()[c.track];
    sep();
    out << "{\"ph\":\"C\",\"name\":";
    write_escaped(out, trace.names()[c.name]);
    out << ",\"pid\":" << t.process_id << ",\"ts\":";
    write_us(out, c.at.ns());
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", c.value);
    out << ",\"args\":{\"value\":" << buf << "}}";
  }
  out << "\n]}\n";
}

}  // namespace traincast::io
