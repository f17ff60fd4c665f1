#include "s3/range.hpp"

#include <doctest/doctest.h>

using namespace depot;
using namespace depot::s3;

namespace {

/// The resolved range, or nullopt for "whole object"; fails the test on an error.
std::optional<byte_range> resolved(std::string_view header, std::uint64_t size)
{
    auto r = parse_range(header, size);
    REQUIRE(r.has_value());
    return *r;
}

bool unsatisfiable(std::string_view header, std::uint64_t size)
{
    auto r = parse_range(header, size);
    return !r && r.error().code == errc::invalid_range;
}

} // namespace

TEST_CASE("a single range resolves against the object size")
{
    CHECK(resolved("bytes=0-9", 100) == byte_range{0, 9});
    CHECK(resolved("bytes=10-", 100) == byte_range{10, 99});
    CHECK(resolved("bytes=-10", 100) == byte_range{90, 99});
    CHECK(resolved("bytes=0-0", 1) == byte_range{0, 0});
    CHECK(resolved("BYTES=1-2", 100) == byte_range{1, 2});
    CHECK(resolved(" bytes= 5-6 ", 100) == byte_range{5, 6});
    CHECK(resolved("bytes=3-4,", 100) == byte_range{3, 4});
    CHECK(resolved("bytes=0-9", 100)->length() == 10);
}

TEST_CASE("a range past the end is clamped and a suffix longer than the object is the whole object")
{
    CHECK(resolved("bytes=90-1000", 100) == byte_range{90, 99});
    CHECK(resolved("bytes=-1000", 100) == byte_range{0, 99});
    CHECK(resolved("bytes=0-99999999999999999999999", 100) == byte_range{0, 99});
}

TEST_CASE("absent, invalid and multiple ranges serve the whole object")
{
    CHECK_FALSE(resolved("", 100).has_value());
    CHECK_FALSE(resolved("bytes=5-2", 100).has_value());
    CHECK_FALSE(resolved("bytes=a-b", 100).has_value());
    CHECK_FALSE(resolved("bytes=-", 100).has_value());
    CHECK_FALSE(resolved("bytes=", 100).has_value());
    CHECK_FALSE(resolved("bytes=1", 100).has_value());
    CHECK_FALSE(resolved("bytes=--1", 100).has_value());
    CHECK_FALSE(resolved("bytes=1-2-3", 100).has_value());
    CHECK_FALSE(resolved("items=0-1", 100).has_value());
    CHECK_FALSE(resolved("0-1", 100).has_value());
    CHECK_FALSE(resolved("bytes=0-1,4-5", 100).has_value());
    CHECK_FALSE(resolved("bytes=0-1, 200-300", 100).has_value());
}

TEST_CASE("a range starting at or past the end, a zero suffix and any range of an empty object are 416")
{
    CHECK(unsatisfiable("bytes=100-", 100));
    CHECK(unsatisfiable("bytes=100-200", 100));
    CHECK(unsatisfiable("bytes=99999999999999999999-", 100));
    CHECK(unsatisfiable("bytes=-0", 100));
    CHECK(unsatisfiable("bytes=0-", 0));
    CHECK(unsatisfiable("bytes=0-0", 0));
    CHECK(unsatisfiable("bytes=-5", 0));
    CHECK_FALSE(resolved("", 0).has_value());
}

TEST_CASE("Content-Range values")
{
    CHECK(content_range({0, 9}, 100) == "bytes 0-9/100");
    CHECK(unsatisfied_content_range(100) == "bytes */100");
    CHECK(unsatisfied_content_range(0) == "bytes */0");
}

TEST_CASE("the copy source range takes only bytes=first-last within the source")
{
    CHECK(parse_copy_source_range("bytes=0-9", 100).value() == byte_range{0, 9});
    CHECK(parse_copy_source_range("bytes=99-99", 100).value() == byte_range{99, 99});

    for (std::string_view bad :
         {"bytes=-1", "bytes=2-", "bytes=5-2", "bytes=", "0-9", "bytes=a-b", "bytes=0-1,2-3"}) {
        CAPTURE(bad);
        auto r = parse_copy_source_range(bad, 100);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_argument);
        CHECK(r.error().argument.starts_with("x-amz-copy-source-range="));
    }
    CHECK(parse_copy_source_range("bytes=0-100", 100).error().code == errc::invalid_range);
    CHECK(parse_copy_source_range("bytes=100-100", 100).error().code == errc::invalid_range);
    CHECK(parse_copy_source_range("bytes=0-0", 0).error().code == errc::invalid_range);
}
