/// \file
/// One PostgreSQL connection on Asio. libpq runs in non-blocking mode; its socket is wrapped in a
/// stream_descriptor only to wait for readiness. libpq owns the file descriptor: Asio never reads, writes or
/// closes it, and the descriptor is released before PQfinish.
///
/// A command is: send (PQsendPrepare once per SQL text, then PQsendQueryPrepared; or PQsendQuery), flush
/// until libpq's output buffer is empty, then read results until PQgetResult returns null. Deferred
/// statements go out ahead of the next command in libpq's pipeline mode: all of them and the command, one
/// Sync, one flush, then each one's results in order and the Sync's. A command that
/// does not get that far (a lost connection, or the awaiting coroutine cancelled or destroyed mid-flight)
/// leaves unread protocol state behind, so the connection marks itself broken and the pool discards it.
///
/// Waits that race two events (socket and deadline, readable and writable) use a parallel_group of the
/// operations themselves rather than `awaitable_operators::||`: the operations start from this thread (no
/// co_spawn, so two threads never touch the descriptor at once) and report errors as values (`||` waits
/// for one *success*, so a failed branch would wait for the other).

#include "common/log.hpp"
#include "registry/pg/pg.hpp"

#include <algorithm>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <cctype>
#include <functional>
#include <libpq-fe.h>
#include <unordered_map>

