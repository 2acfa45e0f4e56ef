// Scenario group "admin": the SDK's ServiceBusAdministrationClient against
// the admin HTTP API, unchanged. The client always builds
// https://HOST[:PORT]/ URLs from the connection string, so it reaches the
// admin API on the listener's AMQP port over TLS (trusted through
// NODE_EXTRA_CA_CERTS).
// Usage: PEEKLOCK_CONNECTION_STRING=... PEEKLOCK_ADMIN_CONNECTION_STRING=... node admin.mjs
import { ServiceBusAdministrationClient } from "@azure/service-bus";
import { run, errorOf } from "./lib.mjs";

await run(async (client) => {
  const conn = process.env.PEEKLOCK_ADMIN_CONNECTION_STRING;
  if (!conn) throw new Error("PEEKLOCK_ADMIN_CONNECTION_STRING is not set");
  const admin = new ServiceBusAdministrationClient(conn, { retryOptions: { maxRetries: 0 } });
  const out = {};
  const created = await admin.createQueue("aq", { lockDuration: "PT45S", maxDeliveryCount: 3, requiresSession: false });
  out.created = { name: created.name, lockDuration: created.lockDuration, maxDeliveryCount: created.maxDeliveryCount };
  out.exists = [await admin.queueExists("aq"), await admin.queueExists("nope")];
  const sender = client.createSender("aq");
  await sender.sendMessages([{ body: "a" }, { body: "b" }]);
  await sender.scheduleMessages({ body: "later" }, new Date(Date.now() + 3600 * 1000));
  await sender.close();
  const rt = await admin.getQueueRuntimeProperties("aq");
  out.runtime = { active: rt.activeMessageCount, scheduled: rt.scheduledMessageCount, deadLetter: rt.deadLetterMessageCount, total: rt.totalMessageCount };
  const names = [];
  for await (const q of admin.listQueues()) names.push(q.name);
  out.queues = names.sort();
  await admin.createTopic("at");
  await admin.createSubscription("at", "s1");
  const subs = [];
  for await (const s of admin.listSubscriptions("at")) subs.push(s.subscriptionName);
  out.subscriptions = subs;
  const q = await admin.getQueue("aq");
  q.maxDeliveryCount = 7;
  out.updated = (await admin.updateQueue(q)).maxDeliveryCount;
  await admin.deleteQueue("aq");
  try {
    await admin.getQueue("aq");
    out.afterDelete = "ok";
  } catch (err) {
    out.afterDelete = { code: errorOf(err).code, statusCode: err.statusCode ?? null };
  }
  return out;
});
