#include "workloads.hpp"

#include "common/uri.hpp"
#include "s3_client.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <functional>
#include <random>
#include <stdexcept>

namespace depot::bench {

using clock_type = std::chrono::steady_clock;

namespace {

std::string describe_failure(const request& req, const response& resp)
{
    std::string what = std::string(req.method) + ' ' + req.target + ": HTTP " + std::to_string(resp.status);
    auto code = xml_value(resp.body, "Code");
    if (!code.empty())
        what += ' ' + code;
    auto message = xml_value(resp.body, "Message");
    if (!message.empty())
        what += " (" + message + ')';
    return what;
}

/// One run: shared state of all clients. Everything runs on one thread, so no locking.
class bench_run
{
public:
    explicit bench_run(const options& o) : o_(o), content_(o.content, o.seed), rng_(o.seed)
    {
        report_.workload = std::string(workload_name(o.kind));
        report_.label = o.label;
        report_.endpoint = o.endpoint;
        report_.object_size = o.size;
        report_.concurrency = o.concurrency;
        report_.content = o.content == content_kind::random ? "random" : "fixed";
    }

    run_report run()
    {
        progress("bucket " + o_.bucket);
        run_clients(1, [this](connection& c) -> asio::awaitable<void> { co_await create_bucket(c); });

        prepare_count_ = prepared_keys();
        if (prepare_count_ != 0 && !o_.skip_prepare) {
            progress("preparing " + std::to_string(prepare_count_) + " keys of " + format_size(o_.size));
            auto t0 = clock_type::now();
            run_clients(o_.concurrency,
                        [this](connection& c) -> asio::awaitable<void> { co_await prepare(c); });
            report_.prepare_s = seconds_since(t0);
            report_.prepared = prepare_count_;
            if (prepare_failures_ != 0)
                throw std::runtime_error("preparing keys failed " + std::to_string(prepare_failures_) +
                                         " times, e.g. " + first_prepare_error_);
        }
        next_id_ = prepare_count_;
        for (std::uint64_t id = 0; id < prepare_count_; ++id)
            live_.push_back(id);

        progress("running " + report_.workload +
                 (o_.ops != 0 ? " for " + std::to_string(o_.ops) + " operations"
                              : " for " + std::to_string(o_.duration.count()) + " ms"));
        start_ = clock_type::now();
        deadline_ = start_ + o_.duration;
        run_clients(o_.concurrency, [this](connection& c) -> asio::awaitable<void> { co_await client(c); });
        report_.elapsed_s = seconds_since(start_);

        if (o_.cleanup) {
            cleanup_next_ = 0;
            progress("cleanup: deleting " + std::to_string(next_id_) + " keys");
            run_clients(o_.concurrency,
                        [this](connection& c) -> asio::awaitable<void> { co_await cleanup(c); });
        }
        return std::move(report_);
    }

private:
    const options& o_;
    content_generator content_;
    std::mt19937_64 rng_;
    run_report report_;
    asio::io_context ioc_{1};

    clock_type::time_point start_, deadline_;
    std::uint64_t issued_ = 0; ///< measured operations started
    std::uint64_t prepare_count_ = 0;
    std::uint64_t prepare_next_ = 0;
    std::uint64_t prepare_failures_ = 0;
    std::string first_prepare_error_;
    std::uint64_t next_id_ = 0;       ///< ids below this may exist (cleanup deletes them all)
    std::vector<std::uint64_t> live_; ///< keys that exist (get/head/delete/mixed pick from here)
    std::uint64_t delete_next_ = 0;
    std::uint64_t cleanup_next_ = 0;

    static double seconds_since(clock_type::time_point t)
    {
        return std::chrono::duration<double>(clock_type::now() - t).count();
    }

    void progress(const std::string& what) const
    {
        if (!o_.quiet)
            std::fprintf(stderr, "depot-bench: %s%s%s\n", o_.label.empty() ? "" : o_.label.c_str(),
                         o_.label.empty() ? "" : ": ", what.c_str());
    }

    /// Keys written before the measured phase.
    std::uint64_t prepared_keys() const
    {
        if (o_.objects != 0)
            return o_.objects;
        switch (o_.kind) {
        case workload::get:
        case workload::head:
        case workload::mixed: {
            std::uint64_t by_bytes = (1ull << 30) / std::max<std::uint64_t>(o_.size, 1);
            return std::clamp<std::uint64_t>(by_bytes, o_.concurrency, 256);
        }
        case workload::del:
            return o_.ops != 0 ? o_.ops : 1000;
        case workload::list:
            return 10000;
        case workload::storm:
            return 8;
        default:
            return 0;
        }
    }

