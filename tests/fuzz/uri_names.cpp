/// \file
/// Fuzzes URI percent-decoding and query parsing (src/common/uri.cpp) and the S3 name rules
/// (src/s3/names.cpp, src/s3/utf8.cpp) on the same input. Invariants:
/// - decode inverts encode, and encode(decode(x)) round trips to the canonical form;
/// - a parsed query, re-encoded, parses to the same pairs;
/// - an accepted object key is 1..1024 bytes of UTF-8 without NUL; an accepted bucket name 3..63 bytes;
/// - UTF-8 decoding and re-encoding reproduce the bytes of a valid string;
/// - `prefix_successor` is valid UTF-8 and above every string that starts with the prefix.

#include "check.hpp"
#include "common/uri.hpp"
#include "s3/names.hpp"
#include "s3/utf8.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace {

using namespace depot;
using namespace depot::s3;

void check_uri(std::string_view in)
{
    for (bool keep_slash : {false, true}) {
        auto encoded = uri_encode(in, keep_slash);
        auto decoded = uri_decode(encoded);
        FUZZ_CHECK(decoded && *decoded == in);
        FUZZ_CHECK(uri_encode(*decoded, keep_slash) == encoded);
    }
    if (auto decoded = uri_decode(in)) {
        FUZZ_CHECK(decoded->size() <= in.size());
        // Canonical again after one decode: what SigV4's canonical URI relies on.
        auto canonical = uri_encode(*decoded, true);
        auto again = uri_decode(canonical);
        FUZZ_CHECK(again && *again == *decoded);
        FUZZ_CHECK(uri_encode(*again, true) == canonical);
    }
    if (auto spaced = uri_decode(in, true))
        FUZZ_CHECK(spaced->find('+') == std::string::npos || in.find('%') != std::string_view::npos);

    if (auto pairs = parse_query(in)) {
        std::string query;
        for (const auto& [name, value] : *pairs) {
            if (!query.empty())
                query.push_back('&');
            query += uri_encode(name) + "=" + uri_encode(value);
        }
        auto again = parse_query(query);
        FUZZ_CHECK(again && *again == *pairs);
    }
}

void check_names(std::string_view in)
{
    bool utf8 = is_valid_utf8(in);
    std::string rebuilt;
    std::size_t pos = 0;
    while (pos < in.size()) {
        auto before = pos;
        auto cp = decode_utf8(in, pos);
        if (!cp) {
            FUZZ_CHECK(pos == before);
            break;
        }
        FUZZ_CHECK(pos > before && pos <= in.size());
        append_utf8(rebuilt, *cp);
        FUZZ_CHECK(std::string_view(rebuilt) == in.substr(0, pos));
    }
    FUZZ_CHECK(utf8 == (pos == in.size()));

    if (validate_object_key(in)) {
        FUZZ_CHECK(!in.empty() && in.size() <= max_key_bytes);
        FUZZ_CHECK(in.find('\0') == std::string_view::npos);
        FUZZ_CHECK(utf8);
    }
    if (validate_bucket_name(in))
        FUZZ_CHECK(in.size() >= 3 && in.size() <= 63);

    auto next = prefix_successor(in);
    if (!next.empty()) {
        FUZZ_CHECK(is_valid_utf8(next));
        FUZZ_CHECK(next > in);
        // The greatest string starting with the valid part of the prefix is below the successor.
        std::string top(in.substr(0, pos));
        top += "\xF4\x8F\xBF\xBF\xF4\x8F\xBF\xBF";
        FUZZ_CHECK(top < next);
    } else {
        // No successor: nothing valid to increment (empty, or only U+10FFFF).
        for (std::size_t i = 0; i < pos; i += 4)
            FUZZ_CHECK(in.substr(i, 4) == "\xF4\x8F\xBF\xBF");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::string_view in(reinterpret_cast<const char*>(data), size);
    check_uri(in);
    check_names(in);
    return 0;
}
