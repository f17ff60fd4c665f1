#include "registry/service/sse.hpp"

#include "common/hash.hpp"
#include "storage/sealed/sealed_blob_store.hpp"

namespace depot::registry {
namespace {

namespace asio = boost::asio;

constexpr std::size_t salt_size = 16;

/// A store that is the one it wraps: the view of plaintext blobs, so callers hold one kind of pointer.
class same_store final : public storage::blob_store
{
public:
    explicit same_store(storage::blob_store& inner) : inner_(inner) {}
    asio::awaitable<result<std::unique_ptr<storage::blob_writer>>> create(storage::write_options o) override
    {
        co_return co_await inner_.create(o);
    }
    asio::awaitable<result<std::unique_ptr<storage::blob_reader>>>
    open(const storage::blob_id& id, std::uint64_t offset, std::uint64_t length) override
    {
        co_return co_await inner_.open(id, offset, length);
    }
    asio::awaitable<result<storage::blob_info>> stat(const storage::blob_id& id) override
    {
        co_return co_await inner_.stat(id);
    }
    asio::awaitable<result<void>> remove(const storage::blob_id& id) override
    {
        co_return co_await inner_.remove(id);
    }
    asio::awaitable<result<std::vector<storage::blob_listing_entry>>> list(const storage::blob_id& after,
                                                                           std::size_t limit) override
    {
        co_return co_await inner_.list(after, limit);
    }
    asio::awaitable<result<std::size_t>>
    remove_incomplete(std::chrono::system_clock::time_point older_than) override
    {
        co_return co_await inner_.remove_incomplete(older_than);
    }
    std::string_view kind() const noexcept override { return inner_.kind(); }

private:
    storage::blob_store& inner_;
};

} // namespace

std::string_view sse_name(sealing mode) noexcept
{
    switch (mode) {
    case sealing::master:
        return "AES256";
    case sealing::customer:
        return "SSE-C";
    case sealing::none:
        break;
    }
    return "";
}

std::string_view sealing_column(sealing mode) noexcept
{
    switch (mode) {
    case sealing::master:
        return "master";
    case sealing::customer:
        return "customer";
    case sealing::none:
        break;
    }
    return "";
}

sealing sealing_of(std::string_view sse) noexcept
{
    if (sse == "AES256")
        return sealing::master;
    if (sse == "SSE-C")
        return sealing::customer;
    return sealing::none;
}

std::string sse_etag(sealing mode, std::string_view customer_key, std::string_view md5)
{
    if (mode != sealing::customer)
        return to_hex(md5);
    return to_hex(hmac_sha256(customer_key, md5).substr(0, 16));
}

sealing sealing_from_column(std::string_view column) noexcept
{
    if (column == "master")
        return sealing::master;
    if (column == "customer")
        return sealing::customer;
    return sealing::none;
}

std::string make_key_check(std::string_view customer_key)
{
    auto salt = random_bytes(salt_size);
    return salt + hmac_sha256(salt, customer_key);
}

bool key_matches(std::string_view check, std::string_view customer_key)
{
    if (check.size() != salt_size + 32)
        return false;
    const auto salt = check.substr(0, salt_size);
    return constant_time_equal(check.substr(salt_size), hmac_sha256(salt, customer_key));
}

result<std::unique_ptr<storage::blob_store>> sealed_view(storage::blob_store& store, sealing mode,
                                                         const sse_keys& keys)
{
    switch (mode) {
    case sealing::none:
        return std::unique_ptr<storage::blob_store>(std::make_unique<same_store>(store));
    case sealing::master:
        if (keys.master.empty())
            return make_error(errc::not_implemented,
                              "Server side encryption specified but this server has no SSE master key "
                              "configured (--sse-master-key-file)");
        return storage::make_sealed_blob_store(store, keys.master);
    case sealing::customer:
        if (keys.customer.empty())
            return make_error(errc::invalid_request,
                              "The object was stored using a form of Server Side Encryption. The correct "
                              "parameters must be provided to retrieve the object.");
        return storage::make_sealed_blob_store(store, keys.customer);
    }
    return make_error(errc::internal, "unknown sealing");
}

} // namespace depot::registry
