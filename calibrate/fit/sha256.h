#pragma once
// SHA-256 (FIPS 180-4) of a byte string, as 64 lower-case hex digits: the fingerprint a profile
// records of each file it was fitted from (checkable with `sha256sum`).

#include <string>
#include <string_view>

namespace traincast::calibrate {

std::string sha256_hex(std::string_view data);

}  // namespace traincast::calibrate
