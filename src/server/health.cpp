#include "server/health.hpp"

#include "common/log.hpp"
#include "registry/pg/migrations.hpp"
#include "server/services.hpp"

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <nlohmann/json.hpp>

namespace depot::server {

namespace asio = boost::asio;
namespace {

constexpr auto probe_timeout = std::chrono::seconds(2);
/// A valid blob id that no store generates (ids are 32 hex characters): stat() answers not_found.
constexpr std::string_view probe_blob = "depotreadinessprobe";

/// Shared by the response and the probe, which may outlive it when it times out. Both run on the
/// connection's strand.
struct probe_state
{
    explicit probe_state(const asio::any_io_executor& ex) : timer(ex) {}
    asio::steady_timer timer;
    bool done = false;
    std::string database = "timeout";
    std::string migrations = "timeout";
    std::string blob_store = "timeout";
    std::string detail; ///< for the log only
};

asio::awaitable<void> probe(services& svc, std::shared_ptr<probe_state> st)
{
    try {
        auto conn = co_await svc.db->acquire();
        auto status = co_await pg::migration_state(*conn);
        st->database = "ok";
        st->migrations = status.current == status.latest  ? "ok"
                         : status.current < status.latest ? "behind"
                                                          : "ahead";
        if (st->migrations != "ok")
            st->detail += "schema version " + std::to_string(status.current) + ", this depotd needs " +
                          std::to_string(status.latest) + "; ";
    } catch (const std::exception& e) {
        st->database = "unreachable";
        st->migrations = "unknown";
        st->detail += std::string("database: ") + e.what() + "; ";
    }
    try {
        const storage::blob_id id(probe_blob);
        auto r = co_await svc.blobs->stat(id);
        if (r || r.error().code == errc::not_found) {
            st->blob_store = "ok";
        } else {
            st->blob_store = "unreachable";
            st->detail += "blob store: " + r.error().message + "; ";
        }
    } catch (const std::exception& e) {
        st->blob_store = "unreachable";
        st->detail += std::string("blob store: ") + e.what() + "; ";
    }
    st->done = true;
    st->timer.cancel();
}

} // namespace

asio::awaitable<response> readiness_response(services& svc)
{
    static std::atomic<int> last_state{-1}; // -1 unknown, 0 unready, 1 ready; for logging changes only
    response res;
    try {
        auto ex = co_await asio::this_coro::executor;
        auto st = std::make_shared<probe_state>(ex);
        st->timer.expires_after(probe_timeout);
        asio::co_spawn(ex, probe(svc, st), asio::detached);
        if (!st->done) {
            boost::system::error_code ec;
            co_await st->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        }
        const bool ready = st->database == "ok" && st->migrations == "ok" && st->blob_store == "ok";
        nlohmann::json body = {
            {"status", ready ? "ready" : "unready"},
            {"checks",
             {{"database", st->database}, {"migrations", st->migrations}, {"blob_store", st->blob_store}}}};
        res.status = ready ? http::status::ok : http::status::service_unavailable;
        res.body = body.dump() + "\n";
        if (last_state.exchange(ready ? 1 : 0) != (ready ? 1 : 0)) {
            if (ready)
                log::info("ready");
            else
                log::warn("not ready", {{"database", st->database},
                                        {"migrations", st->migrations},
                                        {"blob_store", st->blob_store},
                                        {"detail", st->done ? st->detail : st->detail + "checks timed out"}});
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
