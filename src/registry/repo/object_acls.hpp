#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// Object versions' ACLs (schema 0023, table object_acls): the stored grants of a version (s3::stored_acl),
/// absent for the default ACL (the owner's FULL_CONTROL alone).

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"

#include <boost/asio/awaitable.hpp>
#include <string>

namespace depot::registry {

/// The stored grants of the version row `version_row` ("" when it has the default ACL).
boost::asio::awaitable<std::string> object_acl(pg::pool& pool, std::int64_t version_row);

/// Gives the version row `version_row`, inserted by the caller's transaction, the ACL `acl` (stored form, not
/// empty) its write asked for: the write's own transaction, so the version is never visible without it.
boost::asio::awaitable<void> insert_version_acl(pg::connection& c, std::int64_t version_row,
                                                std::string_view acl);

/// Sets the ACL of `version` ("" restores the default) with an object.acl audit row. no_such_version when
/// the version is gone (or is a delete marker).
boost::asio::awaitable<result<void>> set_object_acl(pg::pool& pool, const audit_context& who,
                                                    const object_version& version, std::string stored);

} // namespace depot::registry
