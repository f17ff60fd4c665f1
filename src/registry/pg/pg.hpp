#pragma once
/// \file
/// Asynchronous PostgreSQL access on Asio: libpq in non-blocking mode, its socket watched by Asio, so no
/// libpq call blocks an I/O thread. A `pool` hands out connections; a connection runs one query at a time.
///
/// Error model: SQL and connection failures throw `pg::error` (with the SQLSTATE, e.g. "23505" for a unique
/// violation) — repositories catch the few SQLSTATEs that are expected outcomes and turn them into results.
/// A lost connection, a connect or acquire timeout throw `pg::error` with an empty SQLSTATE. Cancellation
/// (e.g. `co_await (conn->query(...) || timer)`) throws boost::system::system_error(operation_aborted).
///
/// Lifetime: connections wait on their sockets through the executor they were opened with; destroy every
/// connection (and the pool) before that executor's io_context.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace depot::pg {

namespace asio = boost::asio;

class error : public std::runtime_error
{
public:
    error(std::string message, std::string sqlstate)
        : std::runtime_error(std::move(message)), sqlstate_(std::move(sqlstate))
    {}
    /// Five-character SQLSTATE, or empty for connection-level failures.
    const std::string& sqlstate() const noexcept { return sqlstate_; }
    bool is_unique_violation() const noexcept { return sqlstate_ == "23505"; }
    bool is_serialization_failure() const noexcept { return sqlstate_ == "40001" || sqlstate_ == "40P01"; }

private:
    std::string sqlstate_;
};

/// Raw bytes for bytea parameters and results (sent and received in binary/hex, never as text).
struct bytes
{
    /// A constructor, not an aggregate: GCC 12 destroys aggregate temporaries in a co_await operand twice,
    /// and `co_await query(..., pg::bytes{x})` is the natural way to write a parameter.
    explicit bytes(std::string d) : data(std::move(d)) {}
    std::string data;
};

/// One query parameter. Text format for everything except `bytes`. The server infers each parameter's type
/// from the statement; where the context does not say (`SELECT $1`), cast: `$1::bytea`, `$1::bigint`.
class param
{
public:
    param(std::nullopt_t) : null_(true) {}
    param(std::string_view v) : value_(v) {}
    param(const std::string& v) : value_(v) {}
    param(const char* v) : value_(v) {}
    param(bool v) : value_(v ? "t" : "f") {}
    param(std::int32_t v) : value_(std::to_string(v)) {}
    param(std::int64_t v) : value_(std::to_string(v)) {}
    param(std::uint32_t v) : value_(std::to_string(v)) {}
    param(std::uint64_t v) : value_(std::to_string(v)) {}
    param(const bytes& v) : value_(v.data), binary_(true) {}
    template <class T>
    param(const std::optional<T>& v) : param(v ? param(*v) : param(std::nullopt))
    {}

    bool is_null() const noexcept { return null_; }
    bool is_binary() const noexcept { return binary_; }
    const std::string& value() const noexcept { return value_; }

private:
    std::string value_;
    bool null_ = false;
    bool binary_ = false;
};

class result_set;

/// A row view into a result_set. Columns are addressed by index. Values are parsed from text format.
/// A column or row index out of range throws std::out_of_range; a value that does not parse as the type
/// asked for (a bug: SQL and code disagree) throws pg::error with SQLSTATE 22P02. The row must not outlive
/// its result_set.
class row
{
public:
    row(const result_set& rs, int index) : rs_(&rs), index_(index) {}
    bool is_null(int col) const;
    /// The raw text of a column ("" for NULL).
    std::string_view text(int col) const;
    std::string str(int col) const { return std::string(text(col)); }
    std::int64_t i64(int col) const;
    bool boolean(int col) const;
    /// Decodes a bytea column (hex output format, or the legacy escape format).
    std::string bytea(int col) const;
    std::optional<std::string> opt_str(int col) const;
    std::optional<std::int64_t> opt_i64(int col) const;
    std::optional<bool> opt_boolean(int col) const;
    std::optional<std::string> opt_bytea(int col) const;

private:
    const result_set* rs_;
    int index_;
};

/// The rows of one statement. Movable, owns the libpq PGresult.
class result_set
{
public:
    result_set();
    explicit result_set(void* pgresult);
    ~result_set();
    result_set(result_set&&) noexcept;
    result_set& operator=(result_set&&) noexcept;

    int size() const noexcept;
    bool empty() const noexcept { return size() == 0; }
    int columns() const noexcept;
    /// Rows changed by INSERT/UPDATE/DELETE.
    std::int64_t affected() const noexcept;
    row operator[](int i) const { return row(*this, i); }
    void* native() const noexcept { return res_; }

    struct iterator
    {
        const result_set* rs;
        int i;
        row operator*() const { return row(*rs, i); }
        iterator& operator++()
        {
            ++i;
            return *this;
        }
        bool operator!=(const iterator& o) const { return i != o.i; }
    };
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, size()}; }

private:
    void* res_ = nullptr;
};

/// One statement and its parameters, for connection::query_all.
struct statement
{
    std::string sql;
    std::vector<param> params;
};

