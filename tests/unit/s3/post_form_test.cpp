#include "common/http_date.hpp"
#include "s3/post_form.hpp"
#include "s3/post_policy.hpp"

#include <doctest/doctest.h>
#include <string>
#include <vector>

using namespace depot;
using namespace depot::s3;

namespace {

struct parsed_part
{
    std::string name;
    std::optional<std::string> filename;
    std::string content_type;
    std::string value;
};

/// Feeds `body` in pieces of `step` bytes; the parts, or the error.
result<std::vector<parsed_part>> parse_all(std::string_view boundary, std::string_view body, std::size_t step)
{
    form_parser p(boundary);
    std::vector<parsed_part> out;
    std::size_t fed = 0;
    for (;;) {
        auto ev = p.next();
        if (!ev)
            return std::move(ev).error();
        switch (*ev) {
        case form_parser::event::need_more:
            if (fed == body.size()) {
                p.finish();
            } else {
                auto n = std::min(step, body.size() - fed);
                p.feed(body.substr(fed, n));
                fed += n;
            }
            break;
        case form_parser::event::part_begin:
            out.push_back({p.part().name, p.part().filename, p.part().content_type, {}});
            break;
        case form_parser::event::data:
            out.back().value.append(p.data());
            break;
        case form_parser::event::part_end:
            break;
        case form_parser::event::end:
            return out;
        }
    }
}

const std::string form =
    "preamble to ignore\r\n"
    "--XyZ\r\n"
    "Content-Disposition: form-data; name=\"key\"\r\n"
    "\r\n"
    "uploads/${filename}\r\n"
    "--XyZ  \r\n"
    "content-disposition: form-data; name=\"empty\"\r\n"
    "\r\n"
    "\r\n"
    "--XyZ\r\n"
    "Content-Disposition: form-data; name=\"file\"; filename=\"C:\\dir\\a;b.txt\"\r\n"
    "Content-Type: text/plain\r\n"
    "\r\n"
    "line one\r\n--Xy is only a prefix of the delimiter; --XyZ needs a CRLF before it\r\n"
    "--XyZ--\r\n"
    "epilogue --XyZ junk";

} // namespace

TEST_CASE("multipart/form-data: Content-Type boundary")
{
    CHECK(form_data_boundary("multipart/form-data; boundary=abc") == "abc");
    CHECK(form_data_boundary("Multipart/Form-Data;boundary=\"a b;c\"") == "a b;c");
    CHECK(form_data_boundary("multipart/form-data; charset=utf-8; boundary=----x") == "----x");
    CHECK_FALSE(form_data_boundary("multipart/form-data"));
    CHECK_FALSE(form_data_boundary("multipart/form-data; boundary="));
    CHECK_FALSE(form_data_boundary("multipart/mixed; boundary=abc"));
    CHECK_FALSE(form_data_boundary("multipart/form-data; boundary=" + std::string(71, 'a')));
    CHECK(is_form_data("multipart/form-data"));
    CHECK_FALSE(is_form_data("application/x-www-form-urlencoded"));
}

TEST_CASE("multipart/form-data parses the same whatever the pieces the input arrives in")
{
    for (std::size_t step : {1u, 2u, 3u, 5u, 7u, 16u, 1000u}) {
        CAPTURE(step);
        auto parts = parse_all("XyZ", form, step);
        REQUIRE(parts);
        REQUIRE(parts->size() == 3);
        CHECK((*parts)[0].name == "key");
        CHECK((*parts)[0].value == "uploads/${filename}");
        CHECK_FALSE((*parts)[0].filename);
        CHECK((*parts)[1].name == "empty");
        CHECK((*parts)[1].value == "");
        CHECK((*parts)[2].name == "file");
        CHECK((*parts)[2].filename == "C:\\dir\\a;b.txt");
        CHECK((*parts)[2].content_type == "text/plain");
        CHECK((*parts)[2].value ==
              "line one\r\n--Xy is only a prefix of the delimiter; --XyZ needs a CRLF before it");
    }
}

TEST_CASE("multipart/form-data: the first delimiter may open the body; a binary value keeps every byte")
{
    std::string value("\0\r\n-\r\n--X--Xy\r\r\n", 16);
    std::string body = "--Xy\r\nContent-Disposition: form-data; name=f\r\n\r\n" + value + "\r\n--Xy--";
    for (std::size_t step : {1u, 4u, 100u}) {
        auto parts = parse_all("Xy", body, step);
        REQUIRE(parts);
        REQUIRE(parts->size() == 1);
        CHECK((*parts)[0].name == "f");
        CHECK((*parts)[0].value == value);
    }
}

