#include "storage/rados/cluster.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <doctest/doctest.h>

using namespace depot;
using namespace depot::storage;
using namespace depot::storage::rados_detail;

namespace {

std::map<std::string, ceph::bufferlist> attrs(std::initializer_list<std::pair<const char*, const char*>> kv)
{
    std::map<std::string, ceph::bufferlist> out;
    for (auto [k, v] : kv)
        out[k] = to_bufferlist(v);
    return out;
}

/// Runs what is ready (waiters hold work guards, so run() would block on them).
void settle(asio::io_context& ioc)
{
    ioc.restart();
    while (ioc.poll() > 0) {
    }
}

} // namespace

TEST_CASE("stripe objects are named by the blob id, a dot and the index as 8 hex digits")
{
    CHECK(stripe_name("abc", 0) == "abc.00000000");
    CHECK(stripe_name("abc", 0x2a) == "abc.0000002a");
    CHECK(stripe_name("abc", 0xffffffff) == "abc.ffffffff");
}

TEST_CASE("object names parse back into heads and stripes, and foreign names are ignored")
{
    auto head = parse_object_name("0123abcd");
    REQUIRE(head);
    CHECK(head->id == "0123abcd");
    CHECK_FALSE(head->stripe);

    auto stripe = parse_object_name("0123abcd.0000001f");
    REQUIRE(stripe);
    CHECK(stripe->id == "0123abcd");
    CHECK(stripe->stripe == 31u);

    for (const char* foreign :
         {"", ".", "abc.", "abc.1", "abc.0000000g", "abc.0000000A", "ABC", "abc.000000001",
          "benchmark_data_host_1234_object0", "a/b", "abc.00000000.00000000"}) {
        CAPTURE(foreign);
        CHECK_FALSE(parse_object_name(foreign));
    }
}

TEST_CASE("a writing head decodes with its stripe size only, a committed one with its whole manifest")
{
    auto writing = decode_head(attrs({{attr_state, "writing"}, {attr_stripe_size, "65536"}}));
    REQUIRE(writing);
    CHECK_FALSE(writing->committed);
    CHECK(writing->stripe_size == 65536);

    auto committed = decode_head(attrs({{attr_state, "committed"},
                                        {attr_stripe_size, "65536"},
                                        {attr_size, "163840"},
                                        {attr_stripes, "3"},
                                        {attr_committed, "1700000000123456789"}}));
    REQUIRE(committed);
    CHECK(committed->committed);
    CHECK(committed->size == 163840);
    CHECK(committed->stripes == 3);
    CHECK(std::chrono::duration_cast<std::chrono::nanoseconds>(committed->committed_at.time_since_epoch())
              .count() == 1700000000123456789);

    auto empty = decode_head(attrs({{attr_state, "committed"},
                                    {attr_stripe_size, "4096"},
                                    {attr_size, "0"},
                                    {attr_stripes, "0"},
                                    {attr_committed, "1"}}));
    REQUIRE(empty);
    CHECK(empty->stripes == 0);
}

TEST_CASE("heads with missing, malformed or inconsistent attributes do not decode")
{
    CHECK_FALSE(decode_head({}));
    CHECK_FALSE(decode_head(attrs({{attr_state, "writing"}})));
    CHECK_FALSE(decode_head(attrs({{attr_state, "writing"}, {attr_stripe_size, "0"}})));
    CHECK_FALSE(decode_head(attrs({{attr_state, "other"}, {attr_stripe_size, "4096"}})));
    CHECK_FALSE(decode_head(attrs({{attr_state, "committed"}, {attr_stripe_size, "4096"}})));
    CHECK_FALSE(decode_head(attrs({{attr_state, "committed"},
                                   {attr_stripe_size, "4096"},
                                   {attr_size, "12x"},
                                   {attr_stripes, "1"},
                                   {attr_committed, "1"}})));
    // 4097 bytes need 2 stripes of 4096, not 1.
    CHECK_FALSE(decode_head(attrs({{attr_state, "committed"},
                                   {attr_stripe_size, "4096"},
                                   {attr_size, "4097"},
                                   {attr_stripes, "1"},
                                   {attr_committed, "1"}})));
}

TEST_CASE("librados errors map to not_found, unavailable (retriable) or io_error")
{
    CHECK(rados_error(-ENOENT, "x").code == errc::not_found);
    for (int e : {ETIMEDOUT, EIO, ENOTCONN, ECONNREFUSED, ESHUTDOWN, ENOSPC, EAGAIN}) {
        CAPTURE(e);
        CHECK(rados_error(-e, "x").code == errc::unavailable);
    }
    for (int e : {EINVAL, EPERM, EACCES, EFBIG, ERANGE}) {
        CAPTURE(e);
        CHECK(rados_error(-e, "x").code == errc::io_error);
    }
    CHECK(rados_error(-ETIMEDOUT, "reading stripe 3").message.find("reading stripe 3") != std::string::npos);
}

TEST_CASE("bad RADOS store options are rejected before connecting")
{
    rados_options small{.stripe_size = 1024};
    CHECK_THROWS_AS(make_rados_blob_store(small), std::invalid_argument);
    rados_options huge{.stripe_size = 1ull << 30};
    CHECK_THROWS_AS(make_rados_blob_store(huge), std::invalid_argument);
    rados_options no_window{.window = 0};
    CHECK_THROWS_AS(make_rados_blob_store(no_window), std::invalid_argument);
    rados_options no_pool{.pool = ""};
    CHECK_THROWS_AS(make_rados_blob_store(no_pool), std::invalid_argument);
    rados_options bad_user{.user = "admin"};
    CHECK_THROWS_AS(make_rados_blob_store(bad_user), std::invalid_argument);
}

TEST_CASE("the write budget grants in arrival order, waits when spent and never starves a large request")
{
    asio::io_context ioc;
    auto budget = write_budget::make(10);
    std::vector<std::string> order;
    write_budget::lease first, second, third, big;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            first = co_await budget->acquire(6);
            order.push_back("first");
        },
        asio::detached);
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            second = co_await budget->acquire(6);
            order.push_back("second");
        },
        asio::detached);
    // Fits beside `first`, but queues behind `second`: first come, first served.
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            third = co_await budget->acquire(1);
            order.push_back("third");
        },
        asio::detached);
    settle(ioc);
    CHECK(order == std::vector<std::string>{"first"});
    CHECK(budget->in_use() == 6);
    CHECK(budget->waits() == 2);

    first.reset(); // a write completed
    settle(ioc);
    CHECK(order == std::vector<std::string>{"first", "second", "third"});
    CHECK(budget->in_use() == 7);

    // Larger than the whole budget: granted once nothing else is out.
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            big = co_await budget->acquire(25);
            order.push_back("big");
        },
        asio::detached);
    settle(ioc);
    CHECK(order.size() == 3);
    second.reset();
    third.reset();
    settle(ioc);
    CHECK(order.back() == "big");
    CHECK(budget->in_use() == 25);
    CHECK(budget->peak() == 25);
    big.reset();
    CHECK(budget->in_use() == 0);
}
