// Scenario group "queue": send (single and batch), peek-lock receive and
// complete, abandon, defer and receive by sequence number, dead-letter and
// receive from the dead-letter sub-queue, renew lock, receive-and-delete,
// schedule and cancel, peek with paging.
// Usage: PEEKLOCK_CONNECTION_STRING=... node queue.mjs QUEUE
import Long from "long";
import { run, view, sleep } from "./lib.mjs";

const queue = process.argv[2] ?? "q";
const wait = { maxWaitTimeInMs: 3000 };

await run(async (client) => {
  const out = {};
  const sender = client.createSender(queue);
  const receiver = client.createReceiver(queue);

  // Send one, then a batch of three.
  await sender.sendMessages({ body: "single", messageId: "m1" });
  const batch = await sender.createMessageBatch();
  out.batchMaxSize = batch.maxSizeInBytes > 0;
  for (const id of ["m2", "m3", "m4"]) {
    if (!batch.tryAddMessage({ body: { id }, messageId: id })) throw new Error("tryAddMessage refused " + id);
  }
  out.batchCount = batch.count;
  await sender.sendMessages(batch);

  // Peek-lock: all four, in order.
  const got = await receiver.receiveMessages(4, wait);
  out.received = got.map(view);
  out.lockTokens = got.map((m) => typeof m.lockToken === "string" && m.lockToken.length === 36);
  const [m1, m2, m3, m4] = got;

  // Renew the lock of m1: the new lockedUntil is later than before.
  const before = m1.lockedUntilUtc.getTime();
  await sleep(50);
  const renewed = await receiver.renewMessageLock(m1);
  out.renewLater = renewed.getTime() > before && m1.lockedUntilUtc.getTime() === renewed.getTime();
  await receiver.completeMessage(m1);

  // Abandon m2: it comes back with the delivery count one up.
  await receiver.abandonMessage(m2, { reason: "abandoned" });
  const [again] = await receiver.receiveMessages(1, wait);
  out.abandoned = view(again);
  out.abandonedProps = again.applicationProperties ?? null;
  await receiver.completeMessage(again);

  // Defer m3, then receive it by sequence number and complete it.
  await receiver.deferMessage(m3);
  const deferred = await receiver.receiveDeferredMessages([m3.sequenceNumber]);
  out.deferred = deferred.map(view);
  await receiver.completeMessage(deferred[0]);

  // Dead-letter m4 and receive it from the dead-letter sub-queue.
  await receiver.deadLetterMessage(m4, { deadLetterReason: "bad", deadLetterErrorDescription: "it is bad" });
  const dlq = client.createReceiver(queue, { subQueueType: "deadLetter" });
  const dead = await dlq.receiveMessages(1, wait);
  out.deadLettered = dead.map(view);
  await dlq.completeMessage(dead[0]);
  await dlq.close();

  // Completing twice fails: the lock is gone.
  try {
    await receiver.completeMessage(m1);
    out.secondComplete = "ok";
  } catch (err) {
    out.secondComplete = err.message;
  }

  // Receive-and-delete.
  await sender.sendMessages([{ body: "rd1", messageId: "rd1" }, { body: "rd2", messageId: "rd2" }]);
  const rad = client.createReceiver(queue, { receiveMode: "receiveAndDelete" });
  const taken = await rad.receiveMessages(2, wait);
  out.receiveAndDelete = taken.map(view);
  out.receiveAndDeleteLockToken = taken.map((m) => m.lockToken ?? null);
  await rad.close();

  // Schedule two an hour ahead, peek them, cancel one, peek again, cancel the other.
  const at = new Date(Date.now() + 3600 * 1000);
  const seqs = await sender.scheduleMessages([{ body: "s1", messageId: "s1" }, { body: "s2", messageId: "s2" }], at);
  out.scheduled = seqs.map((s) => s.toNumber());
  const peeked = await receiver.peekMessages(10, { fromSequenceNumber: seqs[0] });
  out.scheduledPeek = peeked.map((m) => ({ ...view(m), scheduledAt: m.scheduledEnqueueTimeUtc?.getTime() === at.getTime() }));
  await sender.cancelScheduledMessages(seqs[0]);
  out.afterCancel = (await receiver.peekMessages(10, { fromSequenceNumber: Long.fromNumber(1) })).map((m) => m.messageId);
  await sender.cancelScheduledMessages([seqs[1]]);

  // Peek with paging: five messages, pages of two.
  await sender.sendMessages(["p1", "p2", "p3", "p4", "p5"].map((id) => ({ body: id, messageId: id })));
  const first = await receiver.peekMessages(2, { fromSequenceNumber: Long.fromNumber(1) });
  const second = await receiver.peekMessages(2);
  const third = await receiver.peekMessages(2);
  const fourth = await receiver.peekMessages(2);
  const from = await receiver.peekMessages(2, { fromSequenceNumber: first[1].sequenceNumber.add(2) });
  out.pages = [first, second, third, fourth, from].map((p) => p.map((m) => `${m.messageId}@${m.sequenceNumber.toNumber()}:${m.deliveryCount ?? "none"}`));
  await receiver.close();
  await sender.close();
  return out;
});
