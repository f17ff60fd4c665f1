#pragma once
/// \file
/// `result<T>`: either a value or a `depot::error`. Used for outcomes that depend on input; infrastructure
/// failures throw instead (see error.hpp).

#include "common/error.hpp"

#include <cassert>
#include <type_traits>
#include <utility>
#include <variant>

namespace depot {

template <class T>
class [[nodiscard]] result {
public:
    result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    result(depot::error err) : v_(std::in_place_index<1>, std::move(err)) {}

    bool has_value() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }

    T& value() &
    {
        assert(has_value());
        return std::get<0>(v_);
    }
    const T& value() const&
    {
        assert(has_value());
        return std::get<0>(v_);
    }
    T&& value() &&
    {
        assert(has_value());
        return std::get<0>(std::move(v_));
    }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T&& operator*() && { return std::move(*this).value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    const depot::error& error() const&
    {
        assert(!has_value());
        return std::get<1>(v_);
    }
    depot::error&& error() &&
    {
        assert(!has_value());
        return std::get<1>(std::move(v_));
    }

private:
    std::variant<T, depot::error> v_;
};

template <>
class [[nodiscard]] result<void> {
public:
    result() = default;
    result(depot::error err) : err_(std::move(err)), ok_(false) {}

    bool has_value() const noexcept { return ok_; }
    explicit operator bool() const noexcept { return ok_; }
    void value() const { assert(ok_); }
    const depot::error& error() const&
    {
        assert(!ok_);
        return err_;
    }
    depot::error&& error() &&
    {
        assert(!ok_);
        return std::move(err_);
    }

private:
    depot::error err_;
    bool ok_ = true;
};

/// Shorthand for returning success from a `result<void>` function.
inline result<void> ok() { return {}; }

} // namespace depot
