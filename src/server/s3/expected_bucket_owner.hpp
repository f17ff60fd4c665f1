#pragma once
/// \file
/// x-amz-expected-bucket-owner and x-amz-source-expected-bucket-owner: a client names the owner it expects
/// the bucket (or the copy's source bucket) to have, so that a request meant for its own bucket never
/// reaches a bucket of the same name owned by someone else. A bucket's owner is its owner's user id (the
/// Owner ID of ListBuckets). The dispatcher checks both for every S3 request once it is authorized.

#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>

namespace depot::server::s3op {

namespace asio = boost::asio;

/// ok() when no expectation is named, when it holds, or when the bucket does not exist (the action answers
/// NoSuchBucket). Errors: access_denied when the bucket (or the copy's source bucket) has another owner.
asio::awaitable<result<void>> check_expected_bucket_owner(request_context& ctx);

} // namespace depot::server::s3op