    /// Runs `n` coroutines, each with its own connection, until all finish.
    void run_clients(unsigned n, const std::function<asio::awaitable<void>(connection&)>& body)
    {
        std::vector<std::unique_ptr<connection>> conns;
        std::exception_ptr failure;
        for (unsigned i = 0; i < n; ++i) {
            conns.push_back(std::make_unique<connection>(ioc_.get_executor(), o_));
            auto* c = conns.back().get();
            asio::co_spawn(ioc_, body(*c), [&failure](std::exception_ptr e) {
                if (e && !failure)
                    failure = e;
            });
        }
        ioc_.restart();
        ioc_.run();
        if (failure)
            std::rethrow_exception(failure);
    }

    std::string target_of(std::uint64_t id, std::string_view query = {}) const
    {
        std::string t = "/" + uri_encode(o_.bucket) + "/" + uri_encode(object_key(o_.prefix, id), true);
        if (!query.empty())
            t.append("?").append(query);
        return t;
    }

    /// Sends and records one measured operation; false when it failed (counted as an error).
    /// `ok` and `also_ok` are the expected statuses (0: none). No initializer lists or string temporaries
    /// here: callers' co_await expressions must not create them (GCC 12 coroutine bug).
    asio::awaitable<bool> measured(connection& c, std::string_view op, const request& req, unsigned ok,
                                   unsigned also_ok, std::uint64_t expected_bytes, response* out = nullptr)
    {
        auto& stats = report_.ops[std::string(op)];
        std::string error;
        response resp;
        try {
            resp = co_await c.send(req);
        } catch (const std::exception& e) {
            error = std::string(req.method) + ' ' + req.target + ": " + e.what();
        }
        if (error.empty()) {
            if (resp.status != ok && (also_ok == 0 || resp.status != also_ok))
                error = describe_failure(req, resp);
            else if (req.method == "GET" && expected_bytes != 0 && resp.body_bytes != expected_bytes)
                error = "GET " + req.target + ": " + std::to_string(resp.body_bytes) + " bytes instead of " +
                        std::to_string(expected_bytes);
        }
        if (!error.empty()) {
            ++stats.errors;
            if (report_.error_samples.size() < 5)
                report_.error_samples.push_back(error);
            co_return false;
        }
        ++stats.count;
        stats.bytes += req.body ? req.body_size : resp.body_bytes;
        stats.latency.add(resp.total);
        stats.ttfb.add(resp.ttfb);
        if (out)
            *out = std::move(resp);
        co_return true;
    }

    asio::awaitable<void> create_bucket(connection& c)
    {
        request req{.method = "PUT", .target = "/" + uri_encode(o_.bucket), .has_body = true};
        auto resp = co_await c.send(req);
        if (resp.status != 200 && resp.status != 409)
            throw std::runtime_error("cannot create the bucket: " + describe_failure(req, resp));
    }

    request put_request(std::uint64_t id) const
    {
        return request{.method = "PUT",
                       .target = target_of(id),
                       .body_size = o_.size,
                       .body = &content_,
                       .object_id = id,
                       .has_body = true};
    }

    asio::awaitable<void> prepare(connection& c)
    {
        while (prepare_next_ < prepare_count_ && prepare_failures_ < 10) {
            std::uint64_t id = prepare_next_++;
            std::string error;
            auto req = put_request(id);
            try {
                auto resp = co_await c.send(req);
                if (resp.status != 200)
                    error = describe_failure(req, resp);
            } catch (const std::exception& e) {
                error = std::string(e.what());
            }
            if (!error.empty()) {
                if (prepare_failures_++ == 0)
                    first_prepare_error_ = error;
            }
        }
    }

    /// Takes a ticket for one more measured operation; false when the run is over.
    bool ticket()
    {
        if (o_.ops != 0)
            return issued_++ < o_.ops;
        return clock_type::now() < deadline_;
    }

    std::uint64_t random_below(std::uint64_t n)
    {
        return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_);
    }

