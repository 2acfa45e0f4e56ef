// Scenario group "topics": a topic send arrives in a subscription without
// filter and, when its subject matches, in one with a correlation filter.
// Usage: PEEKLOCK_CONNECTION_STRING=... node topics.mjs TOPIC ALLSUB REDSUB
import { run, view } from "./lib.mjs";

const [topic = "t", all = "all", red = "red"] = process.argv.slice(2);

await run(async (client) => {
  const sender = client.createSender(topic);
  await sender.sendMessages([
    { body: "r1", messageId: "r1", subject: "red" },
    { body: "b1", messageId: "b1", subject: "blue" },
    { body: "r2", messageId: "r2", subject: "red", applicationProperties: { n: 2 } },
  ]);
  const out = {};
  // Receive as many as each subscription should hold (a receive-and-delete
  // or an open-ended receive would wait out maxWaitTimeInMs in this SDK),
  // then peek: nothing may be left.
  for (const [sub, want] of [[all, 3], [red, 2]]) {
    const receiver = client.createReceiver(topic, sub);
    const got = [];
    while (got.length < want) {
      const batch = await receiver.receiveMessages(want - got.length, { maxWaitTimeInMs: 3000 });
      if (batch.length === 0) break;
      got.push(...batch);
    }
    for (const m of got) await receiver.completeMessage(m);
    out[sub] = got.map((m) => `${m.messageId}@${m.sequenceNumber.toNumber()}:${m.subject}`);
    out[sub + "Left"] = (await receiver.peekMessages(10)).map((m) => m.messageId);
    await receiver.close();
  }
  await sender.close();
  return out;
});
