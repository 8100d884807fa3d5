// The run summary's number formatting (declared in summary.h): counts, money, durations, bytes,
// energy, FLOPs, with their units.
#include "tools/cli/summary.h"

#include <cstddef>
#include <cstdio>
#include <string>

namespace traincast::cli {

std::string with_thousands(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  std::string s = buf, out;
  const std::size_t neg = (!s.empty() && s[0] == '-') ? 1 : 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    out += s[i];
    const std::size_t left = s.size() - i - 1;
    if (i >= neg && left > 0 && left % 3 == 0) out += ',';
  }
  return out;
}

std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}
std::string lpad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string format_fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string format_power(double watts) {
  return watts >= 1e6 ? format_fixed(watts / 1e6, 2) + " MW" : format_fixed(watts / 1e3, 1) + " kW";
}

std::string count_of(long long n, const std::string& noun) {
  const bool es = !noun.empty() && (noun.back() == 'h' || noun.back() == 's');
  return std::to_string(n) + " " + noun + (n == 1 ? "" : es ? "es" : "s");
}

std::string format_energy_kwh(double kwh) {
  // Three significant figures at least ("5 MWh" was 4.93): 4.93, 49.3, then whole MWh from 100.
  if (kwh >= 1000) {
    const double mwh = kwh / 1000;
    return (mwh < 10 ? format_fixed(mwh, 2) : mwh < 100 ? format_fixed(mwh, 1) : with_thousands(mwh)) + " MWh";
  }
  return kwh >= 10 ? with_thousands(kwh) + " kWh" : format_fixed(kwh, 2) + " kWh";
}

std::string format_energy(double joules) {
  constexpr double kJoulesPerWh = 3600.0;
  std::string out;
  if (joules >= 1000 * kJoulesPerWh) {
    out = format_fixed(joules / (1000 * kJoulesPerWh), 3);
    out += " kWh";
  } else if (joules >= kJoulesPerWh) {
    out = format_fixed(joules / kJoulesPerWh, 1);
    out += " Wh";
  } else {
    out = format_fixed(joules, 1);
    out += " J";
  }
  return out;
}

// Strings here are built by appending: GCC 12's -O2/-O3 inlining of operator+(const char*,
// std::string&&) and of assign(const char*) warns a bogus -Wrestrict (GCC bug 105651).
std::string signed_fixed(double value, int decimals) {
  std::string s = value >= 0 ? "+" : "";
  s += format_fixed(value, decimals);
  return s;
}

std::string format_duration(double s) {
  if (s < 1e-3) return format_fixed(s * 1e6, 1) + " µs";
  if (s < 1.0) return format_fixed(s * 1e3, 2) + " ms";
  if (s < 3600.0) return format_fixed(s, 3) + " s";
  if (s < 86400.0 * 2) return format_fixed(s / 3600.0, 2) + " h";
  return format_fixed(s / 86400.0, 1) + " days";
}

std::string format_gib(double bytes) {
  if (bytes < 1073741824.0 && bytes > 0) return format_fixed(bytes / 1048576.0, 1) + " MiB";
  return format_fixed(bytes / 1073741824.0, 1) + " GiB";
}

std::string format_memory_need(double need_bytes, double have_bytes) {
  std::string need = format_gib(need_bytes), have = format_gib(have_bytes);
  if (need == have) {
    need = format_fixed(need_bytes / 1073741824.0, 3) + " GiB";
    have = format_fixed(have_bytes / 1073741824.0, 3) + " GiB";
  }
  std::string s = need;
  s += " per GPU of " + have;
  if (need_bytes > have_bytes) s += ", " + format_gib(need_bytes - have_bytes) + " over";
  return s;
}

std::string format_flop(double flop) {
  const char* units[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP", "ZFLOP"};
  int u = 0;
  while (flop >= 1000.0 && u < 7) flop /= 1000.0, ++u;
  return format_fixed(flop, flop < 10 ? 2 : 1) + " " + units[u];
}

}  // namespace traincast::cli
