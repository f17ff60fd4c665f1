// The main of every doctest binary, with a watchdog: a test case that runs longer than
// DEPOT_TEST_CASE_TIMEOUT seconds (default 240; 0 turns it off) is reported by name, with every thread's
// stack (gdb, when installed), and the binary exits 124. A hang then costs CI minutes, not its whole
// ctest timeout, and says where it is: without this, a hung binary was killed by ctest with no output.
#define DOCTEST_CONFIG_IMPLEMENT
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <doctest/doctest.h>
#include <mutex>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace {

struct current_case
{
    std::mutex mu;
    std::string name;    // "" between test cases
    std::string subcase; // the innermost subcase entered, if any
    std::chrono::steady_clock::time_point since{};
};

current_case& current()
{
    static current_case c;
    return c;
}

/// Records which test case runs, and since when, for the watchdog.
class watchdog_listener : public doctest::IReporter
{
public:
    explicit watchdog_listener(const doctest::ContextOptions&) {}

    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats&) override {}
    void test_case_start(const doctest::TestCaseData& data) override
    {
        std::lock_guard lock(current().mu);
        current().name = std::string(data.m_file.c_str()) + ": " + data.m_name;
        current().subcase.clear();
        current().since = std::chrono::steady_clock::now();
    }
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats&) override
    {
        std::lock_guard lock(current().mu);
        current().name.clear();
    }
    void test_case_exception(const doctest::TestCaseException&) override {}
    void subcase_start(const doctest::SubcaseSignature& sig) override
    {
        std::lock_guard lock(current().mu);
        current().subcase = sig.m_name.c_str();
    }
    void subcase_end() override {}
    void log_assert(const doctest::AssertData&) override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}
};

/// Prints every thread's stack of this process with gdb (nothing when gdb is missing or may not attach).
void print_stacks()
{
    const auto pid = std::to_string(::getpid());
    const pid_t child = ::fork();
    if (child == 0) {
        ::dup2(STDERR_FILENO, STDOUT_FILENO);
        ::execlp("gdb", "gdb", "-p", pid.c_str(), "-batch", "-nx", "-ex", "set pagination off", "-ex",
                 "thread apply all bt", static_cast<char*>(nullptr));
        std::fprintf(stderr, "watchdog: gdb is not installed; no stacks\n");
        ::_exit(127);
    }
    if (child > 0) {
        int status = 0;
        ::waitpid(child, &status, 0);
    }
}

void watch(unsigned limit_seconds)
{
    for (;;) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        std::string name, subcase;
        std::chrono::steady_clock::duration ran{};
        {
            std::lock_guard lock(current().mu);
            if (current().name.empty())
                continue;
            ran = std::chrono::steady_clock::now() - current().since;
            name = current().name;
            subcase = current().subcase;
        }
        if (ran < std::chrono::seconds(limit_seconds))
            continue;
        std::fprintf(stderr, "\nwatchdog: test case \"%s\"%s%s has run for more than %u s; stacks follow\n",
                     name.c_str(), subcase.empty() ? "" : ", subcase ", subcase.c_str(), limit_seconds);
        std::fflush(stderr);
        print_stacks();
        std::fprintf(stderr, "watchdog: stopping the test binary (exit 124)\n");
        std::fflush(stderr);
        ::_exit(124);
    }
}

} // namespace

REGISTER_LISTENER("depot_watchdog", 1, watchdog_listener);

int main(int argc, char** argv)
{
    unsigned limit = 240;
    if (const char* env = std::getenv("DEPOT_TEST_CASE_TIMEOUT"))
        limit = static_cast<unsigned>(std::strtoul(env, nullptr, 10));
    if (limit > 0) {
#ifdef PR_SET_PTRACER
        // Yama's ptrace_scope=1 lets only an ancestor attach; gdb is our child.
        ::prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
        std::thread(watch, limit).detach();
    }
    doctest::Context context(argc, argv);
    return context.run();
}