/// One connection. Not thread-safe: one coroutine uses it at a time (the pool guarantees that); using it from
/// two at once throws std::logic_error. It may be used from different threads one after the other.
///
/// A command that does not complete — the connection lost, or the awaiting coroutine cancelled or destroyed
/// mid-flight — leaves the connection unhealthy for good (the pool then discards it): it is never reused
/// with half-read protocol state. A command that fails with an SQL error leaves it healthy.
/// Not supported: COPY (throws, connection discarded) and LISTEN (notifications are never delivered).
class connection
{
public:
    virtual ~connection() = default;
    /// Runs one statement with parameters ($1, $2, ...) using the extended protocol. Statements are
    /// prepared and cached per connection by their SQL text, so repeated calls skip parsing (past 512
    /// distinct texts per connection, new ones run unprepared). Results come in text format. Throws
    /// pg::error with the SQLSTATE when the statement fails, only after its whole response was read.
    virtual asio::awaitable<result_set> query(std::string_view sql, std::vector<param> params = {}) = 0;
    /// Runs one or more statements without parameters (simple protocol), e.g. "BEGIN", a migration. Without
    /// an explicit transaction they run as one implicit transaction. Reads every result, then throws the
    /// first error, if any.
    virtual asio::awaitable<void> execute(std::string_view sql) = 0;
    /// Runs `statements` in order in one round trip (libpq pipeline mode, behind whatever was deferred) and
    /// returns each one's rows: for statements that do not depend on each other's results. The first error
    /// is thrown once everything was read; the statements after it do not run.
    virtual asio::awaitable<std::vector<result_set>> query_all(std::vector<statement> statements) = 0;
    /// Queues a statement whose rows the caller does not need (BEGIN, an audit row, an INSERT). It is sent
    /// with the next query() or execute() on this connection, ahead of that command and in the same round
    /// trip (libpq pipeline mode), so a transaction of N such statements costs one round trip instead of N.
    /// Statements run in the order they were queued; the first error among them is thrown by that next
    /// command (after the whole pipeline was read), and the command itself does not run.
    virtual void defer(std::string_view sql, std::vector<param> params = {}) = 0;
    /// Drops the queued statements unsent (a transaction abandoned before its next command: a BEGIN never
    /// sent needs no ROLLBACK). The pool calls it on every returned connection.
    virtual void discard_deferred() noexcept = 0;
    /// True while statements are queued (deferred and not yet sent).
    virtual bool has_deferred() const noexcept = 0;
    /// True while the connection is inside a transaction block (or a failed one).
    virtual bool in_transaction() const noexcept = 0;
    /// True when the server connection is usable: connected, no command left half-done.
    virtual bool healthy() const noexcept = 0;
    /// Reads, without blocking, whatever the server sent while the connection sat idle, then returns
    /// healthy(). The pool calls it before handing out an idle connection, so one the server closed meanwhile
    /// (restart, pg_terminate_backend, idle timeout) is discarded instead of failing its next query.
    virtual bool check() noexcept { return healthy(); }
};

/// Connects one connection (used by the pool and by depotctl). `conninfo` is a URI
/// (postgresql://user@host:port/db?...) or a key=value string; client_encoding is forced to UTF8 and
/// application_name defaults to "depotd". The socket is watched through `executor`. Throws pg::error with
/// an empty SQLSTATE when the server cannot be reached, refuses the connection or does not finish the
/// handshake within `timeout`.
asio::awaitable<std::unique_ptr<connection>>
connect(asio::any_io_executor executor, std::string conninfo,
        std::chrono::milliseconds timeout = std::chrono::seconds(10));

struct pool_options
{
    std::string conninfo;
    std::size_t max_connections = 16;
    /// Also bounds the ROLLBACK of a connection returned inside a transaction.
    std::chrono::milliseconds connect_timeout = std::chrono::seconds(10);
    /// How long acquire() waits for a free connection before throwing pg::error.
    std::chrono::milliseconds acquire_timeout = std::chrono::seconds(30);
};

class pool;

/// A connection borrowed from a pool; returned when destroyed. If it is returned inside a transaction, the
/// pool rolls the transaction back before reuse (so an exception mid-transaction never leaks state), and a
/// broken connection is discarded.
class pooled_connection
{
public:
    pooled_connection() = default;
    pooled_connection(std::shared_ptr<pool> owner, std::unique_ptr<connection> conn);
    ~pooled_connection();
    pooled_connection(pooled_connection&&) noexcept = default;
    pooled_connection& operator=(pooled_connection&&) noexcept;
    connection* operator->() const noexcept { return conn_.get(); }
    connection& operator*() const noexcept { return *conn_; }

private:
    std::shared_ptr<pool> owner_;
    std::unique_ptr<connection> conn_;
};

struct pool_stats
{
    std::size_t open = 0;    ///< connections open or being opened (never above max_connections)
    std::size_t idle = 0;    ///< open and not borrowed
    std::size_t waiting = 0; ///< acquire() calls queued for a connection
};

/// A bounded pool of connections, opened lazily. Thread-safe: acquire() and release() may run on any
/// thread or strand. Waiters are served first come, first served. An idle connection is checked before it
/// is handed out, so one the server closed meanwhile is replaced transparently. Create with `make_pool`;
/// borrowed connections keep the pool alive.
class pool : public std::enable_shared_from_this<pool>
{
public:
    virtual ~pool() = default;
    /// A healthy connection outside any transaction. Throws pg::error (empty SQLSTATE) when none frees up
    /// within acquire_timeout, or when opening a new one fails. Resumes on the caller's executor.
    virtual asio::awaitable<pooled_connection> acquire() = 0;
    virtual pool_stats stats() const = 0;
    /// Called by pooled_connection; not for direct use.
    virtual void release(std::unique_ptr<connection> conn) = 0;
};

/// Connections are opened on `executor`, and the rollbacks of returned transactions run there. Throws
/// std::invalid_argument when max_connections is 0.
std::shared_ptr<pool> make_pool(asio::any_io_executor executor, pool_options options);

} // namespace depot::pg