    asio::awaitable<void> client(connection& c)
    {
        switch (o_.kind) {
        case workload::storm:
            co_await op_pull(c);
            co_return;
        case workload::list:
            while (true) {
                bool more = co_await full_listing(c);
                if (!more)
                    break;
            }
            co_return;
        default:
            break;
        }
        while (ticket()) {
            switch (o_.kind) {
            case workload::put:
                co_await op_put(c);
                break;
            case workload::get:
                co_await op_get(c);
                break;
            case workload::head:
                co_await op_head(c);
                break;
            case workload::del:
                if (!co_await op_delete_next(c))
                    co_return;
                break;
            case workload::mixed:
                co_await op_mixed(c);
                break;
            case workload::multipart:
                co_await op_multipart(c);
                break;
            case workload::list:
            case workload::storm:
                break;
            }
        }
    }

    /// One replica's pull: every prepared key, whole, in order (all replicas start at the same moment, so
    /// they ask for the same file at about the same time: the cold-cache case single flight is for).
    asio::awaitable<void> op_pull(connection& c)
    {
        auto start = clock_type::now();
        std::uint64_t bytes = 0;
        bool ok = true;
        for (std::uint64_t id = 0; ok && id < prepare_count_; ++id) {
            request req{.method = "GET", .target = target_of(id)};
            ok = co_await measured(c, "get", req, 200, 0, o_.size);
            bytes += o_.size;
        }
        auto& pull = report_.ops["pull"];
        if (!ok) {
            ++pull.errors;
            co_return;
        }
        ++pull.count;
        pull.bytes += bytes;
        pull.latency.add(clock_type::now() - start);
        pull.ttfb.add(clock_type::now() - start);
    }

    asio::awaitable<void> op_put(connection& c)
    {
        std::uint64_t id = next_id_++;
        auto req = put_request(id);
        if (co_await measured(c, "put", req, 200, 0, 0))
            live_.push_back(id);
    }

    std::uint64_t pick_live() { return live_[static_cast<std::size_t>(random_below(live_.size()))]; }

    asio::awaitable<void> op_get(connection& c)
    {
        if (live_.empty()) {
            co_await op_put(c);
            co_return;
        }
        request req{.method = "GET", .target = target_of(pick_live())};
        std::uint64_t expected = o_.size;
        if (o_.range_size && *o_.range_size < o_.size) {
            std::uint64_t offset = random_below(o_.size - *o_.range_size + 1);
            req.headers.emplace_back("range", "bytes=" + std::to_string(offset) + '-' +
                                                  std::to_string(offset + *o_.range_size - 1));
            expected = *o_.range_size;
            co_await measured(c, "get", req, 206, 0, expected);
        } else {
            co_await measured(c, "get", req, 200, 0, expected);
        }
    }

    asio::awaitable<void> op_head(connection& c)
    {
        if (live_.empty()) {
            co_await op_put(c);
            co_return;
        }
        request req{.method = "HEAD", .target = target_of(pick_live()), .head = true};
        co_await measured(c, "head", req, 200, 0, 0);
    }

    asio::awaitable<bool> op_delete_next(connection& c)
    {
        if (delete_next_ >= prepare_count_)
            co_return false;
        request req{.method = "DELETE", .target = target_of(delete_next_++)};
        co_await measured(c, "delete", req, 204, 200, 0);
        co_return true;
    }

    asio::awaitable<void> op_mixed(connection& c)
    {
        auto roll = random_below(o_.mix.total());
        if (roll < o_.mix.get) {
            co_await op_get(c);
        } else if (roll < o_.mix.get + o_.mix.put) {
            co_await op_put(c);
        } else if (roll < o_.mix.get + o_.mix.put + o_.mix.head) {
            co_await op_head(c);
        } else if (live_.empty()) {
            co_await op_put(c);
        } else {
            // Remove the key from the pool first, so no other client starts a read of it.
            auto index = static_cast<std::size_t>(random_below(live_.size()));
            std::uint64_t id = live_[index];
            live_[index] = live_.back();
            live_.pop_back();
            request req{.method = "DELETE", .target = target_of(id)};
            co_await measured(c, "delete", req, 204, 200, 0);
        }
    }

