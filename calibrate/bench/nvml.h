#pragma once
// NVML (NVIDIA Management Library) loaded at run time with dlopen("libnvidia-ml.so.1"), so that the
// bench builds without the NVML header or library (they come with the driver, not the toolkit).
// Only the few entry points the bench uses are declared, with the signatures of nvml.h
// (NVML API reference, docs.nvidia.com/deploy/nvml-api): every function returns nvmlReturn_t
// (an int, 0 = NVML_SUCCESS); nvmlDevice_t is an opaque pointer.

#include <cstdint>
#include <optional>
#include <string>

namespace traincast::bench {

/// Loaded NVML. Construct once; available() tells whether dlopen and nvmlInit_v2 succeeded
/// (why_unavailable() says why not). Unloads (nvmlShutdown, dlclose) on destruction.
class Nvml {
 public:
  Nvml();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const { return init_done_; }
  const std::string& why_unavailable() const { return why_; }

  /// The device with PCI bus id `pci_bus_id` ("0000:3b:00.0", as cudaDeviceGetPCIBusId gives), or
  /// nullptr. Matching by bus id, not index, because CUDA and NVML may number devices differently.
  void* device_by_pci_bus_id(const std::string& pci_bus_id) const;

  std::optional<std::string> driver_version() const;  ///< nvmlSystemGetDriverVersion
  /// nvmlDeviceGetPowerUsage [mW] / 1000; a 1 s average on Ampere (except GA100) and later.
  std::optional<double> power_w(void* device) const;
  std::optional<double> enforced_power_limit_w(void* device) const;  ///< nvmlDeviceGetEnforcedPowerLimit
  std::optional<double> temperature_c(void* device) const;           ///< nvmlDeviceGetTemperature(GPU sensor)
  std::optional<double> sm_clock_mhz(void* device) const;            ///< nvmlDeviceGetClockInfo(NVML_CLOCK_SM)
  std::optional<double> max_sm_clock_mhz(void* device) const;        ///< nvmlDeviceGetMaxClockInfo(SM)
  std::optional<double> max_memory_clock_mhz(void* device) const;    ///< nvmlDeviceGetMaxClockInfo(MEM)
  /// nvmlDeviceGetCurrentClocksEventReasons (driver >= 535), else the older
  /// nvmlDeviceGetCurrentClocksThrottleReasons: NVML's bit mask (0x1 GPU idle, 0x4 SW power cap,
  /// 0x8 HW slowdown, 0x20 SW thermal slowdown, 0x40 HW thermal slowdown, 0x80 HW power brake).
  std::optional<uint64_t> throttle_reasons(void* device) const;

 private:
  using Fn0 = int (*)();
  using FnGetHandleByPci = int (*)(const char*, void**);
  using FnDriverVersion = int (*)(char*, unsigned int);
  using FnUInt = int (*)(void*, unsigned int*);
  using FnTemperature = int (*)(void*, int, unsigned int*);
  using FnClock = int (*)(void*, int, unsigned int*);
  using FnULongLong = int (*)(void*, unsigned long long*);
  using FnErrorString = const char* (*)(int);

  void* lib_ = nullptr;
  bool init_done_ = false;
  std::string why_;
  Fn0 shutdown_ = nullptr;
  FnGetHandleByPci get_handle_by_pci_ = nullptr;
  FnDriverVersion driver_version_ = nullptr;
  FnUInt power_usage_ = nullptr;
  FnUInt enforced_power_limit_ = nullptr;
  FnTemperature temperature_ = nullptr;
  FnClock clock_info_ = nullptr;
  FnClock max_clock_info_ = nullptr;
  FnULongLong throttle_reasons_ = nullptr;
  FnErrorString error_string_ = nullptr;
};

}  // namespace traincast::bench