TEST_CASE("multipart/form-data refuses malformed bodies")
{
    auto code = [](std::string_view body) {
        auto parts = parse_all("b", body, 3);
        return parts ? errc::internal : parts.error().code;
    };
    CHECK(code("") == errc::malformed_post_request);                          // no delimiter at all
    CHECK(code("--b\r\n\r\nvalue\r\n--b--") == errc::malformed_post_request); // no Content-Disposition
    CHECK(code("--b\r\nContent-Disposition: attachment; name=x\r\n\r\nv\r\n--b--") ==
          errc::malformed_post_request);
    CHECK(code("--b\r\nContent-Disposition: form-data\r\n\r\nv\r\n--b--") == errc::malformed_post_request);
    CHECK(code("--b\r\nContent-Disposition: form-data; name=\"x\r\n\r\nv\r\n--b--") ==
          errc::malformed_post_request); // unterminated quote
    CHECK(code("--b\r\nContent-Disposition: form-data; name=x\r\n\r\nnever closed") ==
          errc::malformed_post_request);
    CHECK(code("--bjunk\r\nContent-Disposition: form-data; name=x\r\n\r\nv\r\n--b--") ==
          errc::malformed_post_request);
    CHECK(code("--b\r\nno colon here\r\n\r\nv\r\n--b--") == errc::malformed_post_request);
    std::string huge = "--b\r\nContent-Disposition: form-data; name=x\r\nX-Pad: " +
                       std::string(form_parser::max_part_header_bytes, 'a') + "\r\n\r\nv\r\n--b--";
    CHECK(code(huge) == errc::malformed_post_request);
}

namespace {

std::chrono::system_clock::time_point form_time(std::string_view iso)
{
    return *parse_iso8601(iso);
}

} // namespace

TEST_CASE("POST policy: conditions, coverage of every field, expiration")
{
    auto policy = parse_post_policy(R"({"expiration": "2026-01-02T00:00:00.000Z",
        "conditions": [{"bucket": "b"}, ["starts-with", "$key", "user/eric/"], {"acl": "private"},
                       ["eq", "$X-Amz-Meta-Uuid", "14365"], ["starts-with", "$Content-Type", "image/"],
                       ["content-length-range", 10, 100], ["content-length-range", "5", 50]]})");
    REQUIRE(policy);
    REQUIRE(policy->conditions.size() == 7);
    std::vector<form_field> fields = {{"key", "user/eric/a.png"},
                                      {"acl", "private"},
                                      {"x-amz-meta-uuid", "14365"},
                                      {"content-type", "image/png, image/gif"},
                                      {"policy", "..."},
                                      {"x-ignore-me", "x"}};
    const auto before = form_time("2026-01-01T00:00:00Z");
    auto range = check_post_policy(*policy, fields, "b", before);
    REQUIRE(range);
    CHECK(range->min == 10);
    CHECK(range->max == 50u);

    auto refusal = [&](std::vector<form_field> f, std::string_view bucket = "b",
                       std::chrono::system_clock::time_point now = form_time("2026-01-01T00:00:00Z")) {
        auto r = check_post_policy(*policy, f, bucket, now);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::access_denied);
        return r.error().message;
    };
    CHECK(refusal(fields, "b", form_time("2026-01-02T00:00:01Z")) ==
          "Invalid according to Policy: Policy expired.");
    CHECK(refusal(fields, "other") ==
          R"(Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "b"])");
    auto f = fields;
    f[0].second = "user/other/a.png";
    CHECK(refusal(f) ==
          R"(Invalid according to Policy: Policy Condition failed: ["starts-with", "$key", "user/eric/"])");
    f = fields;
    f[3].second = "image/png, text/html";
    CHECK(refusal(f).find("$content-type") != std::string::npos);
    f = fields;
    f.erase(f.begin() + 1); // the acl condition names a field the form lacks
    CHECK(refusal(f) == R"(Invalid according to Policy: Policy Condition failed: ["eq", "$acl", "private"])");
    f = fields;
    f.push_back({"x-amz-meta-extra", "1"});
    CHECK(refusal(f) == "Invalid according to Policy: Extra input fields: x-amz-meta-extra");
}

TEST_CASE("POST policy: malformed documents are Invalid Policy")
{
    for (std::string_view bad :
         {"", "[]", "{\"conditions\": []}", "{\"expiration\": \"soon\", \"conditions\": []}",
          "{\"expiration\": \"2026-01-01T00:00:00Z\"}",
          "{\"expiration\": \"2026-01-01T00:00:00Z\", \"conditions\": {}}",
          "{\"expiration\": \"2026-01-01T00:00:00Z\", \"conditions\": [[\"ends-with\", \"$key\", \"x\"]]}",
          "{\"expiration\": \"2026-01-01T00:00:00Z\", \"conditions\": [[\"eq\", \"key\", \"x\"]]}",
          "{\"expiration\": \"2026-01-01T00:00:00Z\", \"conditions\": [[\"content-length-range\", 5, 1]]}",
          "{\"expiration\": \"2026-01-01T00:00:00Z\", \"conditions\": [[\"content-length-range\", -1, 1]]}",
          "{\"expiration\": \"2026-01-01T00:00:00Z\", \"conditions\": [{\"key\": 1}]}",
          "{\"expiration\": \"2026-01-01T00:00:00Z\", \"conditions\": [7]}"}) {
        CAPTURE(bad);
        auto p = parse_post_policy(bad);
        REQUIRE_FALSE(p);
        CHECK(p.error().code == errc::invalid_argument);
        CHECK(p.error().message.starts_with("Invalid Policy: "));
    }
}
