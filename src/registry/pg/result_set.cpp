/// \file
/// result_set owns a PGresult; row reads its text-format values.

#include "common/hash.hpp"
#include "registry/pg/pg.hpp"

#include <charconv>
#include <cstring>
#include <libpq-fe.h>
#include <utility>

namespace depot::pg {
namespace {

PGresult* pgres(const result_set& rs)
{
    return static_cast<PGresult*>(rs.native());
}

/// A value of the wrong shape means the SQL and the code reading it disagree: a bug, reported like a
/// data exception (invalid_text_representation) so it is not mistaken for a connection failure.
[[noreturn]] void bad_value(int col, std::string_view what, std::string_view text)
{
    throw error("column " + std::to_string(col) + " is not " + std::string(what) + ": \"" +
                    std::string(text.substr(0, 64)) + "\"",
                "22P02");
}

} // namespace

result_set::result_set() = default;

result_set::result_set(void* pgresult) : res_(pgresult) {}

result_set::~result_set()
{
    if (res_)
        PQclear(static_cast<PGresult*>(res_));
}

result_set::result_set(result_set&& other) noexcept : res_(std::exchange(other.res_, nullptr)) {}

result_set& result_set::operator=(result_set&& other) noexcept
{
    if (this != &other) {
        if (res_)
            PQclear(static_cast<PGresult*>(res_));
        res_ = std::exchange(other.res_, nullptr);
    }
    return *this;
}

int result_set::size() const noexcept
{
    return res_ ? PQntuples(pgres(*this)) : 0;
}

int result_set::columns() const noexcept
{
    return res_ ? PQnfields(pgres(*this)) : 0;
}

std::int64_t result_set::affected() const noexcept
{
    if (!res_)
        return 0;
    const char* text = PQcmdTuples(pgres(*this));
    std::int64_t n = 0;
    std::from_chars(text, text + std::strlen(text), n);
    return n;
}

bool row::is_null(int col) const
{
    if (col < 0 || col >= rs_->columns() || index_ < 0 || index_ >= rs_->size())
        throw std::out_of_range("pg::row: column " + std::to_string(col) + " of row " +
                                std::to_string(index_) + " is out of range");
    return PQgetisnull(pgres(*rs_), index_, col) != 0;
}

std::string_view row::text(int col) const
{
    if (is_null(col))
        return {};
    PGresult* res = pgres(*rs_);
    return {PQgetvalue(res, index_, col), static_cast<std::size_t>(PQgetlength(res, index_, col))};
}

std::int64_t row::i64(int col) const
{
    auto t = text(col);
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size() || t.empty())
        bad_value(col, "an integer", t);
    return v;
}

bool row::boolean(int col) const
{
    auto t = text(col);
    if (t == "t")
        return true;
    if (t == "f")
        return false;
    bad_value(col, "a boolean", t);
}

std::string row::bytea(int col) const
{
    auto t = text(col);
    if (t.starts_with("\\x")) {
        if (auto raw = from_hex(t.substr(2)))
            return std::move(*raw);
        bad_value(col, "hex-encoded bytea", t);
    }
    // The legacy "escape" output format (bytea_output = escape): let libpq decode it.
    std::string zero_terminated(t);
    std::size_t n = 0;
    unsigned char* raw = PQunescapeBytea(reinterpret_cast<const unsigned char*>(zero_terminated.c_str()), &n);
    if (!raw)
        throw std::bad_alloc();
    std::string out(reinterpret_cast<const char*>(raw), n);
    PQfreemem(raw);
    return out;
}

std::optional<std::string> row::opt_str(int col) const
{
    if (is_null(col))
        return std::nullopt;
    return str(col);
}

std::optional<std::int64_t> row::opt_i64(int col) const
{
    if (is_null(col))
        return std::nullopt;
    return i64(col);
}

std::optional<bool> row::opt_boolean(int col) const
{
    if (is_null(col))
        return std::nullopt;
    return boolean(col);
}

std::optional<std::string> row::opt_bytea(int col) const
{
    if (is_null(col))
        return std::nullopt;
    return bytea(col);
}

} // namespace depot::pg
