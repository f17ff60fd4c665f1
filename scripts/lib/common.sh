# shellcheck shell=bash
# Shared helpers for scripts/run, scripts/test and scripts/deps. Source it; it defines functions and
# DEPOT_ROOT (the repository root, whatever the caller's working directory) and changes nothing else.

DEPOT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Messages go to stderr so that stdout stays parseable (e.g. a URL printed last).
depot_log() { printf '%s: %s\n' "${DEPOT_SCRIPT:-depot}" "$*" >&2; }
depot_die() { depot_log "error: $*"; exit 1; }

# True when something accepts TCP connections on 127.0.0.1:PORT. Pure bash, so it works before any
# package is installed.
depot_port_in_use() {
    local port="$1"
    (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null
}

# Prints a TCP port on 127.0.0.1 that nothing listens on. With an argument, that port is preferred
# when free. The kernel picks the port when python3 is there (no race with other scans); otherwise
# a random high port is probed.
depot_free_port() {
    local preferred="${1:-}"
    if [[ -n "$preferred" ]] && ! depot_port_in_use "$preferred"; then
        echo "$preferred"
        return
    fi
    if [[ -x /usr/bin/python3 ]]; then
        /usr/bin/python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
        return
    fi
    local port i
    for ((i = 0; i < 200; i++)); do
        port=$((20000 + RANDOM % 30000))
        if ! depot_port_in_use "$port"; then
            echo "$port"
            return
        fi
    done
    depot_die "no free TCP port found on 127.0.0.1"
}

# depot_build DIR TARGET... [-- CMAKE_ARGS...]
# Configures DIR with Ninja (only when it has no cache yet, or when the cache was made with other
# arguments) and builds the given targets. ccache is picked up by CMakeLists.txt when installed.
depot_build() {
    local dir="$1"
    shift
    local targets=() cmake_args=()
    while (($#)); do
        if [[ "$1" == "--" ]]; then
            shift
            cmake_args=("$@")
            break
        fi
        targets+=("$1")
        shift
    done
    local stamp="${dir}/.depot-configure-args"
    local wanted="${cmake_args[*]}"
    if [[ ! -f "${dir}/CMakeCache.txt" || ! -f "${dir}/build.ninja" || "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]]; then
        depot_log "configuring ${dir#"$DEPOT_ROOT"/} (${wanted})"
        mkdir -p "$dir"
        cmake -S "$DEPOT_ROOT" -B "$dir" -G Ninja "${cmake_args[@]}" >"${dir}/configure.log" 2>&1 || {
            cat "${dir}/configure.log" >&2
            depot_die "cmake configure failed"
        }
        printf '%s' "$wanted" >"$stamp"
    fi
    depot_log "building ${targets[*]:-all} in ${dir#"$DEPOT_ROOT"/}"
    cmake --build "$dir" ${targets[@]+--target "${targets[@]}"}
}
