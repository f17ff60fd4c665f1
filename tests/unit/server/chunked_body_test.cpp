#include "server/chunked_body.hpp"
#include "test_content.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <cstring>
#include <doctest/doctest.h>

using namespace depot;
namespace asio = boost::asio;

using test::string_source;

namespace {

auth::aws_chunked_decoder unsigned_trailer_decoder(std::uint64_t length)
{
    return auth::aws_chunked_decoder({.mode = auth::payload_mode::streaming_unsigned_trailer,
                                      .declared_trailers = {"x-amz-checksum-crc32"},
                                      .decoded_length = length});
}

/// Reads the whole source; returns the bytes or the error's code name.
std::string drain(depot::byte_source& src)
{
    asio::io_context ioc;
    auto fut = asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<std::string> {
            std::string out;
            std::byte buf[3];
            for (;;) {
                auto n = co_await src.read_some(buf);
                if (!n)
                    co_return "error:" + std::string(to_string(n.error().code));
                if (*n == 0)
                    co_return out;
                out.append(reinterpret_cast<const char*>(buf), *n);
            }
        },
        asio::use_future);
    ioc.run();
    return fut.get();
}

const std::string framed = "5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n";

} // namespace

TEST_CASE("an aws-chunked body reads back as exactly its decoded payload whatever the raw read sizes")
{
    for (std::size_t step : {1u, 2u, 7u, 1000u}) {
        string_source raw(framed, step);
        server::chunked_body body(raw, unsigned_trailer_decoder(11));
        CHECK(drain(body) == "hello world");
        CHECK(body.decoder().trailer("x-amz-checksum-crc32") == std::optional<std::string_view>("DUoRhQ=="));
    }
}

TEST_CASE("a truncated aws-chunked body ends in an error, never in a short clean end")
{
    string_source raw(framed.substr(0, framed.size() - 4), 5);
    server::chunked_body body(raw, unsigned_trailer_decoder(11));
    CHECK(drain(body) == "error:incomplete_body");
}

TEST_CASE("a decoded length that differs from x-amz-decoded-content-length is refused")
{
    string_source raw(framed, 64);
    server::chunked_body body(raw, unsigned_trailer_decoder(12));
    CHECK(drain(body).rfind("error:", 0) == 0);
}
