// Scenario "no message id": messages sent without a messageId (one alone,
// two in a batch) are received in peek-lock with the GUID the broker gave
// each, and can then be completed, abandoned and dead-lettered: the SDK
// tracks its lock renewal by messageId and cannot settle a message that has
// none. Each settlement reports "ok" or its error, so that one failure does
// not hide the others.
// Usage: PEEKLOCK_CONNECTION_STRING=... node nomessageid.mjs QUEUE
import { run, view } from "./lib.mjs";

const queue = process.argv[2] ?? "q";
const wait = { maxWaitTimeInMs: 3000 };
const guid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** view(m) with a GUID messageId shown as "GUID", since its value is random. */
function viewID(m) {
  const v = view(m);
  if (typeof v.messageId === "string" && guid.test(v.messageId)) v.messageId = "GUID";
  return v;
}

/** "ok", or the message of the error the settlement threw. */
async function outcome(settle) {
  try {
    await settle();
    return "ok";
  } catch (err) {
    return String(err?.message ?? err);
  }
}

await run(async (client) => {
  const out = {};
  const sender = client.createSender(queue);
  const receiver = client.createReceiver(queue);

  await sender.sendMessages({ body: "alone" });
  const batch = await sender.createMessageBatch();
  for (const body of ["batched 1", "batched 2"]) {
    if (!batch.tryAddMessage({ body })) throw new Error("tryAddMessage refused " + body);
  }
  await sender.sendMessages(batch);

  const got = await receiver.receiveMessages(3, wait);
  out.received = got.map(viewID);
  out.distinctIds = new Set(got.map((m) => m.messageId)).size;
  const [a, b, c] = got;

  out.complete = await outcome(() => receiver.completeMessage(a));
  out.abandon = await outcome(() => receiver.abandonMessage(b));
  out.deadLetter = await outcome(() => receiver.deadLetterMessage(c, { deadLetterReason: "no id", deadLetterErrorDescription: "dead-lettered without a messageId of its own" }));

  // The abandoned one comes back with the same id, its abandon counted.
  const again = await receiver.receiveMessages(1, wait);
  out.again = again.map(viewID);
  out.againSameId = again.length === 1 && again[0].messageId === b.messageId;
  if (again.length === 1) out.againComplete = await outcome(() => receiver.completeMessage(again[0]));

  // The dead-lettered one keeps its id in the dead-letter sub-queue.
  const dlq = client.createReceiver(queue, { subQueueType: "deadLetter" });
  const dead = await dlq.receiveMessages(1, wait);
  out.deadLettered = dead.map(viewID);
  out.deadLetteredSameId = dead.length === 1 && dead[0].messageId === c.messageId;
  if (dead.length === 1) out.deadLetteredComplete = await outcome(() => dlq.completeMessage(dead[0]));

  // Closing a receiver stops the lock renewal of what it received: by
  // messageId too.
  out.close = await outcome(async () => {
    await dlq.close();
    await receiver.close();
    await sender.close();
  });
  return out;
});