namespace depot::pg {
namespace {

using boost::asio::deferred;
using boost::asio::use_awaitable;
using boost::asio::experimental::make_parallel_group;
using boost::asio::experimental::wait_for_one;
using descriptor = asio::posix::stream_descriptor;

/// Above this many cached statements per connection, further SQL texts run unprepared: a long tail of
/// distinct texts means generated SQL, and caching it would grow without bound.
constexpr std::size_t max_prepared_statements = 512;

std::string trimmed(const char* message)
{
    std::string s = message ? message : "";
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.pop_back();
    return s;
}

std::string field(const PGresult* res, int code)
{
    const char* v = PQresultErrorField(res, code);
    return v ? v : "";
}

/// Server notices (e.g. "relation already exists, skipping") go to the log instead of libpq's stderr. An
/// error that arrives while no command runs is delivered here too; a FATAL one means the server is closing
/// the session (pg_terminate_backend, shutdown, idle timeout), so the connection is marked broken.
void on_notice(void* broken, const PGresult* res)
{
    auto severity = field(res, PG_DIAG_SEVERITY_NONLOCALIZED);
    auto message = field(res, PG_DIAG_MESSAGE_PRIMARY);
    if (severity == "FATAL" || severity == "PANIC")
        *static_cast<bool*>(broken) = true;
    if (severity == "NOTICE" || severity == "INFO" || severity == "LOG" || severity.starts_with("DEBUG"))
        log::debug("postgresql notice", {{"severity", severity}, {"message", message}});
    else
        log::warn("postgresql notice", {{"severity", severity}, {"message", message}});
}

bool mentions(std::string_view sql, std::string_view word)
{
    auto it = std::search(sql.begin(), sql.end(), word.begin(), word.end(),
                          [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
    return it != sql.end();
}

struct string_hash
{
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

/// The outcome of a completely read command: its last result, and its first error if any.
struct outcome
{
    result_set last;
    std::optional<error> failure;
};

class pg_connection final : public connection
{
public:
    pg_connection(asio::any_io_executor executor, PGconn* conn) : socket_(std::move(executor)), conn_(conn)
    {
        PQsetNoticeReceiver(conn_, on_notice, &broken_);
    }
    ~pg_connection() override
    {
        unwrap_socket();
        PQfinish(conn_);
    }
    pg_connection(const pg_connection&) = delete;
    pg_connection& operator=(const pg_connection&) = delete;

    asio::awaitable<void> handshake(std::chrono::milliseconds timeout);

    asio::awaitable<result_set> query(std::string_view sql, std::vector<param> params) override;
    asio::awaitable<void> execute(std::string_view sql) override;
    asio::awaitable<std::vector<result_set>> query_all(std::vector<statement> statements) override;

    void defer(std::string_view sql, std::vector<param> params) override
    {
        deferred_.push_back(statement{std::string(sql), std::move(params)});
    }

    void discard_deferred() noexcept override { deferred_.clear(); }
    bool has_deferred() const noexcept override { return !deferred_.empty(); }

    bool in_transaction() const noexcept override
    {
        auto s = PQtransactionStatus(conn_);
        return s == PQTRANS_INTRANS || s == PQTRANS_INERROR;
    }

    bool healthy() const noexcept override
    {
        return !broken_ && PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) != PQTRANS_ACTIVE;
    }

    bool check() noexcept override
    {
        if (!healthy())
            return false;
        // Reads and parses what arrived while idle: a FATAL error (parsed as a notice) marks the connection
        // broken, end of file makes it bad. The second round sees the end of file that follows a FATAL error.
        for (int round = 0; round < 2 && healthy(); ++round) {
            if (!PQconsumeInput(conn_))
                broken_ = true;
            PQisBusy(conn_); // parses the input
        }
        return healthy();
    }

private:
    /// Held for the duration of query() or execute(). Between sending a message and reading its last result
    /// the protocol is mid-flight; leaving that state by any way but finish() (an exception, a cancelled or
    /// destroyed coroutine) marks the connection broken.
    class command_guard
    {
    public:
        explicit command_guard(pg_connection& c) : c_(c)
        {
            if (c_.busy_)
                throw std::logic_error("pg::connection used by two coroutines at once");
            if (!c_.healthy())
                throw error("the connection to PostgreSQL is not usable", "");
            c_.busy_ = true;
        }
        ~command_guard()
        {
            c_.busy_ = false;
            if (in_flight_)
                c_.broken_ = true;
        }
        command_guard(const command_guard&) = delete;
        command_guard& operator=(const command_guard&) = delete;
        void sent() noexcept { in_flight_ = true; }
        void read() noexcept { in_flight_ = false; }

    private:
        pg_connection& c_;
        bool in_flight_ = false;
    };

    [[noreturn]] void fail(std::string_view what)
    {
        broken_ = true;
        throw error(std::string(what) + ": " + trimmed(PQerrorMessage(conn_)), "");
    }

    void wrap_socket()
    {
        int fd = PQsocket(conn_);
        if (fd < 0)
            fail("PostgreSQL connection has no socket");
        socket_.assign(fd);
    }

    void unwrap_socket() noexcept
    {
        if (!socket_.is_open())
            return;
        try {
            socket_.release(); // libpq closes the fd, never Asio
        } catch (...) {
        }
    }

    asio::awaitable<void> wait_readable();
    asio::awaitable<void> flush();
    asio::awaitable<outcome> read_results();
    asio::awaitable<void> finish(command_guard& guard, result_set* out);
    asio::awaitable<const std::string*> prepared(std::string_view sql, int nparams, command_guard& guard);
    void send(const std::string* name, std::string_view sql, const std::vector<param>& params);
    asio::awaitable<result_set> pipeline(command_guard& guard, std::vector<statement> tail,
                                         std::vector<result_set>* results);

    descriptor socket_;
    std::vector<statement> deferred_;
    PGconn* conn_;
    std::unordered_map<std::string, std::string, string_hash, std::equal_to<>> statements_; // SQL -> name
    std::uint64_t statement_counter_ = 0;
    bool broken_ = false;
    bool busy_ = false;
};

asio::awaitable<void> pg_connection::handshake(std::chrono::milliseconds timeout)
{
    if (PQstatus(conn_) == CONNECTION_BAD)
        fail("could not connect to PostgreSQL");
    asio::steady_timer deadline(socket_.get_executor());
    deadline.expires_after(timeout);
    // Right after PQconnectStart, libpq wants to be treated as if polling asked to wait for writability.
    auto status = PGRES_POLLING_WRITING;
    while (status != PGRES_POLLING_OK) {
        if (status == PGRES_POLLING_FAILED)
            fail("could not connect to PostgreSQL");
        // libpq may switch sockets while connecting (the next address or host, a retry without SSL), and a
        // new socket can get the old number: register the current one afresh every round.
        unwrap_socket();
        wrap_socket();
        auto want = status == PGRES_POLLING_READING ? descriptor::wait_read : descriptor::wait_write;
        auto [order, socket_ec, timer_ec] =
            co_await make_parallel_group(socket_.async_wait(want, deferred), deadline.async_wait(deferred))
                .async_wait(wait_for_one(), use_awaitable);
        if (order[0] == 1) {
            if (timer_ec)
                throw boost::system::system_error(timer_ec);
            broken_ = true;
            throw error("timed out connecting to PostgreSQL after " + std::to_string(timeout.count()) + " ms",
                        "");
        }
        if (socket_ec)
            throw boost::system::system_error(socket_ec);
        status = PQconnectPoll(conn_);
    }
    unwrap_socket();
    wrap_socket();
    if (PQsetnonblocking(conn_, 1) != 0)
        fail("could not make the PostgreSQL connection non-blocking");
}

asio::awaitable<void> pg_connection::wait_readable()
{
    co_await socket_.async_wait(descriptor::wait_read, use_awaitable);
    if (!PQconsumeInput(conn_))
        fail("lost the connection to PostgreSQL");
}

asio::awaitable<void> pg_connection::flush()
{
    for (;;) {
        int r = PQflush(conn_);
        if (r == 0)
            co_return;
        if (r < 0)
            fail("could not send to PostgreSQL");
        // Output is pending. Wait for writability, but also read: the server may be blocked sending us
        // results (or notices) and stop reading until we do.
        auto [order, write_ec, read_ec] =
            co_await make_parallel_group(socket_.async_wait(descriptor::wait_write, deferred),
                                         socket_.async_wait(descriptor::wait_read, deferred))
                .async_wait(wait_for_one(), use_awaitable);
        auto ec = order[0] == 0 ? write_ec : read_ec;
        if (ec)
            throw boost::system::system_error(ec);
        if (order[0] == 1 && !PQconsumeInput(conn_))
            fail("lost the connection to PostgreSQL");
    }
}

asio::awaitable<outcome> pg_connection::read_results()
{
    outcome out;
    for (;;) {
        while (PQisBusy(conn_))
            co_await wait_readable();
        PGresult* raw = PQgetResult(conn_);
        if (!raw)
            break;
        result_set rs(raw);
        switch (PQresultStatus(raw)) {
        case PGRES_FATAL_ERROR:
        case PGRES_NONFATAL_ERROR:
            if (!out.failure)
                out.failure.emplace(field(raw, PG_DIAG_MESSAGE_PRIMARY).empty()
                                        ? trimmed(PQresultErrorMessage(raw))
                                        : field(raw, PG_DIAG_MESSAGE_PRIMARY),
                                    field(raw, PG_DIAG_SQLSTATE));
            break;
        case PGRES_PIPELINE_ABORTED: // only after the failure that aborted it, which is reported first
            if (!out.failure)
                out.failure.emplace("not run: an earlier statement of the pipeline failed", "");
            break;
        case PGRES_COPY_IN:
        case PGRES_COPY_OUT:
        case PGRES_COPY_BOTH:
            broken_ = true;
            throw error("COPY is not supported on pg::connection", "");
        default:
            out.last = std::move(rs);
        }
    }
    co_return out;
}

/// Flushes the command just sent and reads all of its results; stores the last in `out`. Throws the first
/// error once everything is read; a lost connection is reported with an empty SQLSTATE.
asio::awaitable<void> pg_connection::finish(command_guard& guard, result_set* out)
{
    guard.sent();
    co_await flush();
    auto o = co_await read_results();
    if (PQstatus(conn_) != CONNECTION_OK) {
        broken_ = true;
        throw error("lost the connection to PostgreSQL: " +
                        (o.failure ? std::string(o.failure->what()) : trimmed(PQerrorMessage(conn_))),
                    "");
    }
    guard.read();
    if (o.failure)
        throw std::move(*o.failure);
    if (out)
        *out = std::move(o.last);
}

/// The name of the prepared statement for `sql`, preparing it first if needed; nullptr when the cache is
/// full and the statement should run unnamed.
asio::awaitable<const std::string*> pg_connection::prepared(std::string_view sql, int nparams,
                                                            command_guard& guard)
{
    if (auto it = statements_.find(sql); it != statements_.end())
        co_return &it->second;
    if (statements_.size() >= max_prepared_statements)
        co_return nullptr;
    std::string name = "depot_" + std::to_string(++statement_counter_);
    std::string text(sql);
    if (!PQsendPrepare(conn_, name.c_str(), text.c_str(), nparams, nullptr))
        fail("could not send to PostgreSQL");
    co_await finish(guard, nullptr);
    // Names are never reused, so a statement left on the server by a forgotten cache entry cannot clash.
    auto [it, inserted] = statements_.emplace(std::move(text), std::move(name));
    co_return &it->second;
}

void pg_connection::send(const std::string* name, std::string_view sql, const std::vector<param>& params)
{
    std::vector<const char*> values(params.size());
    std::vector<int> lengths(params.size());
    std::vector<int> formats(params.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
        const auto& p = params[i];
        values[i] = p.is_null() ? nullptr : p.value().c_str();
        lengths[i] = static_cast<int>(p.value().size());
        formats[i] = p.is_binary() ? 1 : 0;
    }
    const int n = static_cast<int>(params.size());
    int sent = 0;
    if (name) {
        sent = PQsendQueryPrepared(conn_, name->c_str(), n, values.data(), lengths.data(), formats.data(), 0);
    } else {
        std::string text(sql);
        sent = PQsendQueryParams(conn_, text.c_str(), n, nullptr, values.data(), lengths.data(),
                                 formats.data(), 0);
    }
    if (!sent)
        fail("could not send to PostgreSQL");
}

/// Sends the deferred statements, then `tail`, as one pipeline ending in a Sync, and reads every result.
/// Returns the last statement's rows and, with `results`, appends the rows of each of `tail`; throws the
/// first error once all is read. After an error the server skips the rest up to the Sync (reported as
/// PGRES_PIPELINE_ABORTED).
asio::awaitable<result_set> pg_connection::pipeline(command_guard& guard, std::vector<statement> tail,
                                                    std::vector<result_set>* results)
{
    std::vector<statement> queue = std::move(deferred_);
    deferred_.clear();
    const std::size_t first_of_tail = queue.size();
    for (auto& st : tail)
        queue.push_back(std::move(st));
    // Prepared before the pipeline starts (a miss is one round trip, once per connection and text), so the
    // pipeline holds nothing but executions.
    std::vector<const std::string*> names(queue.size());
    for (std::size_t i = 0; i < queue.size(); ++i)
        names[i] = co_await prepared(queue[i].sql, static_cast<int>(queue[i].params.size()), guard);
    if (PQenterPipelineMode(conn_) != 1)
        fail("could not enter pipeline mode");
    for (std::size_t i = 0; i < queue.size(); ++i)
        send(names[i], queue[i].sql, queue[i].params);
    if (PQpipelineSync(conn_) != 1)
        fail("could not send to PostgreSQL");
    guard.sent();
    co_await flush();
    std::optional<error> failure;
    result_set last;
    for (std::size_t i = 0; i < queue.size(); ++i) {
        auto o = co_await read_results();
        if (o.failure && !failure)
            failure = std::move(o.failure);
        if (results && i >= first_of_tail)
            results->push_back(std::move(o.last));
        else
            last = std::move(o.last);
    }
    for (bool synced = false; !synced;) {
        while (PQisBusy(conn_))
            co_await wait_readable();
        PGresult* raw = PQgetResult(conn_);
        if (!raw)
            break; // the connection was lost: reported below
        synced = PQresultStatus(raw) == PGRES_PIPELINE_SYNC;
        PQclear(raw);
    }
    if (PQstatus(conn_) != CONNECTION_OK || PQexitPipelineMode(conn_) != 1) {
        broken_ = true;
        throw error("lost the connection to PostgreSQL: " +
                        (failure ? std::string(failure->what()) : trimmed(PQerrorMessage(conn_))),
                    "");
    }
    guard.read();
    if (failure)
        throw std::move(*failure);
    co_return last;
}

asio::awaitable<result_set> pg_connection::query(std::string_view sql, std::vector<param> params)
{
    command_guard guard(*this);
    if (!deferred_.empty()) {
        std::vector<statement> tail(1);
        tail[0].sql = std::string(sql);
        tail[0].params = std::move(params);
        co_return co_await pipeline(guard, std::move(tail), nullptr);
    }
    const std::string* name = co_await prepared(sql, static_cast<int>(params.size()), guard);
    send(name, sql, params);
    result_set out;
    co_await finish(guard, &out);
    co_return out;
}

asio::awaitable<std::vector<result_set>> pg_connection::query_all(std::vector<statement> statements)
{
    std::vector<result_set> out;
    if (statements.empty())
        co_return out;
    command_guard guard(*this);
    out.reserve(statements.size());
    co_await pipeline(guard, std::move(statements), &out);
    co_return out;
}

asio::awaitable<void> pg_connection::execute(std::string_view sql)
{
    command_guard guard(*this);
    if (!deferred_.empty())
        co_await pipeline(guard, std::vector<statement>(), nullptr); // the simple protocol cannot join one
    std::string text(sql);
    if (!PQsendQuery(conn_, text.c_str()))
        fail("could not send to PostgreSQL");
    // DEALLOCATE / DISCARD drop server-side statements behind the cache's back: forget them all (names
    // are never reused, so forgetting too many costs only a re-prepare).
    if (mentions(sql, "deallocate") || mentions(sql, "discard"))
        statements_.clear();
    co_await finish(guard, nullptr);
}

} // namespace

asio::awaitable<std::unique_ptr<connection>> connect(asio::any_io_executor executor, std::string conninfo,
                                                     std::chrono::milliseconds timeout)
{
    // dbname is expanded as a URI or key=value string; later entries override what it sets, except that
    // fallback_application_name only applies when the string names no application.
    const char* const keys[] = {"dbname", "client_encoding", "fallback_application_name", nullptr};
    const char* const values[] = {conninfo.c_str(), "UTF8", "depotd", nullptr};
    PGconn* raw = PQconnectStartParams(keys, values, 1);
    if (!raw)
        throw std::bad_alloc();
    auto conn = std::make_unique<pg_connection>(std::move(executor), raw);
    co_await conn->handshake(timeout);
    co_return conn;
}

} // namespace depot::pg
