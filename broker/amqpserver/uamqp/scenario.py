"""The official Python SDK (azure-servicebus 7.8.2 on Microsoft's C AMQP
stack, uamqp; Debian's python3-azure and python3-uamqp) against the
listener, unchanged: every operation an application uses, each a step that
checks what it got. uamqp_test.go runs it.

    scenario.py PORT CA_PATH

PORT is the listener's front (AMQP over WebSockets inside TLS; HTTPS for the
admin client), CA_PATH the local CA the certificates chain to. The client
reaches the port through custom_endpoint_address, which makes the SDK use
AMQP over WebSockets: plain AMQP over TLS would need the fixed port 5671.
The admin client trusts the CA through REQUESTS_CA_BUNDLE, set by the
caller.

UAMQP_DEBUG=1 logs uamqp's frames to standard error.

The entities are the caller's: queue "q", session queue "sq", topic "t"
with subscription "s" (its $Default rule in place). The script prints one
JSON line: {"steps": [{"name": ..., "ok": true} or {..., "error": ...}]}.
A step that fails does not stop the others.
"""

import datetime
import json
import logging
import os
import signal
import sys
import time
import traceback

from azure.servicebus import (
    ServiceBusClient,
    ServiceBusMessage,
    ServiceBusReceiveMode,
    ServiceBusSubQueue,
    NEXT_AVAILABLE_SESSION,
)
from azure.servicebus.exceptions import (
    MessageNotFoundError,
    SessionCannotBeLockedError,
)
from azure.servicebus.management import (
    ServiceBusAdministrationClient,
    SqlRuleFilter,
    CorrelationRuleFilter,
)

PORT, CA = sys.argv[1], sys.argv[2]
# UAMQP_DEBUG=1 logs uamqp's frames to standard error.
DEBUG = os.environ.get("UAMQP_DEBUG") == "1"
# The namespace as the connection string names it, without a port;
# custom_endpoint_address says where the SDK connects. (With the port in
# the namespace the SDK expects it in the addresses of its links too, which
# uamqp leaves out: a session receiver then never learns its lock's expiry.)
CONN = ("Endpoint=sb://localhost/;SharedAccessKeyName=RootManageSharedAccessKey;"
        "SharedAccessKey=SAS_KEY_VALUE")
# The admin client reaches https://HOST:PORT/ from the endpoint itself.
ADMIN_CONN = CONN.replace("sb://localhost/", "sb://localhost:%s/" % PORT)
# Bounded waits: a receive that finds nothing returns after WAIT seconds;
# an operation the listener never answers fails after the SDK's timeout.
WAIT = 10
DEADLINE = 240  # the whole script; the Go test waits somewhat longer

steps = []


def done():
    print(json.dumps({"steps": steps}, default=str), flush=True)


def on_deadline(signum, frame):
    steps.append({"name": "deadline", "error": "the scenario took more than %d s" % DEADLINE,
                  "stack": "".join(traceback.format_stack(frame))})
    done()
    sys.exit(1)


def client():
    return ServiceBusClient.from_connection_string(
        CONN,
        custom_endpoint_address="sb://localhost:%s" % PORT,
        connection_verify=CA,
        retry_total=1,
        retry_backoff_factor=0.2,
        logging_enable=DEBUG,
    )


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def prop(msg, key):
    """An application property; uamqp hands keys (and string values) back
    as bytes."""
    props = msg.application_properties or {}
    v = props.get(key.encode(), props.get(key))
    return v.decode() if isinstance(v, bytes) else v


def body(msg):
    return b"".join(msg.body).decode()


def receive(receiver, n, wait=WAIT):
    """Receives until n messages arrived or wait seconds passed."""
    got, end = [], time.monotonic() + wait
    while len(got) < n and time.monotonic() < end:
        got += receiver.receive_messages(max_message_count=n - len(got),
                                         max_wait_time=max(1, end - time.monotonic()))
    return got


def eventually(fn, want, what):
    """Polls fn until it returns want, for settlements that the SDK sends
    without waiting for an answer (a disposition); fails after WAIT
    seconds with what and the last value."""
    end = time.monotonic() + WAIT
    while True:
        got = fn()
        if got == want:
            return
        if time.monotonic() > end:
            raise AssertionError("%s: %r, want %r" % (what, got, want))
        time.sleep(0.05)


