"""Peek-lock settlement through Apache Qpid Proton's Python client.

Driven by proton_test.go (TestProtonPeekLockSettlement): a third AMQP 1.0
stack, next to go-amqp and rhea, against the listener. Usage:

    settle.py HOST:PORT KEY-NAME KEY QUEUE

It sends four messages without a message-id over a SASL ANONYMOUS
connection that authorises with a SAS token put on $cbs, then receives them
in peek-lock (rcv-settle-mode second, one credit at a time) over a SASL
PLAIN connection (key name and key as user and password) and settles them
with accepted, released, rejected and modified, waiting each time for the
broker's settled answer. It prints one JSON line of what it saw; the Go test
judges it. A failure prints {"error": ..., "stack": ...}.
"""

import base64
import hashlib
import hmac
import json
import sys
import time
import traceback
import urllib.parse
import uuid

from proton import Condition, Delivery, Link, Message, Timeout
from proton.reactor import ReceiverOption
from proton.utils import BlockingConnection

TIMEOUT = 15  # seconds for any one step

STATES = {
    Delivery.ACCEPTED: "accepted",
    Delivery.REJECTED: "rejected",
    Delivery.RELEASED: "released",
    Delivery.MODIFIED: "modified",
    Delivery.RECEIVED: "received",
}


class PeekLock(ReceiverOption):
    """Asks for rcv-settle-mode second: the broker settles after us."""

    def apply(self, receiver):
        receiver.rcv_settle_mode = Link.RCV_SECOND
        receiver.snd_settle_mode = Link.SND_UNSETTLED


class ReplyTo(ReceiverOption):
    """Sets the receiver's target address: where $cbs answers."""

    def __init__(self, address):
        self.address = address

    def apply(self, receiver):
        receiver.target.address = self.address


def sas_token(audience, key_name, key, ttl=3600):
    sr = urllib.parse.quote_plus(audience)
    se = str(int(time.time()) + ttl)
    sig = base64.b64encode(hmac.new(key.encode(), (sr + "\n" + se).encode(), hashlib.sha256).digest()).decode()
    token = "SharedAccessSignature sr=%s&sig=%s&se=%s&skn=%s" % (
        sr, urllib.parse.quote_plus(sig), se, urllib.parse.quote_plus(key_name))
    return token, se


def put_token(conn, audience, key_name, key):
    """Puts a SAS token for audience on $cbs and returns the status code."""
    reply = "cbs-reply-" + str(uuid.uuid4())
    snd = conn.create_sender("$cbs")
    rcv = conn.create_receiver("$cbs", credit=1, options=ReplyTo(reply))
    token, se = sas_token(audience, key_name, key)
    req = Message(id=str(uuid.uuid4()), reply_to=reply, body=token, properties={
        "operation": "put-token",
        "type": "servicebus.windows.net:sastoken",
        "name": audience,
        "expiration": se,
    })
    snd.send(req, timeout=TIMEOUT)
    resp = rcv.receive(timeout=TIMEOUT)
    rcv.accept()
    snd.close()
    rcv.close()
    return {"status": resp.properties.get("status-code"), "correlated": resp.correlation_id == req.id}


def settle(conn, rcv, state, failed=None, undeliverable=None, condition=None):
    """Sets the outcome of the delivery taken last, waits for the broker to
    settle it (rcv-settle-mode second), then settles it too. Returns the
    broker's state, with its error condition when it has one."""
    d = rcv.fetcher.unsettled.popleft()
    if failed is not None:
        d.local.failed = failed
    if undeliverable is not None:
        d.local.undeliverable = undeliverable
    if condition is not None:
        d.local.condition = condition
    d.update(state)
    conn.wait(lambda: d.settled, timeout=TIMEOUT, msg="waiting for the broker to settle")
    out = STATES.get(d.remote_state, str(d.remote_state))
    if d.remote.condition is not None:
        out += " " + str(d.remote.condition.name)
    d.settle()
    return out


def seen(msg):
    """What the test checks of a received message."""
    props = msg.properties or {}
    return {
        "subject": msg.subject,
        "messageId": msg.id,
        "deliveryCount": msg.delivery_count,
        "deadLetterReason": props.get("DeadLetterReason"),
        "deadLetterErrorDescription": props.get("DeadLetterErrorDescription"),
    }


def main():
    addr, key_name, key, queue = sys.argv[1:5]
    host = addr.rsplit(":", 1)[0]
    out = {}

    # Send over ANONYMOUS, authorised by a token on $cbs.
    conn = BlockingConnection("amqp://" + addr, timeout=TIMEOUT, allowed_mechs="ANONYMOUS")
    try:
        out["putToken"] = put_token(conn, "sb://%s/%s" % (host, queue), key_name, key)
        snd = conn.create_sender(queue)
        for i in range(1, 5):
            # No message-id: the broker assigns one.
            body = ("body %d" % i).encode() if i % 2 else "body %d" % i
            snd.send(Message(subject="m%d" % i, body=body, inferred=isinstance(body, bytes)), timeout=TIMEOUT)
        out["sent"] = 4
        snd.close()
    finally:
        conn.close()

    # Receive over PLAIN (key name and key), one credit at a time.
    conn = BlockingConnection("amqp://" + addr, timeout=TIMEOUT, allowed_mechs="PLAIN",
                              allow_insecure_mechs=True, user=key_name, password=key)
    try:
        rcv = conn.create_receiver(queue, credit=0, options=PeekLock())
        steps = []

        def step(outcome, **kw):
            m = seen(rcv.receive(timeout=TIMEOUT))
            m["outcome"] = settle(conn, rcv, outcome, **kw)
            steps.append(m)

        step(Delivery.RELEASED)                 # m1: give it back, no failure
        step(Delivery.MODIFIED, failed=True)    # m1 again: abandon (delivery failed)
        step(Delivery.ACCEPTED)                 # m1 a third time: complete
        step(Delivery.REJECTED, condition=Condition(
            "com.microsoft:dead-letter", "rejected by proton",
            {"DeadLetterReason": "proton", "DeadLetterErrorDescription": "rejected by qpid proton"}))  # m2
        step(Delivery.MODIFIED, undeliverable=True)  # m3: defer
        step(Delivery.MODIFIED, failed=False)   # m4: abandon as the SDKs do
        step(Delivery.ACCEPTED)                 # m4 again: complete
        out["steps"] = steps
        try:
            extra = rcv.receive(timeout=1)
            out["unexpected"] = seen(extra)
        except Timeout:
            out["unexpected"] = None
        rcv.close()

        dlq = conn.create_receiver(queue + "/$DeadLetterQueue", credit=0, options=PeekLock())
        m = seen(dlq.receive(timeout=TIMEOUT))
        m["outcome"] = settle(conn, dlq, Delivery.ACCEPTED)
        out["deadLettered"] = m
        dlq.close()
    finally:
        conn.close()
    print(json.dumps(out))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # report, the Go test fails with it
        print(json.dumps({"error": "%s: %s" % (type(e).__name__, e), "stack": traceback.format_exc()}))
        sys.exit(1)
