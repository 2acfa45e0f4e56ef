// Scenario group "admin": the SDK's ServiceBusAdministrationClient against
// the admin HTTP API. The client always builds https:// URLs; with the
// emulator connection string alone it cannot reach a plain-HTTP endpoint,
// so a policy added to its pipeline rewrites the scheme (as the Go admin tests' transport
// does).
// Usage: PEEKLOCK_CONNECTION_STRING=... PEEKLOCK_ADMIN_CONNECTION_STRING=... node admin.mjs
import { ServiceBusAdministrationClient } from "@azure/service-bus";
import { run, errorOf } from "./lib.mjs";

const plainHTTP = {
  name: "peeklockPlainHTTP",
  sendRequest(request, next) {
    request.url = request.url.replace(/^https:/, "http:");
    request.allowInsecureConnection = true;
    return next(request);
  },
};

await run(async (client) => {
  const conn = process.env.PEEKLOCK_ADMIN_CONNECTION_STRING;
  if (!conn) throw new Error("PEEKLOCK_ADMIN_CONNECTION_STRING is not set");
  const admin = new ServiceBusAdministrationClient(conn, { retryOptions: { maxRetries: 0 } });
  // The client's pipeline is built from createPipelineFromOptions, which
  // ignores additionalPolicies; add the policy to the built pipeline.
  admin.pipeline.addPolicy(plainHTTP, { afterPhase: "Retry" });
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
