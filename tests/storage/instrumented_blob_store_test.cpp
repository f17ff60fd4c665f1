#include "conformance.hpp"
#include "storage/faulty/faulty_blob_store.hpp"
#include "storage/instrumented/instrumented_blob_store.hpp"
#include "storage/memory/memory_blob_store.hpp"
#include "test_util.hpp"

using namespace depot;
using namespace depot::storage;
using namespace depot::storage::testing;

DEPOT_BLOB_STORE_CONFORMANCE("instrumented", [] {
    static metrics::registry registry;
    return make_instrumented_blob_store(make_memory_blob_store(), registry);
})

namespace {

/// The value of one rendered sample line ("name{labels} value"), or -1 when absent.
double sample(const metrics::registry& r, std::string_view series)
{
    std::string out;
    r.render(out);
    std::string prefix = std::string(series) + " ";
    auto at = out.find("\n" + prefix);
    if (at == std::string::npos)
        return -1;
    return std::stod(out.substr(at + 1 + prefix.size()));
}

} // namespace

TEST_CASE("the instrumented store counts calls, bytes and failures, not expected outcomes")
{
    metrics::registry registry;
    auto [faulty, faults] = make_faulty_blob_store(make_memory_blob_store());
    auto store = make_instrumented_blob_store(faulty, registry);
    CHECK(store->kind() == "faulty");
    run([&]() -> asio::awaitable<void> {
        auto created = co_await store->create();
        REQUIRE(created.has_value());
        REQUIRE((co_await (*created)->write(bytes_of("hello"))).has_value());
        REQUIRE((co_await (*created)->write(bytes_of(" world"))).has_value());
        REQUIRE((co_await (*created)->commit()).has_value());
        auto id = (*created)->id();
        auto read = co_await read_all(*store, id);
        REQUIRE(read.has_value());
        CHECK(*read == "hello world");

        auto missing = co_await store->stat(make_random_blob_id());
        CHECK(missing.error().code == errc::not_found);

        faults->fail_nth_of(blob_op::stat, 1, errc::unavailable);
        auto failed = co_await store->stat(id);
        CHECK(failed.error().code == errc::unavailable);
        faults->throw_nth(1);
        bool threw = false;
        try {
            (void)co_await store->remove(id);
        } catch (const std::exception&) {
            threw = true;
        }
        CHECK(threw);
    }());

    const std::string s = "{store=\"faulty\",operation=";
    CHECK(sample(registry, "depot_blob_written_bytes_total{store=\"faulty\"}") == 11);
    CHECK(sample(registry, "depot_blob_read_bytes_total{store=\"faulty\"}") == 11);
    CHECK(sample(registry, "depot_blob_operation_duration_seconds_count" + s + "\"write\"}") == 2);
    CHECK(sample(registry, "depot_blob_operation_duration_seconds_count" + s + "\"commit\"}") == 1);
    CHECK(sample(registry, "depot_blob_operation_duration_seconds_count" + s + "\"stat\"}") == 2);
    // not_found is an answer; unavailable and a throw are errors.
    CHECK(sample(registry, "depot_blob_operation_errors_total" + s + "\"stat\"}") == 1);
    CHECK(sample(registry, "depot_blob_operation_errors_total" + s + "\"remove\"}") == 1);
    CHECK(sample(registry, "depot_blob_operation_errors_total" + s + "\"write\"}") == 0);
}
