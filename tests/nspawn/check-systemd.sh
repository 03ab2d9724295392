#!/bin/bash
# check-systemd.sh DEBDIR — the heatcurve .deb under a real, booted systemd 252:
# a Debian 12 tree (debootstrapped once, cached outside the clone) booted with
# systemd-nspawn on cgroup v2, so IPAddressDeny= is enforced as on a board.
#
# Checks: apt install of the .deb; active (running) with the simulated board's
# temperatures; STATUS=; the GPIO chips reach the service user (a stand-in
# device node) and a fan says when its line is not driven; a bad config on reload fails and the old one is
# kept; a run's cpu, io and command loads stay in the service's cgroup and
# nothing outlives stop; the watchdog restarts a SIGSTOPped daemon; socket
# activation answers the first request and the socket filters addresses
# itself; the service filter and the start-up hints (the loopback notice only
# while the unit's filter, read over D-Bus, lets in nothing else); purge.
#
# Network: the container has its own network namespace (--private-network).
# A veth pair joins it (198.51.100.1) to a namespace this script creates
# (198.51.100.2, the "LAN" client); no host address is used.
# Skips with a message when nspawn cannot run here, unless
# HEATCURVE_NSPAWN_REQUIRED=1 (CI), which makes that a failure.
set -euo pipefail

