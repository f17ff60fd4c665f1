#pragma once
/// \file
/// `depotctl audit verify|export|archive`: they read PostgreSQL directly (like `key` and `token`), so they
/// work without a running depotd and check the chain in what the database holds, not in what a server shows.

#include "cli.hpp"
#include "registry/pg/pg.hpp"
#include "storage/blob_store.hpp"

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <memory>

namespace depot::ctl {

/// Runs an `audit` command. Throws `failure` (exit 1 when verification fails, naming the first bad row).
boost::asio::awaitable<void> run_audit(const cli& c, std::shared_ptr<pg::pool> pool,
                                       std::function<std::shared_ptr<storage::blob_store>()> store_of);

} // namespace depot::ctl
