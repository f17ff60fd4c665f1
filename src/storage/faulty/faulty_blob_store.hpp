#pragma once
/// \file
/// A fault-injecting wrapper around any blob store, for proving that upper layers leave no partial state
/// behind when storage fails at any step. Typical use: run an operation once to count the storage calls it
/// makes, then rerun it once per call with that call failing, and check what is left.
///
///     auto [store, faults] = make_faulty_blob_store(make_memory_blob_store());
///     faults->fail_nth(3, errc::unavailable); // the third storage call from now fails, then all pass again

#include "storage/blob_store.hpp"

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

namespace depot::storage {

/// The calls a fault_control counts. abort() is not one: it cannot fail.
enum class blob_op
{
    create,
    write,
    commit,
    open,
    read_some,
    stat,
    remove,
    list,
    remove_incomplete
};

/// A stable snake_case name ("read_some") for messages.
std::string_view to_string(blob_op op) noexcept;

/// Decides which calls of a faulty store fail. Every counted call (see blob_op) of the store and of the
/// writers and readers it made goes through `on_operation()`. Thread-safe.
///
/// A failed call does not reach the wrapped store. A writer whose write() or commit() failed that way is
/// unusable afterwards, as the blob_store contract says: later write/commit fail again without being counted,
/// and abort() (never counted) reaches the wrapped writer.
class fault_control
{
public:
    /// Fails the `n`th counted call from now (1 = the next one) with `code`, then lets calls through again.
    /// Replaces any previous arming.
    void fail_nth(std::size_t n, errc code = errc::io_error);
    /// Like fail_nth, but counts only calls of kind `op`.
    void fail_nth_of(blob_op op, std::size_t n, errc code = errc::io_error);
    /// Makes the `n`th counted call from now throw std::runtime_error (an infrastructure failure).
    void throw_nth(std::size_t n);
    /// Fails every counted call with `code` until heal().
    void fail_all(errc code = errc::io_error);
    /// Stops injecting failures.
    void heal();

    /// Counted calls since the store was made, failed ones included.
    std::size_t operations() const;
    /// Failures injected so far.
    std::size_t injected() const;
    /// The kind of call that received the last injected failure, if any.
    std::optional<blob_op> last_injected() const;

    /// For the wrapper: counts one call of kind `op` and returns the error it must report, if any. Throws
    /// std::runtime_error when armed by throw_nth.
    std::optional<error> on_operation(blob_op op);

private:
    enum class mode
    {
        off,
        nth,
        all
    };

    mutable std::mutex mu_;
    mode mode_ = mode::off;
    std::size_t countdown_ = 0;   ///< matching calls left until the armed one, for mode::nth
    std::optional<blob_op> only_; ///< counts only this kind, for mode::nth
    errc code_ = errc::io_error;
    bool throws_ = false;
    std::size_t operations_ = 0;
    std::size_t injected_ = 0;
    std::optional<blob_op> last_injected_;
};

/// A faulty store and its controls.
struct faulty_blob_store
{
    std::shared_ptr<blob_store> store;
    std::shared_ptr<fault_control> faults;
};

/// Wraps `inner`: with nothing armed every call passes through unchanged (kind() is "faulty"). The wrapper,
/// its writers and its readers keep `inner` alive.
faulty_blob_store make_faulty_blob_store(std::shared_ptr<blob_store> inner);

} // namespace depot::storage
