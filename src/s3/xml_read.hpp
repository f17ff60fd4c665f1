#pragma once
/// \file
/// The reading side of s3/xml.cpp, for the parsers of request bodies that live in files of their own
/// (s3/cors.cpp): namespace-tolerant element lookup and the S3 rules for a document's root.

#include "common/result.hpp"

#include <optional>
#include <pugixml.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace depot::s3::xml_read {

/// errc::malformed_xml with S3's message.
error malformed();
/// `s` without leading and trailing spaces, tabs and line ends.
std::string_view trim(std::string_view s) noexcept;
/// The first child element with the given local name (any namespace prefix), or an empty node.
pugi::xml_node child(const pugi::xml_node& parent, std::string_view name);
/// Every child element with the given local name, in document order.
std::vector<pugi::xml_node> children(const pugi::xml_node& parent, std::string_view name);
/// The element's character data (text and CDATA), untrimmed.
std::string text(const pugi::xml_node& node);
/// Loads `body` and returns its single root element if its local name is `root`; malformed otherwise.
result<pugi::xml_node> load(pugi::xml_document& doc, std::string_view body, std::string_view root);
/// A decimal integer made only of digits; nullopt otherwise or on overflow.
std::optional<int> parse_int(std::string_view s) noexcept;
/// Unicode code points in a valid UTF-8 string.
std::size_t code_points(std::string_view s) noexcept;

} // namespace depot::s3::xml_read
