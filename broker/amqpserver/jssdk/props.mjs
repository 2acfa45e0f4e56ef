// Scenario group "props": application properties of every type the SDK
// sends, broker properties, and body kinds (JSON object, string, Buffer,
// AMQP value and sequence), sent and received back under peek-lock.
// Usage: PEEKLOCK_CONNECTION_STRING=... node props.mjs QUEUE
import { run, view, typeOf, plain } from "./lib.mjs";

const queue = process.argv[2] ?? "props";

/** Application properties of each JavaScript type; numbers of each width rhea picks. */
const applicationProperties = {
  str: "text",
  zero: 0,
  small: 42,
  uint: 300000,
  big: 5000000000,
  neg: -7,
  bigneg: -5000000000,
  frac: 1.5,
  yes: true,
  no: false,
  when: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678)),
  nothing: null,
};

await run(async (client) => {
  const sender = client.createSender(queue);
  await sender.sendMessages([
    {
      messageId: "props",
      body: { hello: "world", n: [1, 2] },
      applicationProperties,
      contentType: "application/json",
      correlationId: "corr",
      subject: "subj",
      to: "someone",
      replyTo: "replies",
      replyToSessionId: "rsid",
      timeToLive: 60000,
    },
    { messageId: "string", body: "plain text" },
    { messageId: "buffer", body: Buffer.from([0, 1, 2, 255]) },
  ]);
  // AMQP value and sequence bodies go out as AmqpAnnotatedMessage.
  await sender.sendMessages({ body: { k: [1, "two"] }, bodyType: "value", properties: { messageId: "value" } });
  await sender.sendMessages({ body: [[1, 2], ["x"]], bodyType: "sequence", properties: { messageId: "sequence" } });
  const receiver = client.createReceiver(queue);
  const got = [];
  while (got.length < 5) {
    const batch = await receiver.receiveMessages(5 - got.length, { maxWaitTimeInMs: 3000 });
    if (batch.length === 0) break;
    got.push(...batch);
  }
  const out = { messages: got.map(view) };
  const first = got[0];
  out.properties = Object.fromEntries(
    Object.entries(first.applicationProperties ?? {}).map(([k, v]) => [k, [typeOf(v), plain(v)]]),
  );
  out.broker = {
    contentType: first.contentType,
    correlationId: first.correlationId,
    subject: first.subject,
    to: first.to,
    replyTo: first.replyTo,
    replyToSessionId: first.replyToSessionId,
    timeToLive: first.timeToLive,
    expiresMinusEnqueued: first.expiresAtUtc.getTime() - first.enqueuedTimeUtc.getTime(),
  };
  out.bodyTypes = got.map((m) => m._rawAmqpMessage.bodyType);
  for (const m of got) await receiver.completeMessage(m);
  // One more copy stays in the queue, for the Go side to read as stored.
  await sender.sendMessages({ messageId: "kept", body: "kept", applicationProperties });
  await receiver.close();
  await sender.close();
  return out;
});
