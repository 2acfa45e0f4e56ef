#!/usr/bin/env bash
# Compares peeklock's AMQP 1.0 listener with RabbitMQ 3.10 and its
# rabbitmq_amqp1_0 plugin on this machine, in one run: the same go-amqp
# client (BenchmarkSend and BenchmarkReceive in this directory), the same
# number of 1 KiB messages, the same durability, RUNS runs each, the two
# brokers alternating. Prints the medians, the ranges and the ratios
# peeklock / RabbitMQ against the 3x target, and for each peeklock run the
# listener's CPU time per message divided by the client's (against 0.5).
# The benchmarks' progress goes to standard error.
#
#   bash broker/amqpserver/loadtest/compare.sh              # N=50000, 3 runs
#   N=20000 RUNS=5 bash broker/amqpserver/loadtest/compare.sh
#   LEGS=tls bash broker/amqpserver/loadtest/compare.sh     # the TLS leg only
#   HISTORY=0 bash broker/amqpserver/loadtest/compare.sh    # peeklock without
#                                                           # message histories
#                                                           # (serve --history=false)
#
# Two legs (LEGS, default "rabbitmq tls"):
#   rabbitmq  peeklock against RabbitMQ, in memory and durable (below);
#   tls       peeklock alone, in memory, through the transports of
#             PEEKLOCK_LOADTEST_TRANSPORT: direct (the listener's own socket),
#             front (plain AMQP through package front, as serve's ports take
#             it) and tls (AMQP over TLS through the front, with a local CA);
#             the ratio of each to direct, against the 0.7 target of TLS.
#
# The client is one application's: one connection with one sender link
# keeping INFLIGHT (256) sends in flight, each waiting for its outcome, and
# one receiver link with CREDIT (256) that accepts each message, as an
# outside test of peeklock measured it. CONNECTIONS, SENDERS, RECEIVERS and
# ACCEPTORS change that (the benchmarks' own defaults spread the work over
# four connections).
#
# Durable means, for RabbitMQ, a durable queue and persistent messages (the
# plugin maps a durable terminus to a durable queue and header durable=true
# to delivery mode 2), with publisher confirms before each outcome; for
# peeklock, a Pebble store that syncs each batch before the outcome.
# peeklock runs in a child process of the test binary, as its own broker.
#
# Loopback only. Needs root for .ci/rabbitmq.sh, which installs and starts
# RabbitMQ if needed (PEEKLOCK_RABBITMQ_PORT chooses its port) and leaves it
# running. Every benchmark run is bounded by the test binary's timeout, each
# phase by a minute plus a millisecond per message.
set -euo pipefail
cd "$(dirname "$0")/../../.."
n=${N:-50000}
runs=${RUNS:-3}
client=(PEEKLOCK_LOADTEST_CONNECTIONS="${CONNECTIONS:-1}" PEEKLOCK_LOADTEST_SENDERS="${SENDERS:-1}"
	PEEKLOCK_LOADTEST_INFLIGHT="${INFLIGHT:-256}" PEEKLOCK_LOADTEST_RECEIVERS="${RECEIVERS:-1}"
	PEEKLOCK_LOADTEST_CREDIT="${CREDIT:-256}" PEEKLOCK_LOADTEST_ACCEPTORS="${ACCEPTORS:-2}")
timeout=${TIMEOUT:-20m}
target=3

legs=${LEGS:-rabbitmq tls}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/loadtest.test" ./broker/amqpserver/loadtest/

# The benchmark's queues in RabbitMQ. They are deleted before and after the
# run when rabbitmqctl can reach the node of .ci/rabbitmq.sh: a client that
# was killed mid-run can leave consumers behind that would take messages.
queues=(peeklock-loadtest-memory peeklock-loadtest-durable)
url=
delete_queues() {
	local q ctl=/usr/lib/rabbitmq/bin/rabbitmqctl
	[[ -x $ctl && $(id -u) == 0 ]] || return 0
	for q in "${queues[@]}"; do
		su rabbitmq -s /bin/sh -c "cd /var/lib/rabbitmq && HOME=/var/lib/rabbitmq \
			$ctl -q -n peeklock@localhost --timeout 20 delete_queue $q" \
			</dev/null >/dev/null 2>&1 || true
	done
}

