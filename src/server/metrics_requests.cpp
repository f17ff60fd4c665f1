#include "server/metrics_requests.hpp"

#include "common/log.hpp"

#include <algorithm>
#include <boost/asio/awaitable.hpp>

namespace depot::server {

namespace asio = boost::asio;

request_metrics::request_metrics(std::span<const std::string_view> operations, metrics::registry& registry)
{
    auto& requests =
        registry.counters("depot_s3_requests_total", "S3 requests answered, by operation and status class.",
                          {"operation", "status_class"});
    auto& durations =
        registry.histograms("depot_s3_request_duration_seconds",
                            "S3 request latency, from the request header to the last response byte.",
                            {"operation"}, metrics::latency_buckets_us(), 1e6);
    auto& received = registry.counters("depot_s3_received_bytes_total",
                                       "Request body bytes read, by operation.", {"operation"});
    auto& sent = registry.counters("depot_s3_sent_bytes_total", "Response body bytes written, by operation.",
                                   {"operation"});
    static constexpr std::array<std::string_view, 5> classes = {"1xx", "2xx", "3xx", "4xx", "5xx"};
    index_.reserve(operations.size());
    for (std::size_t i = 0; i < operations.size(); ++i) {
        const operation_metrics* same = nullptr;
        for (std::size_t j = 0; j < i && !same; ++j)
            if (operations[j] == operations[i])
                same = index_[j];
        if (same) {
            index_.push_back(same);
            continue;
        }
        auto m = std::make_unique<operation_metrics>();
        for (std::size_t c = 0; c < classes.size(); ++c)
            m->by_status_class[c] = &requests.add({operations[i], classes[c]});
        m->duration = &durations.add({operations[i]});
        m->bytes_in = &received.add({operations[i]});
        m->bytes_out = &sent.add({operations[i]});
        index_.push_back(m.get());
        series_.push_back(std::move(m));
    }
    in_flight_ = &registry.gauge_metric("depot_s3_requests_in_flight", "S3 requests being served.");
}

/// The request body as the handler reads it, counted.
class request_record::counting_body final : public depot::byte_source
{
public:
    counting_body(depot::byte_source* inner, std::uint64_t& count) : inner_(inner), count_(count) {}

    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        auto n = co_await inner_->read_some(buf);
        if (n)
            count_ += *n;
        co_return n;
    }

    depot::byte_source* inner() const noexcept { return inner_; }

private:
    depot::byte_source* inner_;
    std::uint64_t& count_;
};

/// The response stream as the session reads it for sending, counted. Keeps the record alive.
class request_record::counting_stream final : public depot::byte_source
{
public:
    counting_stream(std::unique_ptr<depot::byte_source> inner, std::shared_ptr<request_record> record)
        : inner_(std::move(inner)), record_(std::move(record))
    {}

    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        auto n = co_await inner_->read_some(buf);
        if (n)
            record_->bytes_out_ += *n;
        co_return n;
    }

    asio::awaitable<result<std::span<const std::byte>>> read_view(std::size_t max) override
    {
        auto v = co_await inner_->read_view(max);
        if (v)
            record_->bytes_out_ += v->size();
        co_return v;
    }

private:
    std::unique_ptr<depot::byte_source> inner_;
    std::shared_ptr<request_record> record_;
};

request_record::request_record(const request_metrics& metrics, request_context& ctx)
    : metrics_(metrics), request_id_(ctx.request_id), remote_(ctx.remote),
      method_(ctx.header ? std::string(ctx.header->method_string()) : std::string())
{
    metrics_.in_flight().add();
    if (ctx.body) {
        body_ = std::make_unique<counting_body>(ctx.body, bytes_in_);
        ctx.body = body_.get();
    }
}

void request_record::attach(std::shared_ptr<request_record> record, const request_context& ctx,
                            std::size_t operation, std::string_view operation_name,
                            std::string_view error_code, response& res)
{
    auto& r = *record;
    r.attached_ = true;
    r.operation_ = operation;
    r.operation_name_ = operation_name;
    r.bucket_ = ctx.bucket;
    r.key_ = ctx.key;
    r.caller_ = ctx.who.access_key_id;
    r.error_ = error_code;
    r.status_ = static_cast<int>(res.status);
    r.keep_ = std::move(res.keep);
    if (res.stream && !res.head_only) {
        r.bytes_expected_ = res.stream_length;
        res.stream = std::make_unique<counting_stream>(std::move(res.stream), record);
    } else if (!res.head_only && r.status_ >= 200 && r.status_ != 204 && r.status_ != 304) {
        // Small bodies go out in one write; counted as sent (the write's outcome is not reported back).
        r.bytes_out_ = r.bytes_expected_ = res.body.size();
    }
    res.keep = std::move(record);
}

request_record::~request_record()
{
    try {
        const auto micros = metrics::micros_since(started_);
        metrics_.in_flight().sub();
        if (attached_) {
            const auto& m = metrics_.at(operation_);
            const int cls = std::clamp(status_ / 100, 1, 5) - 1;
            m.by_status_class[static_cast<std::size_t>(cls)]->inc();
            m.duration->observe(micros);
            m.bytes_in->inc(bytes_in_);
            m.bytes_out->inc(bytes_out_);
        }
        // Never the Authorization header, a signature or a secret: the caller is the access key id only.
        log::info("request", {{"request_id", request_id_},
                              {"remote", remote_},
                              {"operation", attached_ ? std::string_view(operation_name_) : "Unknown"},
                              {"method", method_},
                              {"bucket", bucket_},
                              {"key", key_},
                              {"status", status_},
                              {"error", error_},
                              {"caller", caller_},
                              {"bytes_in", bytes_in_},
                              {"bytes_out", bytes_out_},
                              {"complete", attached_ && bytes_out_ == bytes_expected_},
                              {"duration_us", micros}});
    } catch (...) {
        // Logging must not turn the end of a request into a crash.
    }
}

} // namespace depot::server
