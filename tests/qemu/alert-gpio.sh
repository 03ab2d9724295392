#!/bin/sh
# alert-gpio.sh — runs inside the QEMU virt machine (vm.sh): heatcurved on a
# fixture tree with an alert rule on PL061 line 5 and a fan on line 6, and an
# active-low rule (with crit and lost) on line 4 and fan on line 7; the
# fixture's temperature is raised past the rules and the fans, then lowered,
# then the sensor is lost and comes back, and each line's physical level is
# read back from /sys/kernel/debug/gpio. Then a
# second daemon's ticks are checked on the wall clock's grid, before and
# after the clock is set. Prints
# PASS/FAIL lines and "alert-gpio: N passed, M failed"; exits non-zero on
# any failure.
B=/bin/busybox
root=/fixture
zone=$root/sys/class/thermal/thermal_zone0/temp
pass=0
fail=0

check() {       # NAME CONDITION...: PASS or FAIL
        name=$1
        shift
        if "$@"; then echo "PASS $name"; pass=$((pass + 1)); else echo "FAIL $name"; fail=$((fail + 1)); fi
}
# level CONSUMER: hi, lo, or "none" when the line is not requested by it
level() {
        l=$($B grep "|heatcurved/$1 *)" /sys/kernel/debug/gpio | $B sed -n 's/.*) out \([a-z]*\).*/\1/p')
        echo "${l:-none}"
}
wait_level() {  # CONSUMER LEVEL: up to 10 s
        i=0
        while [ "$(level "$1")" != "$2" ] && [ $i -lt 100 ]; do $B usleep 100000; i=$((i + 1)); done
        [ "$(level "$1")" = "$2" ]
}
stays_level() { # CONSUMER LEVEL SECONDS: it does not change meanwhile
        i=0
        while [ $i -lt $(($3 * 10)) ]; do
                [ "$(level "$1")" = "$2" ] || return 1
                $B usleep 100000
                i=$((i + 1))
        done
}

$B ip link set lo up
$B mkdir -p /tmp/state
echo 45000 > $zone
cat > /tmp/h.conf <<CONF
[daemon]
listen = 127.0.0.1:8080
state_dir = /tmp/state
interval = 200ms

[alert led]
sensor = thermal_zone0
warn = 60
hysteresis = 2
gpio = gpiochip0:5

[fan case]
sensor = thermal_zone0
on = 62
off = 55
min_on = 1s
gpio = 9030000.pl061:6

[alert hot]
sensor = thermal_zone0
warn = 70
crit = 75
hysteresis = 2
lost = yes
gpio = gpiochip0:4
gpio_active_low = yes

[fan cpu]
sensor = thermal_zone0
on = 80
off = 70
min_on = 1s
gpio = gpiochip0:7
gpio_active_low = yes
CONF
/bin/heatcurved -c /tmp/h.conf --sysfs-root $root --procfs-root $root >/tmp/log 2>&1 &
pid=$!

check "the rule's line is requested, low while ok" wait_level alert-led lo
check "the fan's line is requested by chip label, low while off" wait_level fan-case lo
check "gpio_active_low: the rule's line is high (inactive) while ok" wait_level alert-hot hi
check "gpio_active_low: the fan's line is high (inactive) while off" wait_level fan-cpu hi
echo 61000 > $zone
check "61 C: the rule (warn 60) drives its line high" wait_level alert-led hi
check "61 C: the fan (on 62) stays off" stays_level fan-case lo 1
echo 63000 > $zone
check "63 C: the fan switches on" wait_level fan-case hi
echo 59000 > $zone
check "59 C: within the hysteresis, the rule's line stays high" stays_level alert-led hi 1
check "59 C: above off (55), the fan stays on" stays_level fan-case hi 1
echo 54000 > $zone
check "54 C: the rule clears, its line goes low" wait_level alert-led lo
check "54 C: the fan switches off" wait_level fan-case lo
$B grep -q "Alert led: warn, thermal_zone0 at 61.0 C" /tmp/log
check "the transition is logged" [ $? -eq 0 ]
check "54 C: the active-low rule's line stayed high throughout" [ "$(level alert-hot)" = hi ]
check "54 C: the active-low fan's line stayed high throughout" [ "$(level fan-cpu)" = hi ]

