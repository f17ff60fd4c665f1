// Every parser in src/s3 sees untrusted bytes. Until the libFuzzer targets exist, this drives them with
// deterministic pseudo-random inputs built from the characters their grammars care about, under the
// sanitizer build, and checks the invariants that must hold for any input.
#include "s3/conditions.hpp"
#include "common/http_date.hpp"
#include "s3/listing.hpp"
#include "s3/names.hpp"
#include "s3/range.hpp"
#include "s3/utf8.hpp"
#include "s3/xml.hpp"

#include <doctest/doctest.h>
#include <pugixml.hpp>
#include <random>

using namespace depot;
using namespace depot::s3;

namespace {

std::string random_text(std::mt19937& rng, std::string_view alphabet, std::size_t max_len)
{
    std::uniform_int_distribution<std::size_t> len(0, max_len);
    std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
    std::string out(len(rng), '\0');
    for (auto& c : out)
        c = alphabet[pick(rng)];
    return out;
}

std::string random_bytes(std::mt19937& rng, std::size_t max_len)
{
    std::uniform_int_distribution<std::size_t> len(0, max_len);
    std::uniform_int_distribution<int> byte(0, 255);
    std::string out(len(rng), '\0');
    for (auto& c : out)
        c = static_cast<char>(byte(rng));
    return out;
}

constexpr std::string_view utf8_alphabet =
    "a/\x7F\xC2\x80\xDF\xBF\xE0\xA0\xED\x9F\xBF\xEF\xF0\x90\xF4\x8F\xBF\xFF";

} // namespace

TEST_CASE("range parsing never returns a range outside the object")
{
    std::mt19937 rng(1);
    for (int i = 0; i < 20000; ++i) {
        const auto header = "bytes=" + random_text(rng, "0123456789-, ", 12);
        const std::uint64_t size = rng() % 50;
        auto r = parse_range(header, size);
        if (r && *r) {
            CHECK((*r)->first <= (*r)->last);
            CHECK((*r)->last < size);
        }
        auto c = parse_copy_source_range(header, size);
        if (c)
            CHECK(c->last < size);
    }
}

TEST_CASE("date parsers accept only what they format")
{
    std::mt19937 rng(2);
    for (int i = 0; i < 20000; ++i) {
        const auto text = random_text(rng, "0123456789 :,-TZGMTSunNovDec", 32);
        if (auto t = parse_http_date(text))
            CHECK(parse_http_date(format_http_date(*t)) == *t);
        if (auto t = parse_amz_date(text))
            CHECK(parse_amz_date(format_amz_date(*t)) == *t);
        (void)parse_iso8601(text);
    }
}

TEST_CASE("prefix_successor bounds every extension of a random prefix")
{
    std::mt19937 rng(3);
    for (int i = 0; i < 20000; ++i) {
        const auto prefix = random_text(rng, utf8_alphabet, 8);
        const auto next = prefix_successor(prefix);
        CHECK(is_valid_utf8(next));
        if (is_valid_utf8(prefix) && !next.empty()) {
            CHECK(std::string_view(prefix) < next);
            const auto key = prefix + random_text(rng, utf8_alphabet, 6);
            if (is_valid_utf8(key))
                CHECK(std::string_view(key) < next);
        }
    }
}

TEST_CASE("xml_escape always yields text an XML parser reads back")
{
    std::mt19937 rng(4);
    for (int i = 0; i < 5000; ++i) {
        const auto text = random_bytes(rng, 24);
        xml_writer w;
        w.element("K", text);
        const auto doc = std::move(w).finish();
        pugi::xml_document d;
        CHECK(d.load_string(doc.c_str(), pugi::parse_default | pugi::parse_ws_pcdata));
        const std::string back = d.document_element().child_value();
        CHECK(is_valid_utf8(back));
        if (is_valid_utf8(text) && text.find('\0') == std::string::npos)
            CHECK(back == text);
    }
}

TEST_CASE("request body parsers survive arbitrary input")
{
    std::mt19937 rng(5);
    constexpr std::string_view alphabet = "<>/=\"' &;#xDeleteObjectKeyPartNumberETagQuiet1";
    for (int i = 0; i < 5000; ++i) {
        const auto body = random_text(rng, alphabet, 80);
        (void)parse_delete_objects(body);
        (void)parse_complete_multipart_upload(body);
        (void)parse_versioning_configuration(body);
        (void)parse_tagging(body);
        (void)parse_create_bucket_configuration(body);
        (void)decode_continuation_token(body);
        (void)validate_object_key(body);
        (void)validate_bucket_name(body);
        (void)etag_list_matches(body, "abc", true);
    }
}
