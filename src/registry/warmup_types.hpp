#pragma once
/// \file
/// Warm-up jobs and their progress as the registry reports them (registry/service/warmups.hpp).

#include "registry/types.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace depot::registry {

struct warmup_instance_progress
{
    std::string instance;
    std::string state; ///< running, completed, failed
    std::int64_t files_total = 0;
    std::int64_t files_done = 0;
    std::int64_t bytes_total = 0;
    std::int64_t bytes_done = 0;
    std::int64_t errors = 0;
    std::optional<std::string> last_error;
    time_point started_at;
    time_point updated_at;
};

struct warmup_job
{
    std::int64_t id = 0;
    std::int64_t team_id = 0;
    std::int64_t model_id = 0;
    std::int64_t version_id = 0;
    std::string team;
    std::string model;
    int version = 0;
    std::optional<std::string> alias;
    std::string trigger; ///< api, version.approved, alias.updated
    std::string state;   ///< running, completed, failed
    std::vector<std::string> instances;
    std::string requested_by;
    time_point created_at;
    std::optional<time_point> finished_at;
    std::int64_t files_total = 0; ///< of the version
    std::int64_t bytes_total = 0;
    std::vector<warmup_instance_progress> progress; ///< filled by get() and list()
};

/// A byte range of a blob that holds part of a file.
struct warmup_segment
{
    std::string store_id;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

struct warmup_file
{
    std::string path;
    std::uint64_t size = 0;
    std::vector<warmup_segment> segments;
};

/// The final (or intermediate) numbers of one instance's run of a job.
struct warmup_report
{
    std::string state = "running"; ///< running, completed, failed
    std::int64_t files_done = 0;
    std::int64_t bytes_done = 0;
    std::int64_t errors = 0;
    std::optional<std::string> last_error;
};

} // namespace depot::registry
