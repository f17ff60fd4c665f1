#include "s3/listing.hpp"

#include <doctest/doctest.h>
#include <vector>

using namespace depot;
using namespace depot::s3;

namespace {

/// Runs a whole page over a sorted key list the way the database layer does, honouring seeks.
struct page_result
{
    std::vector<std::string> contents;
    std::vector<std::string> prefixes;
    bool truncated = false;
    std::string last;
    int seeks = 0;
};

page_result run(const std::vector<std::string>& keys, std::string prefix, std::string delimiter,
                std::size_t max_keys, std::string after = {})
{
    page_result out;
    auto start = listing_start(prefix, delimiter, after);
    listing_page page(prefix, delimiter, max_keys);
    if (!start.exhausted) {
        std::string bound = start.key;
        bool inclusive = start.inclusive;
        std::size_t i = 0;
        auto seek = [&] {
            i = 0;
            while (i < keys.size() && (inclusive ? keys[i] < bound : keys[i] <= bound))
                ++i;
        };
        seek();
        while (i < keys.size()) {
            auto step = page.offer(keys[i]);
            if (step.what == listing_page::action::stop)
                break;
            if (step.what == listing_page::action::content)
                out.contents.push_back(keys[i]);
            if (step.what == listing_page::action::common_prefix) {
                if (step.seek.empty())
                    break;
                bound = step.seek;
                inclusive = true;
                ++out.seeks;
                seek();
                continue;
            }
            ++i;
        }
    }
    out.prefixes = page.common_prefixes();
    out.truncated = page.truncated();
    out.last = page.last();
    return out;
}

const std::vector<std::string> keys = {
    "a.txt", "photos/2023/a.jpg", "photos/2023/b.jpg", "photos/2024/c.jpg", "photos/top.jpg", "videos/v.mp4",
    "z.txt"};

} // namespace

TEST_CASE("without a delimiter every key under the prefix is listed")
{
    auto r = run(keys, "photos/", "", 1000);
    CHECK(r.contents == std::vector<std::string>{"photos/2023/a.jpg", "photos/2023/b.jpg",
                                                 "photos/2024/c.jpg", "photos/top.jpg"});
    CHECK(r.prefixes.empty());
    CHECK_FALSE(r.truncated);
}

TEST_CASE("a delimiter folds keys into common prefixes, each once, with one seek per prefix")
{
    auto r = run(keys, "", "/", 1000);
    CHECK(r.contents == std::vector<std::string>{"a.txt", "z.txt"});
    CHECK(r.prefixes == std::vector<std::string>{"photos/", "videos/"});
    CHECK(r.seeks == 2);
    CHECK_FALSE(r.truncated);

    auto nested = run(keys, "photos/", "/", 1000);
    CHECK(nested.contents == std::vector<std::string>{"photos/top.jpg"});
    CHECK(nested.prefixes == std::vector<std::string>{"photos/2023/", "photos/2024/"});
}

TEST_CASE("without seeking, keys inside the current common prefix are skipped")
{
    listing_page page("", "/", 10);
    CHECK(page.offer("d/a").what == listing_page::action::common_prefix);
    CHECK(page.offer("d/b").what == listing_page::action::skip);
    CHECK(page.offer("e").what == listing_page::action::content);
    CHECK(page.count() == 2);
}

TEST_CASE("multi-character delimiters and keys equal to the prefix")
{
    listing_page page("p", "--", 10);
    CHECK(page.offer("p").what == listing_page::action::content);
    auto step = page.offer("pa--b");
    CHECK(step.what == listing_page::action::common_prefix);
    CHECK(step.seek == "pa-.");
    CHECK(page.common_prefixes() == std::vector<std::string>{"pa--"});
}