# crit on an active-low line, and a lost sensor. Each step first waits until
# the API shows the new state (the line is set in the same transition), then
# reads the line: a level read before the tick saw the change would pass for
# the wrong reason where the line was already at the level looked for.
# has NAME TEXT: /api/v1/alerts's object (rule or fan) named NAME holds TEXT
has() {
        $B wget -q -O - http://127.0.0.1:8080/api/v1/alerts | $B tr '{' '\n' | $B grep "\"name\":\"$1\"" |
                $B grep -q "$2"
}
wait_has() {    # NAME TEXT: up to 10 s
        i=0
        while ! has "$1" "$2" && [ $i -lt 100 ]; do $B usleep 100000; i=$((i + 1)); done
        has "$1" "$2"
}
echo 76000 > $zone
check "76 C: the rule is crit" wait_has hot '"state":"crit"'
check "76 C: the rule (crit 75, active low) drives its line low" [ "$(level alert-hot)" = lo ]
check "76 C: its line is reported driven" has hot '"gpio_driven":true'
check "76 C: the active-low fan (on 80) stays off, high" stays_level fan-cpu hi 1
echo 54000 > $zone
check "54 C: the crit rule clears" wait_has hot '"state":"ok"'
check "54 C: the cleared rule's active-low line is high" [ "$(level alert-hot)" = hi ]
check "54 C: the active-high fan is off again" wait_level fan-case lo

# a lost sensor: every fan on it switches on, a rule with lost = yes is on
echo garbage > $zone
check "sensor lost: the rule with lost = yes is lost" wait_has hot '"state":"lost"'
check "sensor lost: its active-low line is low" [ "$(level alert-hot)" = lo ]
check "sensor lost: the active-low fan switches on" wait_has cpu '"on":true'
check "sensor lost: the active-low fan's line is low" [ "$(level fan-cpu)" = lo ]
check "sensor lost: the active-high fan switches on, its line high" wait_level fan-case hi
check "sensor lost: the rule without lost = yes keeps its state, line low" [ "$(level alert-led)" = lo ]
echo 54000 > $zone
check "sensor back at 54 C: the rule clears" wait_has hot '"state":"ok"'
check "sensor back at 54 C: its active-low line is high" [ "$(level alert-hot)" = hi ]
check "sensor back at 54 C: the active-low fan switches off" wait_has cpu '"on":false'
check "sensor back at 54 C: the active-low fan's line is high" [ "$(level fan-cpu)" = hi ]
$B kill $pid
$B usleep 500000
check "heatcurved stops cleanly" [ ! -d /proc/$pid ] || [ "$($B cat /proc/$pid/status 2>/dev/null | $B grep -c zombie)" = 1 ]

# The tick's grid: samples on the wall clock's multiples of the interval, and
# again after the clock is set (as NTP sets a board without an RTC). The clock
# is set to a whole second 50 ms after a tick is seen, which moves ticks that
# keep their old phase off the 400 ms grid by 350 ms less the time it takes
# to see a tick and to run date (about 150 ms under emulation).
tick_ms() { $B wget -q -O - http://127.0.0.1:8081/api/v1/sensors | $B sed -n 's/.*"time_ms":\([0-9]*\).*/\1/p'; }
next_tick() {   # waits for a tick after the last one seen (up to 5 s); prints its time
        t0=$(tick_ms)
        i=0
        while [ "$(tick_ms)" = "$t0" ] && [ $i -lt 250 ]; do $B usleep 20000; i=$((i + 1)); done
        tick_ms
}
on_grid() {     # three ticks within 60 ms after a multiple of 400 ms
        for n in 1 2 3; do
                t=$(next_tick)
                echo "tick at $t ms, $((t % 400)) ms after the grid"
                [ -n "$t" ] && [ $((t % 400)) -lt 60 ] || return 1
        done
}
cat > /tmp/g.conf <<CONF
[daemon]
listen = 127.0.0.1:8081
state_dir = /tmp/state-grid
interval = 400ms
CONF
$B mkdir -p /tmp/state-grid
/bin/heatcurved -c /tmp/g.conf --sysfs-root $root --procfs-root $root >/tmp/log-grid 2>&1 &
pid=$!
i=0
while [ -z "$(tick_ms)" ] && [ $i -lt 100 ]; do $B usleep 100000; i=$((i + 1)); done
next_tick >/dev/null
check "ticks on the wall clock's 400 ms grid" on_grid
next_tick >/dev/null
$B usleep 50000
$B date -s "@$(($($B date +%s) + 5))" >/dev/null
i=0
while ! $B grep -q "The wall clock was set" /tmp/log-grid && [ $i -lt 50 ]; do $B usleep 100000; i=$((i + 1)); done
check "the clock's step is noticed" $B grep -q "The wall clock was set" /tmp/log-grid
check "ticks on the grid again after the step" on_grid
$B kill $pid
$B usleep 500000
[ $fail -eq 0 ] || $B cat /tmp/log /tmp/log-grid
echo "alert-gpio: $pass passed, $fail failed"
[ $fail -eq 0 ]