def peeked(receiver):
    """Bodies and states of what a receiver peeks."""
    return [(body(m), m.state.name) for m in receiver.peek_messages(max_message_count=10)]


def run(name, fn, sb):
    start = time.monotonic()
    try:
        fn(sb)
        steps.append({"name": name, "ok": True, "seconds": round(time.monotonic() - start, 2)})
    except Exception as e:  # every failure is reported, the next step runs
        steps.append({"name": name, "error": "%s: %s" % (type(e).__name__, e),
                      "stack": traceback.format_exc()})


def send_and_receive(sb):
    """Send one message and a batch; receive them in peek-lock with their
    properties, and complete them."""
    with sb.get_queue_sender("q") as s:
        s.send_messages(ServiceBusMessage(
            "first", message_id="m-1", subject="greeting", content_type="text/plain",
            correlation_id="c-1", application_properties={"n": 1, "who": "python"},
            time_to_live=datetime.timedelta(minutes=10)))
        batch = s.create_message_batch()
        for i in range(2, 5):
            batch.add_message(ServiceBusMessage("m%d" % i, message_id="m-%d" % i))
        s.send_messages(batch)
    with sb.get_queue_receiver("q") as r:
        got = receive(r, 4)
        check([m.message_id for m in got] == ["m-1", "m-2", "m-3", "m-4"],
              "received %s" % [m.message_id for m in got])
        m = got[0]
        check(body(m) == "first", "body %r" % body(m))
        check(m.subject == "greeting" and m.content_type == "text/plain" and m.correlation_id == "c-1",
              "subject %r content type %r correlation id %r" % (m.subject, m.content_type, m.correlation_id))
        check(prop(m, "n") == 1 and prop(m, "who") == "python", "properties %r" % m.application_properties)
        check(m.time_to_live == datetime.timedelta(minutes=10), "time to live %r" % m.time_to_live)
        check(m.delivery_count == 0, "delivery count %r" % m.delivery_count)
        check(m.sequence_number == 1 and m.enqueued_time_utc is not None, "sequence number %r" % m.sequence_number)
        check(m.locked_until_utc is not None and m.locked_until_utc > datetime.datetime.now(datetime.timezone.utc),
              "locked until %r" % m.locked_until_utc)
        for m in got:
            r.complete_message(m)
        eventually(lambda: peeked(r), [], "peeked after completing")