TEST_CASE("max-keys counts contents and prefixes together and marks the page truncated")
{
    auto r = run(keys, "", "/", 2);
    CHECK(r.contents == std::vector<std::string>{"a.txt"});
    CHECK(r.prefixes == std::vector<std::string>{"photos/"});
    CHECK(r.truncated);
    CHECK(r.last == "photos/");

    auto exact = run(keys, "", "/", 4);
    CHECK_FALSE(exact.truncated);

    auto zero = run(keys, "", "/", 0);
    CHECK(zero.contents.empty());
    CHECK_FALSE(zero.truncated);
}

TEST_CASE("keys before the prefix are skipped and keys past it stop the page")
{
    listing_page page("m", "", 10);
    CHECK(page.offer("a").what == listing_page::action::skip);
    CHECK(page.offer("m1").what == listing_page::action::content);
    CHECK(page.offer("n").what == listing_page::action::stop);
    CHECK_FALSE(page.truncated());
}

TEST_CASE("pages chained through last() list every entry exactly once")
{
    std::vector<std::string> seen;
    std::string after;
    for (int pages = 0; pages < 10; ++pages) {
        auto r = run(keys, "", "/", 1, after);
        seen.insert(seen.end(), r.contents.begin(), r.contents.end());
        seen.insert(seen.end(), r.prefixes.begin(), r.prefixes.end());
        if (!r.truncated)
            break;
        after = r.last;
    }
    CHECK(seen == std::vector<std::string>{"a.txt", "photos/", "videos/", "z.txt"});
}

TEST_CASE("listing_start skips a common prefix that the marker falls in")
{
    auto first = listing_start("", "/", "");
    CHECK(first.key.empty());
    CHECK_FALSE(first.inclusive);
    CHECK_FALSE(first.exhausted);

    auto before = listing_start("photos/", "/", "a");
    CHECK(before.key == "photos/");
    CHECK(before.inclusive);

    auto plain = listing_start("", "/", "a.txt");
    CHECK(plain.key == "a.txt");
    CHECK_FALSE(plain.inclusive);

    auto cp = listing_start("", "/", "photos/");
    CHECK(cp.key == "photos0");
    CHECK(cp.inclusive);

    auto inside = listing_start("", "/", "photos/2023/a.jpg");
    CHECK(inside.key == "photos0");

    auto past = listing_start("photos/", "/", "q");
    CHECK(past.exhausted);

    auto no_delimiter = listing_start("", "", "photos/");
    CHECK(no_delimiter.key == "photos/");
    CHECK_FALSE(no_delimiter.inclusive);
}

TEST_CASE("continuation tokens round-trip and garbage is InvalidArgument")
{
    for (std::string_view last : {"", "a", "photos/", "caf\xC3\xA9 +/=?"}) {
        auto token = encode_continuation_token(last);
        CHECK(decode_continuation_token(token).value() == last);
    }
    for (std::string_view bad :
         {"", "!!!", "YWJj", "MQ", "Mf8="}) { // "abc" lacks the tag; "1\xFF" is not UTF-8
        CAPTURE(bad);
        auto r = decode_continuation_token(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_argument);
        CHECK(r.error().argument.starts_with("continuation-token="));
    }
}

TEST_CASE("max-keys defaults to 1000, clamps above it and rejects non-integers")
{
    CHECK(parse_max_keys(std::nullopt).value() == 1000);
    CHECK(parse_max_keys("0").value() == 0);
    CHECK(parse_max_keys("7").value() == 7);
    CHECK(parse_max_keys("1000").value() == 1000);
    CHECK(parse_max_keys("5000").value() == 1000);
    CHECK(parse_max_keys("2147483647").value() == 1000);
    for (std::string_view bad : {"-1", "abc", "", "1.5", "+5", " 5", "2147483648", "99999999999999999999"}) {
        CAPTURE(bad);
        auto r = parse_max_keys(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_argument);
        CHECK(r.error().argument.starts_with("max-keys="));
    }
    CHECK(parse_max_keys("x", "max-uploads").error().argument == "max-uploads=x");
}
