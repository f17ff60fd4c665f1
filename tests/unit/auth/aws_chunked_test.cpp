#include "auth/aws_chunked.hpp"
#include "common/hash.hpp"
#include "common/http_date.hpp"

#include <cstdio>
#include <doctest/doctest.h>
#include <string>
#include <vector>

using namespace depot;
using namespace depot::auth;

namespace {

using trailer_list = std::vector<std::pair<std::string, std::string>>;

constexpr std::string_view example_secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

chunk_signing example_signing(std::string seed)
{
    return chunk_signing{signing_key(example_secret, {"20130524", "us-east-1", "s3"}), "20130524T000000Z",
                         "20130524/us-east-1/s3/aws4_request", std::move(seed)};
}

/// The body of AWS's streaming examples: 65536 and 1024 bytes of 'a', then the final chunk.
std::string aws_example_body(const std::string (&sigs)[3], std::string_view trailer_section)
{
    std::string body = "10000;chunk-signature=" + sigs[0] + "\r\n" + std::string(65536, 'a') + "\r\n";
    body += "400;chunk-signature=" + sigs[1] + "\r\n" + std::string(1024, 'a') + "\r\n";
    body += "0;chunk-signature=" + sigs[2] + "\r\n";
    body += trailer_section;
    body += "\r\n";
    return body;
}

/// Frames `chunks` (plus the final empty chunk) as a client would, signing when the mode is signed.
std::string frame(const std::vector<std::string>& chunks, payload_mode mode, const chunk_signing& s,
                  const trailer_list& trailers = {})
{
    bool is_signed = mode != payload_mode::streaming_unsigned_trailer;
    std::string out;
    std::string prev = s.seed_signature;
    auto add = [&](std::string_view data) {
        char size[32];
        std::snprintf(size, sizeof size, "%zx", data.size());
        out += size;
        if (is_signed) {
            prev = chunk_signature(s, prev, to_hex(sha256(data)));
            out += ";chunk-signature=" + prev;
        }
        out += "\r\n";
        if (!data.empty()) {
            out += data;
            out += "\r\n";
        }
    };
    for (const auto& c : chunks)
        add(c);
    add("");
    if (mode != payload_mode::streaming_signed) {
        for (const auto& [name, value] : trailers)
            out += name + ":" + value + "\r\n";
        if (is_signed)
            out += "x-amz-trailer-signature:" + trailer_signature(s, prev, trailers) + "\r\n";
    }
    out += "\r\n";
    return out;
}

struct chunked_outcome
{
    result<void> status = ok();
    std::string output;
};

/// Feeds `body` split at the given offsets (ascending), then finishes.
chunked_outcome decode(aws_chunked_options options, std::string_view body,
                       std::vector<std::size_t> splits = {})
{
    aws_chunked_decoder d(std::move(options));
    chunked_outcome o;
    auto sink = [&](std::span<const std::byte> b) {
        o.output.append(reinterpret_cast<const char*>(b.data()), b.size());
    };
    std::size_t pos = 0;
    splits.push_back(body.size());
    for (auto split : splits) {
        o.status = d.feed(body.substr(pos, split - pos), sink);
        if (!o.status)
            return o;
        pos = split;
    }
    o.status = d.finish();
    return o;
}

errc decode_error(const aws_chunked_options& options, std::string_view body)
{
    auto o = decode(options, body);
    REQUIRE_FALSE(o.status.has_value());
    return o.status.error().code;
}

aws_chunked_options signed_options(payload_mode mode = payload_mode::streaming_signed_trailer)
{
    aws_chunked_options o;
    o.mode = mode;
    o.signing = example_signing(std::string(64, '5'));
    if (mode != payload_mode::streaming_signed)
        o.declared_trailers = {"x-amz-checksum-crc32"};
    return o;
}

aws_chunked_options unsigned_options()
{
    aws_chunked_options o;
    o.mode = payload_mode::streaming_unsigned_trailer;
    o.declared_trailers = {"x-amz-checksum-crc32"};
    return o;
}

const std::vector<std::string> small_chunks{"hello ", std::string(100, 'x'), "world"};
const trailer_list crc_trailer{{"x-amz-checksum-crc32", "NSRBwg=="}};

} // namespace

