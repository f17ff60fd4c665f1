#pragma once
/// \file
/// --lifecycle-day-seconds / DEPOT_LIFECYCLE_DAY_SECONDS: how long a "day" of bucket lifecycle rules lasts
/// (registry/lifecycle.hpp). 86400 counts days as S3 does (due at midnight UTC); a few seconds make rules
/// testable, like radosgw's rgw_lc_debug_interval. A testing knob.
///
/// Set by the option parser (config/options.cpp) and read by the cleanup task. It lives outside `options`
/// only because every translation unit of the server includes that struct; fold it in when the struct next
/// changes anyway.

#include <chrono>

namespace depot::config {

/// The length of a lifecycle day (86400 s unless set).
std::chrono::seconds lifecycle_day() noexcept;
/// Sets it; called once while the options are parsed, before any thread starts.
void set_lifecycle_day(std::chrono::seconds day) noexcept;

} // namespace depot::config
