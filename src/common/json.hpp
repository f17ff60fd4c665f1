#pragma once
/// \file
/// Depot's one JSON library is Boost.JSON (compiled once in common/json_impl.cpp); this header adds the few
/// helpers every user needs.
///
/// Why Boost.JSON and not nlohmann::json, which the first round also used: the JSON Depot parses and
/// writes on request paths (REST and Hugging Face API bodies, the audit and event details written with every
/// change, webhook deliveries, credential scopes read on every authenticated request) is small and frequent,
/// and Boost.JSON parses and serialises it several times faster, with one allocation strategy
/// (`boost::json::storage_ptr`) and without exceptions on malformed input (`parse(text, ec)`). It is part of
/// the Boost that Beast and Asio already bring, so it costs no dependency; nlohmann's only advantage (an
/// ordered or sorted `dump`) matters nowhere: the audit chain's canonical form is PostgreSQL's
/// (`audit_canonical` in schema/0008_audit.sql), not a C++ serialisation.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace depot {

/// `text` parsed, or nullopt when it is not one well-formed JSON text (never throws).
std::optional<boost::json::value> json_parse(std::string_view text) noexcept;

/// The first member name that `text` (one well-formed JSON text) gives twice in one object, if any.
/// Boost.JSON's value parser keeps the last of them, so a document a reader takes one way would act the
/// other way (a policy's "Effect": "Deny" followed by "Effect": "Allow"): every JSON document Depot reads
/// from a request is refused with one.
std::optional<std::string> duplicate_member(std::string_view text);

/// `s` with every ill-formed UTF-8 sequence replaced by U+FFFD: Boost.JSON writes string bytes as they are,
/// and PostgreSQL's jsonb, like every JSON reader, refuses ill-formed UTF-8. Values that entered Depot
/// were validated there; this is for what a store or a peer handed back.
std::string utf8_lossy(std::string_view s);

/// `s` as a JSON string literal, quotes included (ill-formed UTF-8 replaced).
std::string json_quote(std::string_view s);

/// A JSON string value of `s` (ill-formed UTF-8 replaced).
boost::json::value json_string(std::string_view s);

} // namespace depot
