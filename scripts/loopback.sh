# Sourced by the benchmark and the hub profile: loopback ports for the processes they start.

# free_port: a loopback TCP port nothing listens on.
free_port() {
    local port
    while :; do
        port=$((20000 + RANDOM % 40000))
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
    done
}

# wait_for_port PORT: waits up to 5 s until something listens on the loopback PORT; fails after.
wait_for_port() {
    local _
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}
