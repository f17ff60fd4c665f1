#pragma once
/// \file
/// What depotd records about each S3 request: the per-operation series of /metrics and the access-log line.
///
///   depot_s3_requests_total{operation,status_class}     counter ("2xx", "3xx", "4xx", "5xx")
///   depot_s3_request_duration_seconds{operation}        histogram, from the request header to the last
///                                                       response byte
///   depot_s3_received_bytes_total{operation}            request body bytes read (as sent, aws-chunked
///                                                       framing included)
///   depot_s3_sent_bytes_total{operation}                response body bytes written
///   depot_s3_requests_in_flight                         gauge
///
/// A `request_record` follows one request from dispatch until its response is destroyed, which the session
/// does after writing the response's last byte (or giving up on it): only then are the duration and the bytes
/// sent known, so that is when the metrics are updated and the access-log line is written.

#include "common/metrics.hpp"
#include "server/context.hpp"

#include <array>
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace depot::server {

/// The series of one operation, registered once.
struct operation_metrics
{
    std::array<metrics::counter*, 5> by_status_class{}; ///< 1xx .. 5xx
    metrics::histogram* duration = nullptr;
    metrics::counter* bytes_in = nullptr;
    metrics::counter* bytes_out = nullptr;
};

/// Request series for a fixed list of operation names; names listed twice share their series. Registers
/// everything in the constructor, so recording a request is a few atomic increments. Thread-safe after
/// construction.
class request_metrics
{
public:
    request_metrics(std::span<const std::string_view> operations, metrics::registry& registry);
    /// The series of `operations[index]`.
    const operation_metrics& at(std::size_t index) const { return *index_[index]; }
    metrics::gauge& in_flight() const noexcept { return *in_flight_; }

private:
    std::vector<std::unique_ptr<operation_metrics>> series_;
    std::vector<const operation_metrics*> index_;
    metrics::gauge* in_flight_ = nullptr;
};

/// One request in flight. Create it (with make_shared) when dispatch starts and `attach` it to the final
/// response. Counts the request in flight from construction to destruction.
class request_record
{
public:
    /// Starts the clock and makes `ctx.body` count the bytes read through it (the record must outlive every
    /// read of the body, which attach() guarantees by living as long as the response).
    request_record(const request_metrics& metrics, request_context& ctx);
    /// Records the metrics and writes the access-log line. Noexcept; a record destroyed before attach() (the
    /// connection torn down mid-request) logs status 0 and updates only the in-flight gauge.
    ~request_record();
    request_record(const request_record&) = delete;
    request_record& operator=(const request_record&) = delete;

    /// Copies what the access log names from `ctx` (bucket, key, caller), makes `res` own the record (it then
    /// ends with the response) and counts the bytes of `res.stream` as they are read for sending.
    /// `operation` indexes the names given to request_metrics; `error_code` is "" on success.
    static void attach(std::shared_ptr<request_record> record, const request_context& ctx,
                       std::size_t operation, std::string_view operation_name, std::string_view error_code,
                       response& res);

private:
    class counting_body;
    class counting_stream;

    const request_metrics& metrics_;
    const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    std::unique_ptr<counting_body> body_;
    std::uint64_t bytes_in_ = 0;
    std::uint64_t bytes_out_ = 0;
    std::uint64_t bytes_expected_ = 0;
    bool attached_ = false;
    std::size_t operation_ = 0;
    int status_ = 0;
    std::string request_id_, remote_, method_, operation_name_, bucket_, key_, caller_, error_;
    /// What the response kept alive before the record took its place.
    std::shared_ptr<void> keep_;
};

} // namespace depot::server