TEST_CASE("the seed signature of AWS's streaming example is the request's header signature")
{
    std::vector<header_view> headers{
        {"Host", "s3.amazonaws.com"},
        {"x-amz-date", "20130524T000000Z"},
        {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
        {"Authorization",
         "AWS4-HMAC-SHA256 "
         "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=content-"
         "encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-"
         "storage-"
         "class,Signature=4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"},
        {"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
        {"Content-Encoding", "aws-chunked"},
        {"x-amz-decoded-content-length", "66560"},
        {"Content-Length", "66824"},
    };
    request_view req{"PUT", "/examplebucket/chunkObject.txt", headers};
    auto parsed = parse(req);
    REQUIRE(parsed.has_value());
    REQUIRE(parsed->has_value());
    const auto& auth = **parsed;
    CHECK(auth.mode == payload_mode::streaming_signed);
    auto creq = canonical_request(req, auth);
    CHECK(creq ==
          "PUT\n/examplebucket/chunkObject.txt\n\n"
          "content-encoding:aws-chunked\n"
          "content-length:66824\n"
          "host:s3.amazonaws.com\n"
          "x-amz-content-sha256:STREAMING-AWS4-HMAC-SHA256-PAYLOAD\n"
          "x-amz-date:20130524T000000Z\n"
          "x-amz-decoded-content-length:66560\n"
          "x-amz-storage-class:REDUCED_REDUNDANCY\n\n"
          "content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-"
          "length;x-amz-storage-class\n"
          "STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
    CHECK(string_to_sign(auth, creq)
              .ends_with("\ncee3fed04b70f867d036f722359b0b1f2f0e5dc0efadbc082b76c4c60e316455"));
    CHECK(verify(auth, req, example_secret, *parse_amz_date("20130524T000000Z"), {}).has_value());

    auto decoder = make_aws_chunked_decoder(auth, req, example_secret);
    REQUIRE(decoder.has_value());
    const std::string sigs[3] = {"ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
                                 "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
                                 "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"};
    auto body = aws_example_body(sigs, "");
    CHECK(body.size() == 66824);
    std::uint64_t emitted = 0;
    auto sink = [&](std::span<const std::byte> b) { emitted += b.size(); };
    CHECK(decoder->feed(body, sink).has_value());
    CHECK(decoder->finish().has_value());
    CHECK(emitted == 66560);
}

TEST_CASE("AWS's published chunk signatures chain from the seed")
{
    auto s = example_signing("4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9");
    auto first = chunk_signature(s, s.seed_signature, to_hex(sha256(std::string(65536, 'a'))));
    CHECK(first == "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648");
    auto second = chunk_signature(s, first, to_hex(sha256(std::string(1024, 'a'))));
    CHECK(second == "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497");
    CHECK(chunk_signature(s, second, std::string(empty_payload_hash)) ==
          "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9");
}

TEST_CASE("AWS's streaming example decodes whole, byte by byte and split anywhere in its framing")
{
    const std::string sigs[3] = {"ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
                                 "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
                                 "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"};
    auto body = aws_example_body(sigs, "");
    aws_chunked_options options;
    options.mode = payload_mode::streaming_signed;
    options.signing = example_signing("4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9");
    options.decoded_length = 66560;
    const std::string expected(66560, 'a');

    auto whole = decode(options, body);
    REQUIRE(whole.status.has_value());
    CHECK(whole.output == expected);

    std::vector<std::size_t> every_byte;
    for (std::size_t i = 1; i < body.size(); ++i)
        every_byte.push_back(i);
    auto bytewise = decode(options, body, every_byte);
    REQUIRE(bytewise.status.has_value());
    CHECK(bytewise.output == expected);

    // Every boundary inside or next to the chunk-size lines and the CRLFs after the data.
    const std::size_t second_line = 86 + 65536 + 2;
    const std::size_t final_line = second_line + 84 + 1024 + 2;
    for (auto [from, to] : {std::pair<std::size_t, std::size_t>{0, 100},
                            {second_line - 10, second_line + 100},
                            {final_line - 10, body.size()}}) {
        for (std::size_t split = from; split <= to; ++split) {
            CAPTURE(split);
            auto o = decode(options, body, {split});
            REQUIRE(o.status.has_value());
            CHECK(o.output.size() == expected.size());
        }
    }
}

TEST_CASE("AWS's trailer example decodes and exposes the checksum trailer")
{
    const std::string sigs[3] = {"b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2",
                                 "1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7",
                                 "2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992"};
    auto body =
        aws_example_body(sigs, "x-amz-checksum-crc32c:sOO8/Q==\r\n"
                               "x-amz-trailer-signature:"
                               "d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435\r\n");
    aws_chunked_options options;
    options.mode = payload_mode::streaming_signed_trailer;
    options.signing = example_signing("106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e");
    options.declared_trailers = {"x-amz-checksum-crc32c"};
    options.decoded_length = 66560;

    aws_chunked_decoder d(options);
    std::uint64_t emitted = 0;
    auto sink = [&](std::span<const std::byte> b) { emitted += b.size(); };
    REQUIRE(d.feed(body, sink).has_value());
    REQUIRE(d.finish().has_value());
    CHECK(d.done());
    CHECK(emitted == 66560);
    CHECK(d.decoded_length() == 66560);
    CHECK(d.trailer("x-amz-checksum-crc32c") == "sOO8/Q==");
    CHECK(d.trailers() == trailer_list{{"x-amz-checksum-crc32c", "sOO8/Q=="}});
}

TEST_CASE("signed bodies with and without trailers decode at every two-way split")
{
    for (auto mode : {payload_mode::streaming_signed, payload_mode::streaming_signed_trailer}) {
        auto options = signed_options(mode);
        auto body = frame(small_chunks, mode, options.signing, crc_trailer);
        for (std::size_t split = 0; split <= body.size(); ++split) {
            CAPTURE(split);
            auto o = decode(options, body, {split});
            REQUIRE(o.status.has_value());
            CHECK(o.output == "hello " + std::string(100, 'x') + "world");
        }
    }
}

TEST_CASE("an unsigned trailer body decodes at every two-way split")
{
    const std::string body = "3\r\nabc\r\n0\r\nx-amz-checksum-crc32:NSRBwg==\r\n\r\n";
    for (std::size_t split = 0; split <= body.size(); ++split) {
        CAPTURE(split);
        aws_chunked_decoder d(unsigned_options());
        std::string out;
        auto sink = [&](std::span<const std::byte> b) {
            out.append(reinterpret_cast<const char*>(b.data()), b.size());
        };
        REQUIRE(d.feed(std::string_view(body).substr(0, split), sink).has_value());
        REQUIRE(d.feed(std::string_view(body).substr(split), sink).has_value());
        REQUIRE(d.finish().has_value());
        CHECK(out == "abc");
        CHECK(d.trailer("x-amz-checksum-crc32") == "NSRBwg==");
    }
    // Upper-case hex sizes and trailer names, and blanks around trailer values, are accepted.
    auto o = decode(unsigned_options(), "A\r\n0123456789\r\n0\r\nX-Amz-Checksum-CRC32: NSRBwg== \r\n\r\n");
    REQUIRE(o.status.has_value());
    CHECK(o.output == "0123456789");
}

TEST_CASE("bad chunk sizes and framing are invalid_argument")
{
    for (std::string body : {
             std::string("zz\r\nabc\r\n0\r\n\r\n"),
             std::string("\r\n"),
             std::string("-1\r\n"),
             std::string(" 3\r\nabc\r\n0\r\n\r\n"),
             std::string("10000000000000000\r\n"),
             std::string("3\nabc\r\n0\r\n\r\n"),
             std::string("3\r\nabcd\r\n0\r\n\r\n"),
             std::string("3\r\nabc\n0\r\n\r\n"),
             std::string("3;chunk-signature=" + std::string(64, 'a') + "\r\nabc\r\n0\r\n\r\n"),
             std::string("3;foo=bar\r\nabc\r\n0\r\n\r\n"),
             std::string("0\r\nx-amz-checksum-crc32:NSRBwg==\r\nx\r\n"),
             std::string("0\r\nx-amz-checksum-crc32:NSRBwg==\r\n\r\nextra"),
             std::string(max_chunk_line + 1, '1'),
         }) {
        CAPTURE(body);
        CHECK(decode_error(unsigned_options(), body) == errc::invalid_argument);
    }
    auto options = signed_options(payload_mode::streaming_signed);
    for (std::string body : {
             std::string("3\r\nabc\r\n"),
             std::string("3;chunk-signature=abc\r\nabc\r\n"),
             std::string("3;chunk-signature=" + std::string(64, 'z') + "\r\nabc\r\n"),
             std::string("3;chunk-sig=" + std::string(64, 'a') + "\r\nabc\r\n"),
         }) {
        CAPTURE(body);
        CHECK(decode_error(options, body) == errc::invalid_argument);
    }
    // A signed body without trailers must end right after the final chunk.
    auto body = frame(small_chunks, payload_mode::streaming_signed, options.signing);
    body.insert(body.size() - 2, "x-amz-checksum-crc32:NSRBwg==\r\n");
    CHECK(decode_error(options, body) == errc::invalid_argument);
}

TEST_CASE("an oversized chunk-size line is rejected before its end arrives")
{
    aws_chunked_decoder d(unsigned_options());
    auto sink = [](std::span<const std::byte>) {};
    CHECK(d.feed(std::string(max_chunk_line - 1, '0'), sink).has_value());
    auto r = d.feed(std::string(2, '0'), sink);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::invalid_argument);
}

TEST_CASE("a wrong chunk signature anywhere is signature_does_not_match")
{
    auto options = signed_options(payload_mode::streaming_signed);
    auto body = frame(small_chunks, payload_mode::streaming_signed, options.signing);
    // Alter one data byte of each chunk in turn, then each signature.
    for (std::string_view needle : {"hello", "xxxx", "world"}) {
        auto tampered = body;
        tampered[tampered.find(needle)] ^= 0x01;
        CAPTURE(needle);
        CHECK(decode_error(options, tampered) == errc::signature_does_not_match);
    }
    for (std::size_t pos = body.find("signature="); pos != std::string::npos;
         pos = body.find("signature=", pos + 1)) {
        auto tampered = body;
        tampered[pos + 10] = tampered[pos + 10] == '0' ? '1' : '0';
        CAPTURE(pos);
        CHECK(decode_error(options, tampered) == errc::signature_does_not_match);
    }
    auto wrong_seed = options;
    wrong_seed.signing.seed_signature = std::string(64, '6');
    CHECK(decode_error(wrong_seed, body) == errc::signature_does_not_match);
}

TEST_CASE("trailers must be declared, present once, and signed in signed mode")
{
    auto options = signed_options();
    auto frame_with = [&](const trailer_list& trailers) {
        return frame(small_chunks, payload_mode::streaming_signed_trailer, options.signing, trailers);
    };
    CHECK(decode(options, frame_with(crc_trailer)).status.has_value());
    CHECK(decode_error(options, frame_with({})) == errc::invalid_argument);
    CHECK(decode_error(options, frame_with({{"x-amz-checksum-sha256", "abc="}})) == errc::invalid_argument);
    CHECK(decode_error(options, frame_with({crc_trailer[0], crc_trailer[0]})) == errc::invalid_argument);
    CHECK(decode_error(options, frame_with({crc_trailer[0], {"x-amz-meta-extra", "1"}})) ==
          errc::invalid_argument);

    auto body = frame_with(crc_trailer);
    auto tampered = body;
    tampered[tampered.find("NSRBwg==")] = 'M';
    CHECK(decode_error(options, tampered) == errc::signature_does_not_match);

    auto pos = body.find("x-amz-trailer-signature:");
    auto unsigned_trailers = body.substr(0, pos) + "\r\n";
    CHECK(decode_error(options, unsigned_trailers) == errc::invalid_argument);

    auto sig_not_last = body;
    sig_not_last.insert(sig_not_last.size() - 2, "x-amz-checksum-crc32:NSRBwg==\r\n");
    CHECK(decode_error(options, sig_not_last) == errc::invalid_argument);

    auto no_colon = body;
    no_colon.replace(no_colon.find("x-amz-checksum-crc32:"), 21, "x-amz-checksum-crc32 ");
    CHECK(decode_error(options, no_colon) == errc::invalid_argument);

    CHECK(decode_error(unsigned_options(), "0\r\nx-amz-checksum-crc32:NSRBwg==\r\nx-amz-trailer-signature:" +
                                               std::string(64, 'a') + "\r\n\r\n") == errc::invalid_argument);
    CHECK(decode_error(unsigned_options(),
                       "0\r\nx-amz-checksum-crc32:" + std::string(max_trailer_section, 'A') + "\r\n\r\n") ==
          errc::invalid_argument);
}

TEST_CASE("a truncated body is incomplete_body at every length")
{
    auto options = signed_options();
    auto body = frame(small_chunks, payload_mode::streaming_signed_trailer, options.signing, crc_trailer);
    for (std::size_t len = 0; len < body.size(); ++len) {
        CAPTURE(len);
        CHECK(decode_error(options, std::string_view(body).substr(0, len)) == errc::incomplete_body);
    }
}

TEST_CASE("x-amz-decoded-content-length must match the decoded payload exactly")
{
    auto options = signed_options();
    auto body = frame(small_chunks, payload_mode::streaming_signed_trailer, options.signing, crc_trailer);
    options.decoded_length = 111;
    CHECK(decode(options, body).status.has_value());
    options.decoded_length = 110;
    CHECK(decode_error(options, body) == errc::invalid_argument);
    options.decoded_length = 112;
    CHECK(decode_error(options, body) == errc::incomplete_body);
}

TEST_CASE("errors are sticky and bytes after the end are rejected")
{
    aws_chunked_decoder d(unsigned_options());
    auto sink = [](std::span<const std::byte>) {};
    REQUIRE(d.feed("0\r\nx-amz-checksum-crc32:NSRBwg==\r\n\r\n", sink).has_value());
    CHECK(d.done());
    auto extra = d.feed("0", sink);
    REQUIRE_FALSE(extra.has_value());
    CHECK(extra.error().code == errc::invalid_argument);
    CHECK(d.feed("", sink).error().code == errc::invalid_argument);
    CHECK(d.finish().error().code == errc::invalid_argument);
}

TEST_CASE("make_aws_chunked_decoder decodes a body signed by sign_headers")
{
    auto now = *parse_amz_date("20240301T120000Z");
    sign_options so;
    so.access_key_id = "AKIDEXAMPLE";
    so.secret = "secret";
    so.now = now;
    so.payload_hash = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER";
    std::vector<std::pair<std::string, std::string>> owned{{"host", "depot.example"},
                                                           {"content-encoding", "aws-chunked"},
                                                           {"x-amz-decoded-content-length", "111"},
                                                           {"x-amz-trailer", "x-amz-checksum-crc32"}};
    auto views = [&] {
        std::vector<header_view> v;
        for (const auto& [n, val] : owned)
            v.push_back({n, val});
        return v;
    };
    auto signed_headers = sign_headers("PUT", "/bucket/key", views(), so);
    owned.insert(owned.end(), signed_headers.begin(), signed_headers.end());
    auto headers = views();
    request_view req{"PUT", "/bucket/key", headers};
    auto auth = parse(req);
    REQUIRE(auth.has_value());
    REQUIRE(auth->has_value());
    REQUIRE(verify(**auth, req, so.secret, now, {}).has_value());

    auto decoder = make_aws_chunked_decoder(**auth, req, so.secret);
    REQUIRE(decoder.has_value());
    auto signing = chunk_signing{signing_key(so.secret, (*auth)->scope), (*auth)->amz_date,
                                 scope_string((*auth)->scope), (*auth)->signature};
    auto body = frame(small_chunks, payload_mode::streaming_signed_trailer, signing, crc_trailer);
    std::string out;
    auto sink = [&](std::span<const std::byte> b) {
        out.append(reinterpret_cast<const char*>(b.data()), b.size());
    };
    REQUIRE(decoder->feed(body, sink).has_value());
    REQUIRE(decoder->finish().has_value());
    CHECK(out.size() == 111);
    CHECK(decoder->trailer("x-amz-checksum-crc32") == "NSRBwg==");

    auto wrong_secret = make_aws_chunked_decoder(**auth, req, "other");
    REQUIRE(wrong_secret.has_value());
    CHECK(wrong_secret->feed(body, sink).error().code == errc::signature_does_not_match);
}

TEST_CASE("make_aws_chunked_decoder rejects non-streaming requests and bad length or trailer headers")
{
    parsed_auth auth;
    auth.mode = payload_mode::unsigned_payload;
    std::vector<header_view> none;
    CHECK(make_aws_chunked_decoder(auth, {"PUT", "/b/k", none}, "s").error().code == errc::invalid_argument);

    auth.mode = payload_mode::streaming_unsigned_trailer;
    std::vector<header_view> bad_length{{"x-amz-decoded-content-length", "12a"}};
    CHECK(make_aws_chunked_decoder(auth, {"PUT", "/b/k", bad_length}, "s").error().code ==
          errc::invalid_argument);

    auth.mode = payload_mode::streaming_signed;
    std::vector<header_view> trailer{{"x-amz-trailer", "x-amz-checksum-crc32"}};
    CHECK(make_aws_chunked_decoder(auth, {"PUT", "/b/k", trailer}, "s").error().code ==
          errc::invalid_argument);

    auth.mode = payload_mode::streaming_unsigned_trailer;
    std::vector<header_view> two{{"X-Amz-Trailer", " X-Amz-Checksum-CRC32 , x-amz-checksum-sha256"}};
    auto d = make_aws_chunked_decoder(auth, {"PUT", "/b/k", two}, "s");
    REQUIRE(d.has_value());
    auto sink = [](std::span<const std::byte>) {};
    CHECK(d->feed("0\r\nx-amz-checksum-crc32:NSRBwg==\r\nx-amz-checksum-sha256:abc=\r\n\r\n", sink)
              .has_value());
    CHECK(d->finish().has_value());
}