# bench PEER DURABLE [TRANSPORT] prints "send MSG/S CPU" and "receive MSG/S
# CPU" of one run, CPU being the listener's CPU time per message divided by
# the client's (0 when the broker is not peeklock's child process).
bench() {
	local peer=$1 durable=$2 transport=${3:-direct}
	local -a env=(PEEKLOCK_LOADTEST_N="$n" PEEKLOCK_LOADTEST_DURABLE="$durable" PEEKLOCK_LOADTEST_TRANSPORT="$transport"
		PEEKLOCK_LOADTEST_HISTORY="${HISTORY:-1}" "${client[@]}")
	if [[ $peer == rabbitmq ]]; then
		local q=${queues[0]}
		[[ $durable == 1 ]] && q=${queues[1]}
		env+=(PEEKLOCK_LOADTEST_URL="$url" PEEKLOCK_LOADTEST_ADDRESS="/queue/$q")
	else
		env+=(PEEKLOCK_LOADTEST_URL= PEEKLOCK_LOADTEST_ADDRESS=)
	fi
	echo "== $peer, durable=$durable, transport=$transport" >&2
	(cd "$work" && env "${env[@]}" ./loadtest.test -test.run '^$' \
		-test.bench '^Benchmark(Send|Receive)$' -test.benchtime 1x -test.count 1 \
		-test.timeout "$timeout") |
		awk '{ print | "cat 1>&2" }
			/^Benchmark(Send|Receive)/ {
				srv = 0; cli = 0
				for (i = 3; i <= NF; i++) {
					if ($i == "msg/s") rate = $(i - 1)
					if ($i == "server-cpu-us/msg") srv = $(i - 1)
					if ($i == "client-cpu-us/msg") cli = $(i - 1)
				}
				printf "%s %s %.2f\n", ($1 ~ /^BenchmarkSend/ ? "send" : "receive"), rate, (cli > 0 ? srv / cli : 0)
			}'
}

# stats prints the median, the minimum and the maximum of its input lines.
stats() {
	sort -n | awk '{a[NR] = $1} END {
		if (NR == 0) { print "0 0 0"; exit }
		m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		print m, a[1], a[NR]
	}'
}

# median PHASE RESULTS prints the median of one phase's rates.
median() { grep "^$1 " <<<"$2" | cut -d' ' -f2 | stats | cut -d' ' -f1; }

if [[ " $legs " == *" rabbitmq "* ]]; then
url=$(bash .ci/rabbitmq.sh | tail -n1)
delete_queues
table=$(mktemp -p "$work")
for durable in 0 1; do
	r= p=
	for ((i = 1; i <= runs; i++)); do # alternating, so both see the same machine
		r+=$(bench rabbitmq "$durable")$'\n'
		p+=$(bench peeklock "$durable")$'\n'
	done
	for phase in send receive; do
		for peer in r p; do
			count=$(grep -c "^$phase " <<<"${!peer}" || true)
			if [[ $count != "$runs" ]]; then
				echo "compare: $count of $runs $phase results for $peer, durable=$durable" >&2
				exit 1
			fi
		done
		read -r rm rlo rhi < <(grep "^$phase " <<<"$r" | cut -d' ' -f2 | stats)
		read -r pm plo phi < <(grep "^$phase " <<<"$p" | cut -d' ' -f2 | stats)
		cpu=$(grep "^$phase " <<<"$p" | cut -d' ' -f3 | paste -sd' ')
		echo "$durable $phase $rm $rlo $rhi $pm $plo $phi $cpu" >>"$table"
	done
done
delete_queues

printf '\n%-8s %-8s %22s %22s %7s  %-10s %s\n' durable phase "RabbitMQ msg/s" "peeklock msg/s" ratio "target ${target}x" \
	"listener/client CPU per message, each run (target 0.5)"
while read -r durable phase rm rlo rhi pm plo phi cpu; do
	ratio=$(awk "BEGIN {printf \"%.2f\", $pm / $rm}")
	verdict=$(awk "BEGIN {print ($ratio >= $target) ? \"met\" : \"MISSED\"}")
	printf '%-8s %-8s %8.0f (%5.0f-%5.0f) %8.0f (%5.0f-%5.0f) %6sx  %-10s %s\n' \
		"$([[ $durable == 1 ]] && echo yes || echo no)" "$phase" "$rm" "$rlo" "$rhi" "$pm" "$plo" "$phi" "$ratio" "$verdict" "$cpu"
done <"$table"
fi

if [[ " $legs " == *" tls "* ]]; then
	declare -A res=()
	for transport in direct front tls; do
		res[$transport]=$(bench peeklock 0 "$transport")
	done
	printf '\n%-10s %14s %14s %12s %12s  %s\n' transport "send msg/s" "receive msg/s" "send ratio" "recv ratio" "(to direct; TLS target 0.7)"
	ds=$(median send "${res[direct]}")
	dr=$(median receive "${res[direct]}")
	for transport in direct front tls; do
		ps=$(median send "${res[$transport]}")
		pr=$(median receive "${res[$transport]}")
		rs=$(awk "BEGIN {printf \"%.2f\", $ps / $ds}")
		rr=$(awk "BEGIN {printf \"%.2f\", $pr / $dr}")
		verdict=""
		[[ $transport == tls ]] && verdict=$(awk "BEGIN {print ($rs >= 0.7 && $rr >= 0.7) ? \"met\" : \"MISSED\"}")
		printf '%-10s %14.0f %14.0f %11sx %11sx  %s\n' "$transport" "$ps" "$pr" "$rs" "$rr" "$verdict"
	done
fi
echo "N=$n messages of 1 KiB per phase; median (min-max) of $runs runs; $(nproc) cores; $(go env GOVERSION); client: ${client[*]}"
