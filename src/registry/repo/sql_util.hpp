#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// Small conversions shared by repositories. Timestamps travel as epoch milliseconds
/// (`(extract(epoch from col) * 1000)::bigint`), which is S3's precision.

#include "registry/pg/pg.hpp"
#include "registry/types.hpp"

#include <optional>

namespace depot::registry {

/// Runs a parameterized statement: `co_await sql(c, "SELECT $1", a)`. Not a coroutine itself, so the
/// parameter vector is built outside the caller's coroutine frame (GCC 12 miscompiles braced initializer
/// lists inside co_await expressions: "array used as initializer").
template <class... Args>
boost::asio::awaitable<pg::result_set> sql(pg::connection& c, std::string_view statement, const Args&... args)
{
    std::vector<pg::param> params;
    params.reserve(sizeof...(Args));
    (params.emplace_back(args), ...);
    return c.query(statement, std::move(params));
}

/// Queues a parameterized statement whose rows are not needed; it runs ahead of the connection's next
/// command, in the same round trip (see pg::connection::defer).
template <class... Args>
void defer_sql(pg::connection& c, std::string_view statement, const Args&... args)
{
    std::vector<pg::param> params;
    params.reserve(sizeof...(Args));
    (params.emplace_back(args), ...);
    c.defer(statement, std::move(params));
}

/// A statement with its arguments, for pg::connection::query_all.
template <class... Args>
pg::statement statement_of(std::string_view text, const Args&... args)
{
    pg::statement st{std::string(text), {}};
    st.params.reserve(sizeof...(Args));
    (st.params.emplace_back(args), ...);
    return st;
}

/// A PostgreSQL array literal of bigints ("{1,2,3}"), for `unnest($1::bigint[])` and `= ANY($1::bigint[])`.
inline std::string bigint_array(const std::vector<std::int64_t>& values)
{
    std::string out = "{";
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i)
            out += ',';
        out += std::to_string(values[i]);
    }
    return out + "}";
}

/// The first column of every row as text.
inline std::vector<std::string> first_texts(const pg::result_set& rs)
{
    std::vector<std::string> out;
    out.reserve(rs.size());
    for (auto r : rs)
        out.emplace_back(r.text(0));
    return out;
}

/// The first column of every row as bigints (the blob rows a statement returned, for add/drop_references).
inline std::vector<std::int64_t> first_column(const pg::result_set& rs)
{
    std::vector<std::int64_t> out;
    out.reserve(rs.size());
    for (auto r : rs)
        out.push_back(r.i64(0));
    return out;
}

inline time_point from_millis(std::int64_t ms)
{
    return time_point(std::chrono::milliseconds(ms));
}

inline std::int64_t to_millis(time_point t)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

inline std::optional<time_point> opt_time(const pg::row& r, int col)
{
    if (r.is_null(col))
        return std::nullopt;
    return from_millis(r.i64(col));
}

/// SQL expression yielding epoch milliseconds of a timestamptz column.
#define DEPOT_MS(col) "(extract(epoch from " col ") * 1000)::bigint"

} // namespace depot::registry