    asio::awaitable<void> op_multipart(connection& c)
    {
        std::uint64_t id = next_id_++;
        auto start = clock_type::now();
        request create{
            .method = "POST", .target = target_of(id, "uploads"), .has_body = true, .capture_body = true};
        response created;
        if (!co_await measured(c, "mp_create", create, 200, 0, 0, &created))
            co_return;
        auto upload_id = xml_value(created.body, "UploadId");
        auto upload_query = "uploadId=" + uri_encode(upload_id);
        std::string complete_xml = "<CompleteMultipartUpload>";
        bool ok = !upload_id.empty();
        if (!ok && report_.error_samples.size() < 5)
            report_.error_samples.push_back("CreateMultipartUpload returned no UploadId");
        std::uint64_t parts = (o_.size + o_.part_size - 1) / o_.part_size;
        for (std::uint64_t n = 1; ok && n <= parts; ++n) {
            std::uint64_t offset = (n - 1) * o_.part_size;
            request part{.method = "PUT",
                         .target = target_of(id, "partNumber=" + std::to_string(n) + '&' + upload_query),
                         .body_size = std::min(o_.part_size, o_.size - offset),
                         .body = &content_,
                         .object_id = id,
                         .body_offset = offset,
                         .has_body = true};
            response uploaded;
            ok = co_await measured(c, "mp_part", part, 200, 0, 0, &uploaded);
            complete_xml += "<Part><PartNumber>" + std::to_string(n) + "</PartNumber><ETag>" + uploaded.etag +
                            "</ETag></Part>";
        }
        complete_xml += "</CompleteMultipartUpload>";
        if (ok) {
            request complete{.method = "POST",
                             .target = target_of(id, upload_query),
                             .body_text = complete_xml,
                             .has_body = true,
                             .capture_body = true};
            response completed;
            ok = co_await measured(c, "mp_complete", complete, 200, 0, 0, &completed);
            // CompleteMultipartUpload may answer 200 with an error document.
            if (ok && completed.body.find("<Error>") != std::string::npos) {
                ok = false;
                ++report_.ops["mp_complete"].errors;
                if (report_.error_samples.size() < 5)
                    report_.error_samples.push_back("CompleteMultipartUpload: " +
                                                    completed.body.substr(0, 300));
            }
        }
        auto& whole = report_.ops["multipart"];
        if (!ok) {
            ++whole.errors;
            if (!upload_id.empty()) {
                request abort{.method = "DELETE", .target = target_of(id, upload_query)};
                try {
                    co_await c.send(abort);
                } catch (const std::exception&) {
                    // Best effort: an upload left behind is reclaimed by the server's own expiry.
                }
            }
            co_return;
        }
        live_.push_back(id);
        ++whole.count;
        whole.bytes += o_.size;
        whole.latency.add(clock_type::now() - start);
        whole.ttfb.add(clock_type::now() - start);
    }

    /// One full listing of the prefix, page by page; false when the run is over.
    asio::awaitable<bool> full_listing(connection& c)
    {
        std::string token;
        std::uint64_t keys = 0;
        while (true) {
            if (!ticket())
                co_return false;
            std::string query = "list-type=2&max-keys=" + std::to_string(o_.page_size) +
                                "&prefix=" + uri_encode(o_.prefix + "/");
            if (!token.empty())
                query += "&continuation-token=" + uri_encode(token);
            request req{
                .method = "GET", .target = "/" + uri_encode(o_.bucket) + "?" + query, .capture_body = true};
            response page;
            if (!co_await measured(c, "list", req, 200, 0, 0, &page))
                co_return true; // start over
            auto n = xml_count(page.body, "Key");
            keys += n;
            report_.keys_listed += n;
            if (xml_value(page.body, "IsTruncated") != "true")
                break;
            token = xml_value(page.body, "NextContinuationToken");
            if (token.empty()) {
                ++report_.ops["list"].errors;
                if (report_.error_samples.size() < 5)
                    report_.error_samples.push_back("truncated listing page without NextContinuationToken");
                co_return true;
            }
        }
        if (keys != prepare_count_) {
            ++report_.ops["list"].errors;
            if (report_.error_samples.size() < 5)
                report_.error_samples.push_back("a full listing returned " + std::to_string(keys) +
                                                " keys instead of " + std::to_string(prepare_count_));
        }
        co_return true;
    }

    asio::awaitable<void> cleanup(connection& c)
    {
        while (cleanup_next_ < next_id_) {
            request req{.method = "DELETE", .target = target_of(cleanup_next_++)};
            try {
                co_await c.send(req);
            } catch (const std::exception&) {
                // Not measured; the bucket is only a benchmark's.
            }
        }
    }
};

} // namespace

run_report run_workload(const options& o)
{
    bench_run run(o);
    return run.run();
}

} // namespace depot::bench
