// depotctl's remote commands: the model registry through the REST API (/api/v1), and `push` / `pull`
// of model directories over S3 and the read-only model view. Everything goes through a running depotd,
// authenticated with an S3 access key (SigV4) or, for REST-only commands, an API token. One file per
// command family; this one dispatches.
#include "remote_common.hpp"

#include <set>

namespace depot::ctl {

bool is_remote_command(const cli& c)
{
    static const std::set<std::string> remote = {"model",   "version", "alias",  "snapshot",
                                                 "webhook", "warmup",  "push",   "pull",
                                                 "team",    "member",  "policy", "bucket"};
    return !c.positional.empty() && remote.count(c.positional[0]) != 0;
}

int run_remote(const cli& c)
{
    const auto& cmd = c.positional.at(0);
    auto ep = endpoint_of(c);
    try {
        if (cmd == "model")
            return model_command(c, ep);
        if (cmd == "version")
            return version_command(c, ep);
        if (cmd == "alias")
            return alias_command(c, ep);
        if (cmd == "snapshot")
            return snapshot_command(c, ep);
        if (cmd == "webhook")
            return webhook_command(c, ep);
        if (cmd == "warmup")
            return warmup_command(c, ep);
        if (cmd == "team")
            return team_command(c, ep);
        if (cmd == "member")
            return member_command(c, ep);
        if (cmd == "policy")
            return policy_command(c, ep);
        if (cmd == "bucket")
            return bucket_command(c, ep);
        if (cmd == "user")
            return user_command(c, ep);
        if (cmd == "key")
            return key_command(c, ep);
        if (cmd == "token")
            return token_command(c, ep);
        if (cmd == "push")
            return push_command(c, ep);
        return pull_command(c, ep);
    } catch (const transport_error& e) {
        throw failure(e.what());
    }
}

} // namespace depot::ctl