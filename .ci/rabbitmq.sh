#!/usr/bin/env bash
# Installs RabbitMQ 3.10 (Debian's rabbitmq-server) with the AMQP 1.0 plugin
# and starts one node on 127.0.0.1, for the generic-AMQP tests of
# broker/remote. Idempotent, needs root and no standard input. The last line
# printed is the URL for the tests:
#
#	export PEEKLOCK_RABBITMQ_URL=$(bash .ci/rabbitmq.sh | tail -n1)
#
# PEEKLOCK_RABBITMQ_PORT chooses the AMQP port (default 5673, so that it never
# collides with peeklock serve's 5672).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
port=${PEEKLOCK_RABBITMQ_PORT:-5673}
dist_port=$((port + 20000))
node=peeklock@localhost
base=/var/lib/rabbitmq/peeklock

if ! command -v rabbitmq-server >/dev/null 2>&1; then
	apt-get update -qq >&2
	# The package's own service start fails without systemd; that is fine.
	apt-get install -y -qq --no-install-recommends rabbitmq-server >&2 </dev/null
fi

mkdir -p "$base/mnesia" "$base/log"
echo '[rabbitmq_amqp1_0].' >"$base/enabled_plugins"
cat >"$base/rabbitmq.conf" <<CONF
listeners.tcp.default = 127.0.0.1:$port
loopback_users.guest = true
CONF
chown -R rabbitmq:rabbitmq "$base"

run_as_rabbitmq() {
	# The node runs as the rabbitmq user, whose home holds the Erlang cookie.
	su rabbitmq -s /bin/sh -c "cd /var/lib/rabbitmq && HOME=/var/lib/rabbitmq \
		RABBITMQ_NODENAME=$node RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT=$port \
		RABBITMQ_DIST_PORT=$dist_port RABBITMQ_MNESIA_BASE=$base/mnesia RABBITMQ_LOG_BASE=$base/log \
		RABBITMQ_ENABLED_PLUGINS_FILE=$base/enabled_plugins RABBITMQ_CONFIG_FILE=$base/rabbitmq \
		$*" </dev/null
}

if ! run_as_rabbitmq /usr/lib/rabbitmq/bin/rabbitmqctl -q -n "$node" status >/dev/null 2>&1; then
	run_as_rabbitmq /usr/lib/rabbitmq/bin/rabbitmq-server -detached >&2
fi
# Wait (bounded) until the node has booted and its AMQP listener is up: the
# node registers with epmd a moment after -detached returns, so retry.
for _ in $(seq 1 60); do
	if run_as_rabbitmq /usr/lib/rabbitmq/bin/rabbitmqctl -q -n "$node" --timeout 10 await_startup >/dev/null 2>&1; then
		break
	fi
	sleep 1
done
for _ in $(seq 1 60); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "amqp://guest:guest@127.0.0.1:$port"
		exit 0
	fi
	sleep 1
done
echo "rabbitmq: nothing listens on 127.0.0.1:$port; see $base/log" >&2
exit 1
