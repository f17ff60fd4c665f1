#include "s3/sse.hpp"

#include "common/hash.hpp"
#include "s3/xml.hpp"
#include "s3/xml_read.hpp"

namespace depot::s3 {
namespace {

constexpr std::string_view sse_header = "x-amz-server-side-encryption";

error argument(std::string message, std::string name)
{
    return make_error(errc::invalid_argument, std::move(message), std::move(name));
}

} // namespace

result<sse_headers> parse_sse_headers(const header_lookup& get, std::string_view prefix)
{
    sse_headers out;
    const std::string base = std::string(prefix) + "server-side-encryption";
    if (prefix == "x-amz-") {
        for (std::string_view kms :
             {"x-amz-server-side-encryption-aws-kms-key-id", "x-amz-server-side-encryption-context",
              "x-amz-server-side-encryption-bucket-key-enabled"})
            if (get(kms))
                return make_error(errc::not_implemented,
                                  "SSE-KMS is not supported: Depot has no KMS (use AES256)",
                                  std::string(kms));
        if (auto v = get(sse_header)) {
            if (*v == "aws:kms" || *v == "aws:kms:dsse")
                return make_error(errc::not_implemented,
                                  "SSE-KMS is not supported: Depot has no KMS (use AES256)",
                                  std::string(sse_header));
            if (*v != "AES256")
                return argument("The encryption method specified is not supported", std::string(sse_header));
            out.sse_s3 = true;
        }
    }
    const auto algorithm = get(base + "-customer-algorithm");
    const auto key = get(base + "-customer-key");
    const auto key_md5 = get(base + "-customer-key-md5");
    if (!algorithm && !key && !key_md5)
        return out;
    if (out.sse_s3)
        return argument(
            "Server Side Encryption with Customer provided key is incompatible with the encryption "
            "method specified",
            std::string(sse_header));
    if (!algorithm)
        return argument(
            "Requests specifying Server Side Encryption with Customer provided keys must provide a "
            "valid encryption algorithm.",
            base + "-customer-algorithm");
    if (*algorithm != "AES256")
        return argument("The requested encryption algorithm is not valid, must be AES256.",
                        base + "-customer-algorithm");
    if (!key)
        return argument(
            "Requests specifying Server Side Encryption with Customer provided keys must provide an "
            "appropriate secret key.",
            base + "-customer-key");
    auto raw = from_base64(*key);
    if (!raw || raw->size() != 32)
        return argument("The secret key was invalid for the specified algorithm.", base + "-customer-key");
    if (!key_md5)
        return argument(
            "Requests specifying Server Side Encryption with Customer provided keys must provide the "
            "client calculated MD5 of the secret key.",
            base + "-customer-key-MD5");
    const auto declared = from_base64(*key_md5);
    const auto computed = md5(*raw);
    if (!declared || *declared != computed)
        return argument("The calculated MD5 hash of the key did not match the hash that was provided.",
                        base + "-customer-key-MD5");
    out.customer_key = std::move(*raw);
    out.customer_key_md5 = to_base64(computed);
    return out;
}

result<std::string> parse_bucket_encryption(std::string_view body)
{
    using namespace xml_read;
    pugi::xml_document doc;
    auto root = load(doc, body, "ServerSideEncryptionConfiguration");
    if (!root)
        return std::move(root).error();
    const auto rules = children(*root, "Rule");
    if (rules.size() != 1)
        return malformed();
    const auto apply = child(rules[0], "ApplyServerSideEncryptionByDefault");
    if (!apply)
        return malformed();
    const auto algorithm_node = child(apply, "SSEAlgorithm");
    if (!algorithm_node)
        return malformed();
    const std::string algorithm(trim(text(algorithm_node)));
    if (algorithm == "aws:kms" || algorithm == "aws:kms:dsse")
        return make_error(errc::not_implemented, "SSE-KMS is not supported: Depot has no KMS (use AES256)");
    if (algorithm != "AES256")
        return make_error(
            errc::malformed_xml,
            "The XML you provided was not well-formed or did not validate against our published "
            "schema.");
    if (child(apply, "KMSMasterKeyID"))
        return make_error(errc::invalid_argument,
                          "a KMSMasterKeyID is not applicable if the default sse algorithm is not aws:kms",
                          "ApplyServerSideEncryptionByDefault");
    if (auto bke = child(rules[0], "BucketKeyEnabled")) {
        const std::string value = text(bke);
        const auto v = trim(value);
        if (v != "true" && v != "false")
            return malformed();
    }
    return algorithm;
}

std::string bucket_encryption_xml(std::string_view algorithm)
{
    xml_writer w;
    w.open("ServerSideEncryptionConfiguration", s3_xmlns);
    w.open("Rule");
    w.open("ApplyServerSideEncryptionByDefault");
    w.element("SSEAlgorithm", algorithm);
    w.close();
    w.element("BucketKeyEnabled", "false");
    w.close();
    return std::move(w).finish();
}

} // namespace depot::s3
