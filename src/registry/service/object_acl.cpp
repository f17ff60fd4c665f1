// object_service: object ACLs (GetObjectAcl, PutObjectAcl and the ACL checks of authorization). The SQL is
// registry/repo/object_acls.
#include "registry/repo/object_acls.hpp"
#include "registry/service/object_service.hpp"

namespace depot::registry {

asio::awaitable<std::string> object_service::acl(std::int64_t version_row)
{
    return object_acl(pool_, version_row);
}

asio::awaitable<result<void>> object_service::set_acl(const audit_context& who, const object_version& version,
                                                      std::string stored)
{
    return set_object_acl(pool_, who, version, std::move(stored));
}

} // namespace depot::registry