DEBDIR=${1:?usage: check-systemd.sh DEBDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${HEATCURVE_ROOTFS_CACHE:-/var/cache/heatcurve-ci/bookworm}
REQUIRED=${HEATCURVE_NSPAWN_REQUIRED:-0}
T0=$(date +%s)

skip() {
    echo "check-systemd: SKIPPED: $*"
    if [ "$REQUIRED" = 1 ]; then
        echo "check-systemd: HEATCURVE_NSPAWN_REQUIRED=1: a skip is a failure" >&2
        exit 1
    fi
    exit 0
}

[ "$(id -u)" -eq 0 ] || skip "needs root (systemd-nspawn, network namespaces)"
for tool in systemd-nspawn debootstrap nsenter ip curl; do
    command -v "$tool" >/dev/null || skip "$tool is not installed"
done
[ -d /sys/fs/cgroup ] || skip "no /sys/fs/cgroup"
arch=$(dpkg --print-architecture)
deb=$(ls "$DEBDIR"/heatcurve_*_"$arch".deb 2>/dev/null | tail -n 1) || true
[ -n "$deb" ] || { echo "check-systemd: no heatcurve_*_$arch.deb in $DEBDIR (make deb)" >&2; exit 1; }

"$HERE/rootfs.sh" "$CACHE"

WORK=$(mktemp -d /var/tmp/heatcurve-nspawn.XXXXXX)
LAN=hclan$$
VETH=hcv$$
NSPAWN=
LEADER=
failures=()

cleanup() {
    set +e
    if [ -n "$LEADER" ] && [ -d "/proc/$LEADER" ]; then
        nsenter -t "$LEADER" -a systemctl poweroff >/dev/null 2>&1
    fi
    if [ -n "$NSPAWN" ]; then
        for _ in $(seq 100); do kill -0 "$NSPAWN" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$NSPAWN" 2>/dev/null
        wait "$NSPAWN" 2>/dev/null
    fi
    ip netns del "$LAN" 2>/dev/null
    ip link del "${VETH}b" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

in_ct() { nsenter -t "$LEADER" -a -- "$@"; }
ok() { echo "ok   - $*"; }
fail() { echo "FAIL - $*"; failures+=("$1"); }
# wait_until SECONDS CMD...: true once CMD succeeds, checking every 0.2 s.
wait_until() {
    local n=$(( $1 * 5 )) i
    shift
    for ((i = 0; i < n; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    return 1
}
http() {        # http URL: status code from inside the container, 000 if none
    in_ct curl -s -m 3 -o /dev/null -w '%{http_code}' "$1" || true
}
lan_http() {    # from the LAN namespace
    ip netns exec "$LAN" curl -s -m 3 -o /dev/null -w '%{http_code}' "$1" || true
}
prop() { in_ct systemctl show -p "$2" --value "$1"; }
journal_has() { in_ct journalctl -q -u "$1" --no-pager | grep -qF -- "$2"; }
invocation_has() {      # the journal of heatcurved.service's current invocation has the text
    in_ct journalctl -q --no-pager _SYSTEMD_INVOCATION_ID="$(prop heatcurved.service InvocationID)" \
        | grep -qF -- "$1"
}
is_running() { [ "$(prop heatcurved.service SubState)" = running ]; }
set_conf() { in_ct sh -c "printf '$1' > /etc/heatcurve/heatcurved.conf"; }
service_answers() { [ "$(http http://127.0.0.1:8080/api/v1/status)" = 200 ]; }

# ---- boot
echo "check-systemd: copying the cached tree ($CACHE)"
cp -a "$CACHE" "$WORK/root"
cp "$deb" "$WORK/root/root/"
SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 setsid systemd-nspawn -q -D "$WORK/root" -b \
    --machine="hc$$" --register=no --keep-unit --private-network \
    --capability=CAP_BPF,CAP_PERFMON --system-call-filter=bpf \
    </dev/null >"$WORK/console.log" 2>&1 &
NSPAWN=$!
for _ in $(seq 100); do
    LEADER=$(cat "/proc/$NSPAWN/task/$NSPAWN/children" 2>/dev/null | awk '{ print $1 }')
    [ -n "$LEADER" ] && break
    kill -0 "$NSPAWN" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$LEADER" ]; then
    cat "$WORK/console.log"
    skip "systemd-nspawn did not start a container here (console above)"
fi
booted() { case $(in_ct systemctl is-system-running 2>/dev/null) in running|degraded) return 0 ;; esac; return 1; }
if ! wait_until 60 booted; then
    tail -n 30 "$WORK/console.log"
    skip "the container did not finish booting in 60 s (console above)"
fi
[ "$(in_ct stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || fail "the container is not on cgroup v2: IP filters would not apply"
echo "check-systemd: booted $(in_ct systemctl --version | head -n 1) in $(( $(date +%s) - T0 )) s"

# The LAN: container side 198.51.100.1, client namespace 198.51.100.2.
ip netns add "$LAN"
ip link add "${VETH}a" type veth peer name "${VETH}b"
ip link set "${VETH}a" netns "$LEADER"
ip link set "${VETH}b" netns "$LAN"
in_ct ip addr add 198.51.100.1/24 dev "${VETH}a"
in_ct ip link set "${VETH}a" up
ip -n "$LAN" addr add 198.51.100.2/24 dev "${VETH}b"
ip -n "$LAN" link set "${VETH}b" up
ip -n "$LAN" link set lo up

# ---- install
if in_ct env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "/root/$(basename "$deb")" \
        > "$WORK/apt.log" 2>&1; then
    ok "apt install $(basename "$deb")"
else
    cat "$WORK/apt.log"
    fail "apt install"
    exit 1
fi
in_ct getent passwd heatcurve >/dev/null && ok "system user heatcurve created (sysusers)" \
    || fail "no heatcurve user after install"
[ "$(prop heatcurved.service UnitFileState)" = enabled ] && ok "heatcurved.service enabled" \
    || fail "heatcurved.service not enabled by the package"

# ---- active (running) on the simulated board
set_conf '[daemon]\nsimulate = yes\n'
in_ct systemctl restart heatcurved
temps() { in_ct curl -s -m 3 http://127.0.0.1:8080/api/v1/sensors | grep -q '"temperatures": *\[ *{'; }
if wait_until 15 is_running && wait_until 15 temps; then
    ok "active (running), the simulated board answers temperatures"
else
    in_ct journalctl -u heatcurved --no-pager | tail -n 20
    fail "active (running) with temperatures"
fi
status_set() { prop heatcurved.service StatusText | grep -q '^Hottest .* C'; }
if wait_until 10 status_set; then ok "STATUS= \"$(prop heatcurved.service StatusText)\""
else fail "STATUS= is \"$(prop heatcurved.service StatusText)\""; fi

# ---- devices: the GPIO chips reach the service user, the fan says when its line is not driven
# No GPIO chip in the container: /dev/gpiochip9 is a stand-in, a clone of
# /dev/null (1:3, which DevicePolicy=closed lets through) with the group and
# mode the package's udev rule gives a chip. Under the unit the daemon must
# open it (PrivateDevices=yes hid it: "no such GPIO chip"; without the group:
# "Permission denied"); the chip ioctl then fails: "not a GPIO chip".
devs=$(prop heatcurved.service DeviceAllow)
if [ "$(prop heatcurved.service DevicePolicy)" = closed ] && [ "$(prop heatcurved.service PrivateDevices)" = no ] \
        && grep -q 'char-gpiochip rw' <<<"$devs" && grep -q '/dev/vcio rw' <<<"$devs"; then
    ok "DevicePolicy=closed with DeviceAllow= $(tr '\n' ' ' <<<"$devs")"
else
    fail "the unit's devices: DevicePolicy=$(prop heatcurved.service DevicePolicy) DeviceAllow=$devs"
fi
groups=" $(in_ct id -nG heatcurve) "
if [[ $groups == *" gpio "* && $groups == *" video "* ]] && in_ct test -f /lib/udev/rules.d/60-heatcurve-gpio.rules; then
    ok "heatcurve is in gpio and video (sysusers), the udev rule is installed"
else
    fail "heatcurve's groups are${groups% }; udev rule: $(in_ct ls /lib/udev/rules.d/ | grep heatcurve || echo none)"
fi
in_ct sh -c 'rm -f /dev/gpiochip9 && mknod -m 0660 /dev/gpiochip9 c 1 3 && chgrp gpio /dev/gpiochip9'
set_conf '[daemon]\nsimulate = yes\n[fan stand-in]\nsensor = hottest\non = 20\noff = 10\ngpio = gpiochip9:0\n[fan missing]\nsensor = hottest\non = 20\noff = 10\ngpio = gpiochip7:0\n'
in_ct systemctl restart heatcurved
fans() { in_ct curl -s -m 3 http://127.0.0.1:8080/api/v1/alerts | python3 -c 'import json, sys
for f in json.load(sys.stdin)["fans"]:
    print(f["name"], f["on"], f["gpio_driven"], f["gpio_error"])' 2>/dev/null; }
fans_on() { [ "$(fans | grep -c '^[a-z-]* True False ')" = 2 ]; }
if wait_until 15 fans_on && fans | grep -q '^stand-in True False gpiochip9:0: not a GPIO chip$' \
        && fans | grep -q '^missing True False gpiochip7:0: no such GPIO chip$'; then
    ok "a fan on the stand-in chip: opened by heatcurve, the ioctl fails; both fans on, \"gpio_driven\": false"
else
    fans
    in_ct journalctl -q -u heatcurved --no-pager | grep -i gpio | tail -n 5
    fail "the fans' lines under the unit: $(fans | tr '\n' ';')"
fi
if [ "$(in_ct journalctl -q -u heatcurved --no-pager | grep -c 'Fan stand-in: cannot drive gpio gpiochip9:0')" = 1 ]; then
    ok "the journal names the stand-in fan's line once"
else
    fail "the journal on the stand-in fan's line: $(in_ct journalctl -q -u heatcurved --no-pager | grep stand-in)"
fi
in_ct chmod 0600 /dev/gpiochip9
in_ct systemctl restart heatcurved
denied() { fans | grep -q '^stand-in True False gpiochip9:0: cannot open the GPIO chip: Permission denied$'; }
if wait_until 15 denied; then
    ok "the same node without the group's rw: Permission denied (the group is what lets it in)"
else
    fail "with mode 0600 the stand-in fan says: $(fans | grep stand-in)"
fi
in_ct rm -f /dev/gpiochip9

# ---- reload: a bad config fails the reload and the old one stays
pid=$(prop heatcurved.service MainPID)
set_conf '[daemon]\nsimulate = yes\ninterval = 5x\n'
if in_ct systemctl reload heatcurved >/dev/null 2>&1; then
    fail "systemctl reload succeeded with a bad config"
else
    ok "systemctl reload fails on a bad config"
fi
if is_running && [ "$(prop heatcurved.service MainPID)" = "$pid" ] && temps; then
    ok "after the failed reload the same process runs the old config"
else
    fail "the daemon did not keep running after a bad reload"
fi
# a token: command loads need one
in_ct sh -c 'printf "ct-token\n" > /etc/heatcurve/token && chgrp heatcurve /etc/heatcurve/token && chmod 640 /etc/heatcurve/token'
set_conf '[daemon]\nsimulate = yes\ntoken_file = /etc/heatcurve/token\n'
in_ct systemctl reload heatcurved && ok "systemctl reload succeeds on a good config" \
    || fail "systemctl reload of a good config"

# ---- a run's loads stay in the service's cgroup; nothing outlives stop
cg=/sys/fs/cgroup$(prop heatcurved.service ControlGroup)
run=$(in_ct curl -s -m 5 -H "Authorization: Bearer ct-token" -X POST http://127.0.0.1:8080/api/v1/runs -d '{"label": "cgroup",
  "phases": [{"kind": "stress", "duration": "3s", "load": {"type": "cpu", "workers": 1}},
             {"kind": "stress", "duration": "3s", "load": {"type": "io", "size": "1M"}},
             {"kind": "stress", "duration": "10m", "load": {"type": "command", "argv": ["sleep", "4242"]}}]}')
run_id=$(printf '%s' "$run" | sed -n 's/^{"id": *\([0-9]*\).*/\1/p')
[ -n "$run_id" ] || fail "starting a run: $run"
in_phase() { in_ct curl -s -m 3 "http://127.0.0.1:8080/api/v1/runs/$run_id" | grep -q "\"phase_index\": *$1[,}]"; }
workers_in_cgroup() {    # every child of the daemon is in the service's cgroup, and there is one
    local main kids k
    main=$(prop heatcurved.service MainPID)
    kids=$(in_ct ps -o pid= --ppid "$main" | tr -d ' ')
    [ -n "$kids" ] || return 1
    for k in $kids; do in_ct grep -qx "$k" "$cg/cgroup.procs" || return 1; done
}
for phase in 0:cpu 1:io 2:command; do
    if [ -n "$run_id" ] && wait_until 10 in_phase "${phase%%:*}" && wait_until 5 workers_in_cgroup; then
        ok "${phase#*:} load: its workers are in $(prop heatcurved.service ControlGroup)"
    else
        fail "${phase#*:} load in the service's cgroup"
    fi
done
sleeper() { in_ct pgrep -x sleep -a | grep -q 4242; }
sleeper || fail "the command load (sleep 4242) is not running"

# ---- a restart mid-run (an upgrade does the same): the run is interrupted, its load gone
in_ct systemctl restart heatcurved
state_of_run() { in_ct curl -s -m 3 "http://127.0.0.1:8080/api/v1/runs/$run_id"; }
interrupted() { state_of_run | grep -q '"state": *"interrupted"'; }
if [ -n "$run_id" ] && wait_until 15 interrupted && state_of_run | grep -q 'heatcurved was stopped (SIGTERM' \
        && ! sleeper; then
    ok "systemctl restart mid-run: the run is interrupted (SIGTERM), its command load gone"
else
    fail "restart mid-run: $(state_of_run | head -c 300)"
fi
run=$(in_ct curl -s -m 5 -H "Authorization: Bearer ct-token" -X POST http://127.0.0.1:8080/api/v1/runs -d '{
  "phases": [{"kind": "stress", "duration": "10m", "load": {"type": "command", "argv": ["sleep", "4242"]}}]}')
wait_until 10 sleeper || fail "the second command load (sleep 4242) is not running: $run"
in_ct systemctl stop heatcurved
left=$(in_ct cat "$cg/cgroup.procs" 2>/dev/null || true)
left+=$(in_ct pgrep -a -x sleep | grep 4242 || true)
left+=$(in_ct pgrep -a -x heatcurved || true)
if [ -z "$left" ]; then ok "after systemctl stop nothing is left (cgroup empty, no sleep 4242)"
else fail "left after stop: $left"; fi

# ---- watchdog: a stopped daemon is killed and restarted (WatchdogSec=5s here, 30s in the unit)
in_ct mkdir -p /etc/systemd/system/heatcurved.service.d
in_ct sh -c 'printf "[Service]\nWatchdogSec=5s\nRestartSec=1s\n" > /etc/systemd/system/heatcurved.service.d/watchdog-test.conf'
in_ct systemctl daemon-reload
in_ct systemctl start heatcurved
wait_until 10 is_running || true
pid=$(prop heatcurved.service MainPID)
restarts=$(prop heatcurved.service NRestarts)
in_ct kill -STOP "$pid"
restarted() { [ "$(prop heatcurved.service NRestarts)" -gt "$restarts" ] && is_running \
    && [ "$(prop heatcurved.service MainPID)" != "$pid" ]; }
# journald may show the line a moment after systemd restarted the service
if wait_until 30 restarted && wait_until 10 journal_has heatcurved "Watchdog timeout"; then
    ok "watchdog: SIGSTOPped daemon killed (Watchdog timeout) and restarted"
else
    fail "watchdog restart after SIGSTOP"
fi
in_ct rm /etc/systemd/system/heatcurved.service.d/watchdog-test.conf
in_ct systemctl daemon-reload

# ---- socket activation, and the socket's own address filter
in_ct systemctl stop heatcurved
in_ct systemctl start heatcurved.socket
if [ "$(prop heatcurved.service ActiveState)" = inactive ] && service_answers \
        && [ "$(prop heatcurved.service ActiveState)" = active ] \
        && journal_has heatcurved "socket activation"; then
    ok "socket activation: the first request starts the service and is answered; the log says the socket wins"
else
    fail "socket activation"
fi
in_ct systemctl stop heatcurved heatcurved.socket
in_ct mkdir -p /etc/systemd/system/heatcurved.socket.d
in_ct sh -c 'printf "[Socket]\nListenStream=\nListenStream=0.0.0.0:8080\n" > /etc/systemd/system/heatcurved.socket.d/lan.conf'
in_ct systemctl daemon-reload
in_ct systemctl start heatcurved.socket
code=$(lan_http http://198.51.100.1:8080/api/v1/status)
[ "$code" = 000 ] && ok "socket on 0.0.0.0: a LAN client is refused by the socket's IPAddressDeny=" \
    || fail "socket on 0.0.0.0 answered the LAN with $code"
in_ct systemctl stop heatcurved heatcurved.socket
in_ct sh -c 'printf "IPAddressAllow=198.51.100.0/24\n" >> /etc/systemd/system/heatcurved.socket.d/lan.conf'
in_ct systemctl daemon-reload
in_ct systemctl start heatcurved.socket
code=$(lan_http http://198.51.100.1:8080/api/v1/status)
[ "$code" = 200 ] && ok "socket drop-in IPAddressAllow=198.51.100.0/24: the LAN client gets 200" \
    || fail "socket with IPAddressAllow=: the LAN got $code"
in_ct systemctl stop heatcurved heatcurved.socket
in_ct rm -r /etc/systemd/system/heatcurved.socket.d
in_ct systemctl daemon-reload

# ---- an upgrade keeps the socket a user enabled, listening and answering
in_ct systemctl enable --now heatcurved.socket >/dev/null 2>&1
if in_ct env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --reinstall "/root/$(basename "$deb")" \
        > "$WORK/reinstall.log" 2>&1 && [ "$(prop heatcurved.socket ActiveState)" = active ] \
        && wait_until 10 service_answers; then
    ok "an upgrade (reinstall) with the socket enabled: still listening, and answered"
else
    cat "$WORK/reinstall.log"
    fail "after an upgrade the socket is $(prop heatcurved.socket ActiveState)"
fi
in_ct systemctl disable --now heatcurved.socket >/dev/null 2>&1
in_ct systemctl stop heatcurved

# ---- listen on the LAN by config: filtered until the drop-in; the hints at start
# A directory the user made for the daemon: writable by it, but not under
# ProtectSystem=strict without the drop-in.
in_ct mkdir -p /srv/hc-stress
in_ct chown heatcurve: /srv/hc-stress
set_conf '[daemon]\nsimulate = yes\nlisten = :8080\n[runs]\nstress_dir = /srv/hc-stress\n'
in_ct systemctl start heatcurved
wait_until 10 service_answers || true
code=$(lan_http http://198.51.100.1:8080/api/v1/status)
[ "$code" = 000 ] && ok "listen = :8080: the LAN client is dropped by the service's IPAddressDeny=" \
    || fail "listen = :8080 answered the LAN with $code before any drop-in"
journal_has heatcurved "IPAddressAllow=" && ok "the journal names the IPAddressAllow= drop-in" \
    || fail "no IPAddressAllow= hint in the journal"
# the unit's filter as systemd tells it over D-Bus: only loopback, so the notice is firm
wait_until 5 invocation_has "listen = *:8080 is not reachable beyond loopback: heatcurved.service has IPAddressDeny=any" \
    && ok "the unit lets in only loopback (read over D-Bus): the notice says so" \
    || fail "no notice that listen = :8080 is not reachable beyond loopback"
journal_has heatcurved "ReadWritePaths=/srv/hc-stress" && ok "the journal names ReadWritePaths=/srv/hc-stress" \
    || fail "no ReadWritePaths= hint for a read-only stress_dir"
in_ct sh -c 'printf "[Service]\nIPAddressAllow=198.51.100.0/24\n" > /etc/systemd/system/heatcurved.service.d/lan.conf'
in_ct systemctl daemon-reload
in_ct systemctl restart heatcurved
wait_until 10 service_answers || true
code=$(lan_http http://198.51.100.1:8080/api/v1/status)
[ "$code" = 200 ] && ok "service drop-in IPAddressAllow=198.51.100.0/24: the LAN client gets 200" \
    || fail "service with IPAddressAllow=: the LAN got $code"
lan_said() { invocation_has "listen = *:8080: heatcurved.service lets in only localhost and 198.51.100.0/24"; }
if wait_until 5 lan_said && ! invocation_has "reachable beyond loopback"; then
    ok "with the LAN allowed by a drop-in, no notice; the journal says what the unit lets in"
else
    in_ct journalctl -q --no-pager _SYSTEMD_INVOCATION_ID="$(prop heatcurved.service InvocationID)" | tail -n 20
    fail "with the LAN allowed, the loopback notice is still logged (or the filter not told)"
fi

# ---- purge: units and user go, the state stays; a socket started by hand stops with them
in_ct systemctl stop heatcurved
in_ct systemctl start heatcurved.socket
in_ct env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q heatcurve > "$WORK/purge.log" 2>&1 \
    || { cat "$WORK/purge.log"; fail "apt purge"; }
if in_ct test ! -e /lib/systemd/system/heatcurved.service && in_ct test ! -e /lib/systemd/system/heatcurved.socket \
        && ! in_ct getent passwd heatcurve >/dev/null && in_ct test ! -e /etc/heatcurve/heatcurved.conf; then
    ok "purge removed the units, the config and the user"
else
    fail "purge left units, config or user behind"
fi
socket_state=$(prop heatcurved.socket ActiveState)
[ "$socket_state" != active ] && ok "purge stopped the socket (it is $socket_state)" \
    || fail "purge left heatcurved.socket active, with no unit file"
in_ct test -d /var/lib/heatcurve/runs && ok "purge kept /var/lib/heatcurve (the recorded runs)" \
    || fail "purge removed /var/lib/heatcurve"

echo
echo "check-systemd: $(( $(date +%s) - T0 )) s, ${#failures[@]} failure(s)"
[ "${#failures[@]}" -eq 0 ] || { printf 'failed: %s\n' "${failures[@]}"; exit 1; }
