#include "calibrate/bench/nvml.h"

#include <dlfcn.h>

namespace traincast::bench {

namespace {

// nvml.h constants (NVML API reference): nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU = 0;
// nvmlClockType_t NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2; nvmlReturn_t NVML_SUCCESS = 0.
constexpr int kNvmlSuccess = 0;
constexpr int kTemperatureGpu = 0;
constexpr int kClockSm = 1;
constexpr int kClockMem = 2;

template <typename F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

}  // namespace

Nvml::Nvml() {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    const char* e = dlerror();
    why_ = std::string("dlopen(libnvidia-ml.so.1) failed: ") + (e ? e : "unknown error");
    return;
  }
  auto init = symbol<Fn0>(lib_, "nvmlInit_v2");
  shutdown_ = symbol<Fn0>(lib_, "nvmlShutdown");
  get_handle_by_pci_ = symbol<FnGetHandleByPci>(lib_, "nvmlDeviceGetHandleByPciBusId_v2");
  driver_version_ = symbol<FnDriverVersion>(lib_, "nvmlSystemGetDriverVersion");
  power_usage_ = symbol<FnUInt>(lib_, "nvmlDeviceGetPowerUsage");
  enforced_power_limit_ = symbol<FnUInt>(lib_, "nvmlDeviceGetEnforcedPowerLimit");
  temperature_ = symbol<FnTemperature>(lib_, "nvmlDeviceGetTemperature");
  clock_info_ = symbol<FnClock>(lib_, "nvmlDeviceGetClockInfo");
  max_clock_info_ = symbol<FnClock>(lib_, "nvmlDeviceGetMaxClockInfo");
  throttle_reasons_ = symbol<FnULongLong>(lib_, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!throttle_reasons_) throttle_reasons_ = symbol<FnULongLong>(lib_, "nvmlDeviceGetCurrentClocksThrottleReasons");
  error_string_ = symbol<FnErrorString>(lib_, "nvmlErrorString");
  if (!init || !shutdown_ || !get_handle_by_pci_) {
    why_ = "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlShutdown or nvmlDeviceGetHandleByPciBusId_v2 (driver too old)";
    return;
  }
  const int rc = init();
  if (rc != kNvmlSuccess) {
    why_ = std::string("nvmlInit_v2 failed: ") + (error_string_ ? error_string_(rc) : std::to_string(rc));
    return;
  }
  init_done_ = true;
}

Nvml::~Nvml() {
  if (init_done_ && shutdown_) shutdown_();
  if (lib_) dlclose(lib_);
}

void* Nvml::device_by_pci_bus_id(const std::string& pci_bus_id) const {
  if (!init_done_) return nullptr;
  void* device = nullptr;
  return get_handle_by_pci_(pci_bus_id.c_str(), &device) == kNvmlSuccess ? device : nullptr;
}

std::optional<std::string> Nvml::driver_version() const {
  if (!init_done_ || !driver_version_) return std::nullopt;
  char buf[96] = {};  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80
  if (driver_version_(buf, sizeof buf) != kNvmlSuccess) return std::nullopt;
  return std::string(buf);
}

namespace {

std::optional<double> uint_query(int (*fn)(void*, unsigned int*), void* device, double scale) {
  if (!fn || !device) return std::nullopt;
  unsigned int v = 0;
  if (fn(device, &v) != kNvmlSuccess) return std::nullopt;
  return v * scale;
}

std::optional<double> typed_query(int (*fn)(void*, int, unsigned int*), void* device, int type) {
  if (!fn || !device) return std::nullopt;
  unsigned int v = 0;
  if (fn(device, type, &v) != kNvmlSuccess) return std::nullopt;
  return static_cast<double>(v);
}

}  // namespace

std::optional<double> Nvml::power_w(void* device) const { return uint_query(power_usage_, device, 1e-3); }

std::optional<double> Nvml::enforced_power_limit_w(void* device) const {
  return uint_query(enforced_power_limit_, device, 1e-3);
}

std::optional<double> Nvml::temperature_c(void* device) const {
  return typed_query(temperature_, device, kTemperatureGpu);
}

std::optional<double> Nvml::sm_clock_mhz(void* device) const { return typed_query(clock_info_, device, kClockSm); }

std::optional<double> Nvml::max_sm_clock_mhz(void* device) const {
  return typed_query(max_clock_info_, device, kClockSm);
}

std::optional<double> Nvml::max_memory_clock_mhz(void* device) const {
  return typed_query(max_clock_info_, device, kClockMem);
}

std::optional<uint64_t> Nvml::throttle_reasons(void* device) const {
  if (!throttle_reasons_ || !device) return std::nullopt;
  unsigned long long v = 0;
  if (throttle_reasons_(device, &v) != kNvmlSuccess) return std::nullopt;
  return static_cast<uint64_t>(v);
}

}  // namespace traincast::bench