def receive_and_delete(sb):
    with sb.get_queue_sender("q") as s:
        s.send_messages([ServiceBusMessage("rd%d" % i) for i in range(3)])
    with sb.get_queue_receiver("q", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
        got = receive(r, 3)
        check(sorted(body(m) for m in got) == ["rd0", "rd1", "rd2"], "received %s" % [body(m) for m in got])
        check(r.peek_messages(max_message_count=10) == [], "messages left after receive-and-delete")


def peek(sb):
    with sb.get_queue_sender("q") as s:
        s.send_messages([ServiceBusMessage("p%d" % i) for i in range(3)])
    with sb.get_queue_receiver("q") as r:
        first = r.peek_messages(max_message_count=2)
        check([body(m) for m in first] == ["p0", "p1"], "peeked %s" % [body(m) for m in first])
        rest = r.peek_messages(max_message_count=10, sequence_number=first[1].sequence_number + 1)
        check([body(m) for m in rest] == ["p2"], "peeked from a sequence number %s" % [body(m) for m in rest])
        again = r.peek_messages(max_message_count=10)
        check(len(again) == 3 and again[0].delivery_count == 0, "peek again: %s" % [body(m) for m in again])
        got = receive(r, 3)
        for m in got:
            r.complete_message(m)
        check(len(got) == 3, "peeked messages received %d" % len(got))


def settle(sb):
    """Abandon (counts a delivery), dead-letter with reason and
    description, defer then receive deferred, complete; the dead-letter
    queue has the dead-lettered message."""
    with sb.get_queue_sender("q") as s:
        s.send_messages([ServiceBusMessage(b) for b in ("abandon", "dead", "defer")])
    with sb.get_queue_receiver("q") as r:
        got = {body(m): m for m in receive(r, 3)}
        check(sorted(got) == ["abandon", "dead", "defer"], "received %s" % sorted(got))
        r.abandon_message(got["abandon"])
        r.dead_letter_message(got["dead"], reason="python", error_description="dead-lettered by uamqp")
        deferred_seq = got["defer"].sequence_number
        r.defer_message(got["defer"])
        again = receive(r, 1)
        check([body(m) for m in again] == ["abandon"] and again[0].delivery_count == 1,
              "after abandon: %s" % [(body(m), m.delivery_count) for m in again])
        r.complete_message(again[0])
        eventually(lambda: peeked(r), [("defer", "DEFERRED")], "peeked after settling")
        deferred = r.receive_deferred_messages([deferred_seq])
        check([body(m) for m in deferred] == ["defer"], "deferred %s" % [body(m) for m in deferred])
        r.complete_message(deferred[0])  # through $management: it came from there
        check(peeked(r) == [], "messages left after settling")
    with sb.get_queue_receiver("q", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
        dead = receive(dlq, 1)
        check([body(m) for m in dead] == ["dead"], "dead-letter queue %s" % [body(m) for m in dead])
        d = dead[0]
        check(d.dead_letter_reason == "python" and d.dead_letter_error_description == "dead-lettered by uamqp",
              "reason %r description %r" % (d.dead_letter_reason, d.dead_letter_error_description))
        dlq.complete_message(d)


def renew_lock(sb):
    with sb.get_queue_sender("q") as s:
        s.send_messages(ServiceBusMessage("renew"))
    with sb.get_queue_receiver("q") as r:
        m = receive(r, 1)[0]
        before = m.locked_until_utc
        time.sleep(0.05)  # the renewed lock must end later than the first
        after = r.renew_message_lock(m)
        check(after > before and m.locked_until_utc == after,
              "renewed lock %r, first %r, message says %r" % (after, before, m.locked_until_utc))
        r.complete_message(m)


def schedule_and_cancel(sb):
    in_a_while = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    with sb.get_queue_sender("q") as s:
        seqs = s.schedule_messages([ServiceBusMessage("later1"), ServiceBusMessage("later2")], in_a_while)
        check(len(seqs) == 2 and all(isinstance(n, int) and n > 0 for n in seqs), "sequence numbers %r" % seqs)
        with sb.get_queue_receiver("q") as r:
            scheduled = r.peek_messages(max_message_count=10)
            check([(body(m), m.state.name) for m in scheduled] == [("later1", "SCHEDULED"), ("later2", "SCHEDULED")],
                  "peeked scheduled %s" % [(body(m), m.state) for m in scheduled])
            check(abs((scheduled[0].scheduled_enqueue_time_utc - in_a_while).total_seconds()) < 1,
                  "scheduled enqueue time %r, want %r" % (scheduled[0].scheduled_enqueue_time_utc, in_a_while))
            s.cancel_scheduled_messages(seqs[0])
            s.cancel_scheduled_messages(seqs[1:])
            check(peeked(r) == [], "scheduled messages left after cancelling")
        # A message scheduled for now arrives.
        s.schedule_messages(ServiceBusMessage("now"), datetime.datetime.now(datetime.timezone.utc))
    with sb.get_queue_receiver("q") as r:
        got = receive(r, 1)
        check([body(m) for m in got] == ["now"], "received the message scheduled for now: %s" % [body(m) for m in got])
        r.complete_message(got[0])


def sessions(sb):
    with sb.get_queue_sender("sq") as s:
        s.send_messages([ServiceBusMessage("a%d" % i, session_id="A") for i in range(2)]
                        + [ServiceBusMessage("b0", session_id="B")])
    with sb.get_queue_receiver("sq", session_id="A") as r:
        sess = r.session
        check(sess.session_id == "A", "session id %r" % sess.session_id)
        check(sess.get_state() in (None, b""), "fresh session state %r" % sess.get_state())
        sess.set_state("state of A")
        check(sess.get_state() == b"state of A", "session state %r" % sess.get_state())
        before = sess.locked_until_utc
        time.sleep(0.05)
        after = sess.renew_lock()
        check(after > before and sess.locked_until_utc == after,
              "renewed session lock %r, first %r" % (after, before))
        got = receive(r, 2)
        check([(body(m), m.session_id) for m in got] == [("a0", "A"), ("a1", "A")],
              "session A: %s" % [(body(m), m.session_id) for m in got])
        for m in got:
            r.complete_message(m)
        sess.set_state(None)
        check(sess.get_state() in (None, b""), "cleared session state %r" % sess.get_state())
    with sb.get_queue_receiver("sq", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=WAIT) as r:
        check(r.session.session_id == "B", "next available session %r" % r.session.session_id)
        got = receive(r, 1)
        check([body(m) for m in got] == ["b0"], "session B: %s" % [body(m) for m in got])
        r.defer_message(got[0])
        eventually(lambda: peeked(r), [("b0", "DEFERRED")], "peeked in session B after defer")
        deferred = r.receive_deferred_messages([got[0].sequence_number])
        check([body(m) for m in deferred] == ["b0"], "deferred in session B: %s" % [body(m) for m in deferred])
        r.complete_message(deferred[0])


def errors(sb):
    """Refusals reach the application as the SDK's own exceptions: by the
    error condition of a $management response, and of a refused attach."""
    def raises(exc, fn, what):
        try:
            fn()
        except exc:
            return
        except Exception as e:
            raise AssertionError("%s raised %s: %s, want %s" % (what, type(e).__name__, e, exc.__name__))
        raise AssertionError("%s raised nothing, want %s" % (what, exc.__name__))

    with sb.get_queue_receiver("q") as r:
        raises(MessageNotFoundError, lambda: r.receive_deferred_messages([999999]), "receiving a missing deferred message")
    with sb.get_queue_sender("q") as s:
        raises(MessageNotFoundError, lambda: s.cancel_scheduled_messages(999999), "cancelling a missing scheduled message")
    with sb.get_queue_receiver("sq", session_id="held"):
        other = sb.get_queue_receiver("sq", session_id="held")
        raises(SessionCannotBeLockedError, other.__enter__, "a second receiver of a held session")
        other.close()


def topic_rules(sb):
    """Rules through the admin client (azure-servicebus 7.8.2 has no AMQP
    rule manager): a SQL filter with an action and a correlation filter in
    place of $Default; the topic's messages reach the subscription by them."""
    adm = ServiceBusAdministrationClient.from_connection_string(ADMIN_CONN)
    adm.create_rule("t", "s", "red", filter=SqlRuleFilter("color = 'red'"),
                    action=None)
    adm.create_rule("t", "s", "byid", filter=CorrelationRuleFilter(correlation_id="wanted"))
    adm.delete_rule("t", "s", "$Default")
    names = sorted(r.name for r in adm.list_rules("t", "s"))
    check(names == ["byid", "red"], "rules %s" % names)
    red = adm.get_rule("t", "s", "red")
    check(red.filter.sql_expression == "color = 'red'", "red's filter %r" % red.filter.sql_expression)
    with sb.get_topic_sender("t") as s:
        s.send_messages([
            ServiceBusMessage("red", application_properties={"color": "red"}),
            ServiceBusMessage("blue", application_properties={"color": "blue"}),
            ServiceBusMessage("wanted", correlation_id="wanted"),
        ])
    with sb.get_subscription_receiver("t", "s") as r:
        got = receive(r, 2)
        check(sorted(body(m) for m in got) == ["red", "wanted"], "subscription got %s" % sorted(body(m) for m in got))
        for m in got:
            r.complete_message(m)
        eventually(lambda: peeked(r), [], "peeked in the subscription after completing")
    with sb.get_subscription_receiver("t", "s", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
        check(dlq.peek_messages(max_message_count=10) == [], "the subscription's dead-letter queue is not empty")


def main():
    if DEBUG:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    signal.signal(signal.SIGALRM, on_deadline)
    signal.alarm(DEADLINE)
    with client() as sb:
        for name, fn in [
            ("send and receive", send_and_receive),
            ("receive and delete", receive_and_delete),
            ("peek", peek),
            ("settle", settle),
            ("renew lock", renew_lock),
            ("schedule and cancel", schedule_and_cancel),
            ("sessions", sessions),
            ("errors", errors),
            ("topic and rules", topic_rules),
        ]:
            run(name, fn, sb)
    done()


if __name__ == "__main__":
    main()
