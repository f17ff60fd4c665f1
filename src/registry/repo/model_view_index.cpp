#include "registry/repo/model_view_index.hpp"

#include "registry/repo/sql_util.hpp"

namespace depot::registry {
namespace {

// The segment a name produces and the page condition on it; $2/$3 are the cursor, $4 the limit.
#define DEPOT_SEGMENT(name) "((" name ") || '/') COLLATE \"C\""
#define DEPOT_AFTER(name)                                                                                    \
    "(" DEPOT_SEGMENT(name) " > $2::text COLLATE \"C\" OR ($3::boolean AND " DEPOT_SEGMENT(                  \
        name) " = $2::text COLLATE \"C\"))"

std::vector<view_node> nodes_of(const pg::result_set& rs)
{
    std::vector<view_node> out;
    out.reserve(static_cast<std::size_t>(rs.size()));
    for (auto r : rs)
        out.push_back(view_node{.id = r.i64(0), .name = r.str(1)});
    return out;
}

} // namespace

asio::awaitable<std::vector<view_node>> model_view_index::teams(std::string_view user_id, bool is_admin,
                                                                const view_cursor& from, std::size_t limit)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
                           "SELECT t.id, t.name FROM teams t WHERE " DEPOT_AFTER(
                               "t.name") " AND ($5::boolean OR EXISTS (SELECT 1 FROM team_members m "
                                         "WHERE m.team_id = t.id AND m.user_id = $1)) "
                                         "ORDER BY " DEPOT_SEGMENT("t.name") " LIMIT $4",
                           user_id, from.bound, from.inclusive, static_cast<std::int64_t>(limit), is_admin);
    co_return nodes_of(rs);
}

asio::awaitable<std::vector<view_node>> model_view_index::models(std::int64_t team_id,
                                                                 const view_cursor& from, std::size_t limit)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
                           "SELECT m.id, m.name FROM models m WHERE m.team_id = $1 AND " DEPOT_AFTER(
                               "m.name") " ORDER BY " DEPOT_SEGMENT("m.name") " LIMIT $4",
                           team_id, from.bound, from.inclusive, static_cast<std::int64_t>(limit));
    co_return nodes_of(rs);
}

asio::awaitable<std::vector<view_ref>> model_view_index::refs(std::int64_t model_id, const view_cursor& from,
                                                              std::size_t limit)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(
        *conn,
        "SELECT r.name, v.id, v.created_by, " DEPOT_MS(
            "v.created_at") " FROM ("
                            "  SELECT DISTINCT ON (" DEPOT_SEGMENT(
                                "u.name") ") u.name, u.version_id FROM ("
                                          "    SELECT v.number::text AS name, v.id AS version_id, 0 AS rank "
                                          "FROM model_versions v "
                                          "     WHERE v.model_id = $1 "
                                          "    UNION ALL SELECT v.label, v.id, 2 FROM model_versions v "
                                          "     WHERE v.model_id = $1 AND v.label IS NOT NULL "
                                          "    UNION ALL SELECT a.name, v.id, 1 FROM model_aliases a JOIN "
                                          "model_versions v ON v.id = a.version_id "
                                          "     WHERE a.model_id = $1 AND v.state <> 'archived') u "
                                          "  WHERE " DEPOT_AFTER("u.name") " ORDER BY " DEPOT_SEGMENT(
                                              "u.name") ", u.rank LIMIT $4) r "
                                                        "JOIN model_versions v ON v.id = r.version_id ORDER "
                                                        "BY " DEPOT_SEGMENT("r.name"),
        model_id, from.bound, from.inclusive, static_cast<std::int64_t>(limit));
    std::vector<view_ref> out;
    out.reserve(static_cast<std::size_t>(rs.size()));
    for (auto r : rs)
        out.push_back(view_ref{.name = r.str(0),
                               .version_id = r.i64(1),
                               .created_by = r.str(2),
                               .created_at = from_millis(r.i64(3))});
    co_return out;
}

#undef DEPOT_AFTER
#undef DEPOT_SEGMENT

} // namespace depot::registry
