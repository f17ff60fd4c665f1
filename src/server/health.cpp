#include "server/health.hpp"

#include "common/json.hpp"
#include "common/log.hpp"
#include "common/metrics.hpp"
#include "registry/pg/migrations.hpp"
#include "server/services.hpp"

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <mutex>
#include <optional>
#include <vector>

namespace depot::server {

namespace asio = boost::asio;
namespace {

constexpr auto probe_timeout = std::chrono::seconds(2);
/// How long one probe's answer serves every /readyz call. /readyz needs no credentials, so without this a
/// client looping on it would cost a database query and a store call per request; a load balancer polling
/// every few seconds sees a result at most this old.
constexpr auto probe_reuse = std::chrono::seconds(1);
/// A valid blob id that no store generates (ids are 32 hex characters): stat() answers not_found.
constexpr std::string_view probe_blob = "depotreadinessprobe";

struct checks
{
    std::string database = "timeout";
    std::string migrations = "timeout";
    std::string blob_store = "timeout";
    std::string detail; ///< for the log only
};

/// One probe and the calls waiting for it. Calls arrive on their own connections' strands: each waits on a
/// timer of its own, which the probe cancels (on that timer's executor) when it is done.
struct flight
{
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    std::mutex mutex;
    bool done = false;
    checks result;
    std::vector<std::shared_ptr<asio::steady_timer>> waiters;
};

/// The probe in flight, if any, and the last finished probe's result. Process-wide (one depotd serves one
/// database and one store).
struct probe_cache
{
    std::mutex mutex;
    std::shared_ptr<flight> current;
    std::optional<checks> last;
    std::chrono::steady_clock::time_point last_finished;
};

probe_cache& cache()
{
    static probe_cache c;
    return c;
}

metrics::counter& probes_metric()
{
    static metrics::counter& c = metrics::default_registry().counter_metric(
        "depot_readiness_probes_total",
        "Database and blob store probes run for /readyz (concurrent and repeated calls share one).");
    return c;
}

asio::awaitable<void> probe(services& svc, std::shared_ptr<flight> f)
{
    checks st;
    try {
        auto conn = co_await svc.db->acquire();
        auto status = co_await pg::migration_state(*conn);
        st.database = "ok";
        st.migrations = status.current == status.latest  ? "ok"
                        : status.current < status.latest ? "behind"
                                                         : "ahead";
        if (st.migrations != "ok")
            st.detail += "schema version " + std::to_string(status.current) + ", this depotd needs " +
                         std::to_string(status.latest) + "; ";
    } catch (const std::exception& e) {
        st.database = "unreachable";
        st.migrations = "unknown";
        st.detail += std::string("database: ") + e.what() + "; ";
    }
    try {
        const storage::blob_id id(probe_blob);
        auto r = co_await svc.blobs->stat(id);
        if (r || r.error().code == errc::not_found) {
            st.blob_store = "ok";
        } else {
            st.blob_store = "unreachable";
            st.detail += "blob store: " + r.error().message + "; ";
        }
    } catch (const std::exception& e) {
        st.blob_store = "unreachable";
        st.detail += std::string("blob store: ") + e.what() + "; ";
    }
    {
        auto& c = cache();
        std::lock_guard lock(c.mutex);
        c.last = st;
        c.last_finished = std::chrono::steady_clock::now();
        if (c.current == f)
            c.current.reset();
    }
    std::vector<std::shared_ptr<asio::steady_timer>> waiters;
    {
        std::lock_guard lock(f->mutex);
        f->result = std::move(st);
        f->done = true;
        waiters.swap(f->waiters);
    }
    for (auto& t : waiters)
        asio::post(t->get_executor(), [t] { t->cancel(); });
}

/// The checks for one /readyz call: the last result while it is younger than probe_reuse, else the result
/// of the probe in flight (started now if none is, or if the one in flight has outlived its timeout), or
/// "timeout" for the checks it has not answered within probe_timeout of its start.
asio::awaitable<checks> current_checks(services& svc)
{
    auto ex = co_await asio::this_coro::executor;
    std::shared_ptr<flight> f;
    {
        auto& c = cache();
        std::lock_guard lock(c.mutex);
        const auto now = std::chrono::steady_clock::now();
        if (c.last && now - c.last_finished < probe_reuse)
            co_return *c.last;
        if (!c.current || now - c.current->started >= probe_timeout) {
            c.current = std::make_shared<flight>();
            probes_metric().inc();
            asio::co_spawn(ex, probe(svc, c.current), asio::detached);
        }
        f = c.current;
    }
    auto timer = std::make_shared<asio::steady_timer>(ex);
    timer->expires_at(f->started + probe_timeout);
    {
        std::lock_guard lock(f->mutex);
        if (f->done)
            co_return f->result;
        f->waiters.push_back(timer);
    }
    boost::system::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    std::lock_guard lock(f->mutex);
    if (f->done)
        co_return f->result;
    std::erase(f->waiters, timer);
    checks timed_out;
    timed_out.detail = "checks timed out";
    co_return timed_out;
}

} // namespace

void register_readiness_metrics()
{
    (void)probes_metric();
}

asio::awaitable<response> readiness_response(services& svc)
{
    static std::atomic<int> last_state{-1}; // -1 unknown, 0 unready, 1 ready; for logging changes only
    response res;
    try {
        const checks st = co_await current_checks(svc);
        const bool ready = st.database == "ok" && st.migrations == "ok" && st.blob_store == "ok";
        boost::json::object body;
        body["status"] = ready ? "ready" : "unready";
        body["checks"] = boost::json::object{{"database", json_string(st.database)},
                                             {"migrations", json_string(st.migrations)},
                                             {"blob_store", json_string(st.blob_store)}};
        res.status = ready ? http::status::ok : http::status::service_unavailable;
        res.body = boost::json::serialize(body) + "\n";
        if (last_state.exchange(ready ? 1 : 0) != (ready ? 1 : 0)) {
            if (ready)
                log::info("ready");
            else
                log::warn("not ready", {{"database", st.database},
                                        {"migrations", st.migrations},
                                        {"blob_store", st.blob_store},
                                        {"detail", st.detail}});
        }
    } catch (const std::exception& e) {
        res.status = http::status::service_unavailable;
        res.body = "{\"status\":\"unready\"}\n";
        log::warn("readiness check failed", {{"error", e.what()}});
    }
    res.headers.set(http::field::content_type, "application/json");
    res.headers.set(http::field::cache_control, "no-store");
    co_return res;
}

} // namespace depot::server
